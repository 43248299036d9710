"""The short path of a prompt turn keeps every rule it shortcuts.

A ``session/prompt`` runs in the request's own cancel scope (no second scope per turn):
``session/cancel`` cancels it through `RequestContext.cancel` with the answer stop reason
``cancelled``, ``$/cancel_request`` still ends it with -32800. A stop reason returned by
the agent is answered with the wire object of its `PromptResponse` (no model per turn).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, get_args

import anyio
import pytest

from acp_layer import Agent, serve_agent
from acp_layer import schema as s
from jsonrpc_core import (
    InternalError,
    MethodRegistry,
    Peer,
    RequestCancelled,
    RequestContext,
    memory_pair,
)

pytestmark = pytest.mark.anyio


# -- RequestContext.cancel (jsonrpc_core) ----------------------------------------------------


@asynccontextmanager
async def _served(registry: MethodRegistry) -> AsyncIterator[Peer]:
    client_end, server_end = memory_pair()
    async with Peer(server_end, registry, name="server"), Peer(client_end) as client:
        yield client


def _waiting_registry() -> tuple[MethodRegistry, list[RequestContext], anyio.Event]:
    """A registry whose ``wait`` handler records its context, sets the event and waits
    until cancelled."""
    contexts: list[RequestContext] = []
    running = anyio.Event()

    async def wait(params: Any, ctx: RequestContext) -> Any:
        contexts.append(ctx)
        running.set()
        await anyio.sleep_forever()

    registry = MethodRegistry()
    registry.on("wait", wait)
    return registry, contexts, running


async def test_ctx_cancel_with_an_answer_answers_with_it() -> None:
    registry, contexts, running = _waiting_registry()
    with anyio.fail_after(10):
        async with _served(registry) as client, anyio.create_task_group() as tg:
            results: list[Any] = []

            async def call() -> None:
                results.append(await client.request("wait", {}))

            tg.start_soon(call)
            await running.wait()
            assert not contexts[0].cancelled
            contexts[0].cancel({"stopped": True})
            assert contexts[0].cancelled
    assert results == [{"stopped": True}]


async def test_ctx_cancel_without_an_answer_is_the_usual_cancellation() -> None:
    registry, contexts, running = _waiting_registry()
    with anyio.fail_after(10):
        async with _served(registry) as client, anyio.create_task_group() as tg:

            async def cancel_soon() -> None:
                await running.wait()
                contexts[0].cancel()

            tg.start_soon(cancel_soon)
            with pytest.raises(RequestCancelled):
                await client.request("wait", {})


async def test_a_handler_that_returns_after_ctx_cancel_answers_with_its_result() -> None:
    async def quick(params: Any, ctx: RequestContext) -> Any:
        ctx.cancel("the cancel answer")  # no checkpoint follows: the handler finishes
        return "own result"

    registry = MethodRegistry()
    registry.on("quick", quick)
    with anyio.fail_after(10):
        async with _served(registry) as client:
            assert await client.request("quick", {}) == "own result"


# -- ACP prompt turns ---------------------------------------------------------------------------


class _TurnAgent(Agent):
    """Each turn does what ``behaviour`` says; ``started`` is set once the turn runs."""

    def __init__(self) -> None:
        self.behaviour: Any = "end_turn"
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.hook_runs: list[str] = []
        self.hook_ran = anyio.Event()

    async def new_session(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        return s.NewSessionResponse(session_id="sess_1")

    async def prompt(self, params: s.PromptRequest) -> Any:
        self.started.set()
        behaviour = self.behaviour
        if behaviour == "wait":
            await anyio.sleep_forever()
        if behaviour == "error after cancel":
            try:
                await anyio.sleep_forever()
            finally:
                raise RuntimeError("aborted")
        if behaviour == "swallow cancel":
            with anyio.CancelScope(shield=True):
                await self.release.wait()
            return "end_turn"
        if behaviour == "after response":

            async def hook() -> None:
                self.hook_runs.append("hook")
                self.hook_ran.set()

            self.client.after_response(hook)
            return "end_turn"
        return behaviour


@asynccontextmanager
async def _agent(agent: _TurnAgent) -> AsyncIterator[Peer]:
    client_end, agent_end = memory_pair()
    registry = MethodRegistry()
    registry.on("session/update", lambda params, ctx: None)
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_agent, agent, agent_end)
        async with Peer(client_end, registry) as client:
            await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            await client.request("session/new", {"cwd": "/tmp", "mcpServers": []})
            yield client
        tg.cancel_scope.cancel()


_PROMPT = {"sessionId": "sess_1", "prompt": [{"type": "text", "text": "hi"}]}


@pytest.mark.parametrize("reason", [*get_args(s.StopReason), None, ""])
async def test_a_returned_stop_reason_is_answered_as_its_prompt_response(reason: Any) -> None:
    agent = _TurnAgent()
    agent.behaviour = reason
    with anyio.fail_after(10):
        async with _agent(agent) as client:
            result = await client.request("session/prompt", _PROMPT)
    expected = s.PromptResponse(stop_reason=reason or "end_turn")
    assert result == expected.model_dump(by_alias=True, exclude_none=True, mode="json")


async def test_a_returned_prompt_response_is_answered_as_it_is() -> None:
    agent = _TurnAgent()
    agent.behaviour = s.PromptResponse(stop_reason="max_tokens", meta={"k": 1})
    with anyio.fail_after(10):
        async with _agent(agent) as client:
            result = await client.request("session/prompt", _PROMPT)
    assert result == {"stopReason": "max_tokens", "_meta": {"k": 1}}


async def test_an_unknown_stop_reason_is_an_internal_error() -> None:
    agent = _TurnAgent()
    agent.behaviour = "tired"
    with anyio.fail_after(10):
        async with _agent(agent) as client:
            with pytest.raises(InternalError):
                await client.request("session/prompt", _PROMPT)
            agent.behaviour = "end_turn"
            assert await client.request("session/prompt", _PROMPT) == {"stopReason": "end_turn"}


async def _prompt_then(client: Peer, agent: _TurnAgent, *notes: tuple[str, Any]) -> Any:
    """Start a prompt turn, send ``notes`` once it runs; the answer (or the error raised)."""
    outcome: list[Any] = []

    async def call() -> None:
        try:
            outcome.append(await client.request("session/prompt", _PROMPT, request_id=77))
        except Exception as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await agent.started.wait()
        for method, params in notes:
            await client.notify(method, params)
    return outcome[0]


_CANCEL = ("session/cancel", {"sessionId": "sess_1"})
_CANCEL_REQUEST = ("$/cancel_request", {"requestId": 77})


async def test_session_cancel_answers_stop_reason_cancelled() -> None:
    agent = _TurnAgent()
    agent.behaviour = "wait"
    with anyio.fail_after(10):
        async with _agent(agent) as client:
            assert await _prompt_then(client, agent, _CANCEL) == {"stopReason": "cancelled"}
            agent.behaviour = "end_turn"
            assert await client.request("session/prompt", _PROMPT) == {"stopReason": "end_turn"}


async def test_an_error_after_session_cancel_still_answers_cancelled() -> None:
    agent = _TurnAgent()
    agent.behaviour = "error after cancel"
    with anyio.fail_after(10):
        async with _agent(agent) as client:
            assert await _prompt_then(client, agent, _CANCEL) == {"stopReason": "cancelled"}


async def test_a_turn_that_ignores_session_cancel_still_answers_cancelled() -> None:
    agent = _TurnAgent()
    agent.behaviour = "swallow cancel"

    async def release_soon() -> None:
        await agent.started.wait()
        # Once every task is blocked the cancel has been sent and handled (and ignored).
        await anyio.wait_all_tasks_blocked()
        agent.release.set()

    with anyio.fail_after(10):
        async with _agent(agent) as client, anyio.create_task_group() as tg:
            tg.start_soon(release_soon)
            assert await _prompt_then(client, agent, _CANCEL) == {"stopReason": "cancelled"}


async def test_cancel_request_answers_32800() -> None:
    agent = _TurnAgent()
    agent.behaviour = "wait"
    with anyio.fail_after(10):
        async with _agent(agent) as client:
            outcome = await _prompt_then(client, agent, _CANCEL_REQUEST)
            assert isinstance(outcome, RequestCancelled) and outcome.code == -32800


async def test_cancel_request_after_session_cancel_still_answers_cancelled() -> None:
    agent = _TurnAgent()
    agent.behaviour = "wait"
    with anyio.fail_after(10):
        async with _agent(agent) as client:
            outcome = await _prompt_then(client, agent, _CANCEL, _CANCEL_REQUEST)
            assert outcome == {"stopReason": "cancelled"}


async def test_after_response_work_of_a_prompt_runs_after_its_answer() -> None:
    agent = _TurnAgent()
    agent.behaviour = "after response"
    with anyio.fail_after(10):
        async with _agent(agent) as client:
            assert await client.request("session/prompt", _PROMPT) == {"stopReason": "end_turn"}
            await agent.hook_ran.wait()
    assert agent.hook_runs == ["hook"]
