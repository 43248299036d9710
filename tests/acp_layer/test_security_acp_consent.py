"""ACP security: `LocalClient` runs an agent's ``terminal/create`` only with the user's consent.

A hostile agent, on a real agent↔client connection (both ends speaking JSON-RPC, both
schema-checked), asks to run commands that would write a marker file. By default nothing
runs; ``commands="allow"`` runs everything; an ask callback sees the exact command, its
real working directory and environment, and decides. A permission the user granted for an
``execute`` tool call in the same turn is consent for one terminal of that turn, and is not
carried into the next. Every refusal is a clear -32602 and the connection keeps serving.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_fixtures.wire import connected, requires_acp_schema

from acp_layer import Agent, LocalClient, TerminalCommand
from acp_layer import schema as s
from jsonrpc_core import JsonRpcError

pytestmark = [
    pytest.mark.anyio,
    requires_acp_schema,
]

INVALID_PARAMS = -32602
REFUSED = "command refused"
EXITED_0 = {"ok": {"exitCode": 0}}
OPTIONS = [
    {"optionId": "yes", "name": "Yes", "kind": "allow_once"},
    {"optionId": "no", "name": "No", "kind": "reject_once"},
]


def marker_script(name: str) -> list[str]:
    """Arguments for the Python interpreter: write ``name`` in the working directory."""
    return ["-c", f"import os, pathlib; pathlib.Path({name!r}).write_text(os.getcwd())"]


class ScriptAgent(Agent):
    """Runs the steps listed in each prompt (JSON) and keeps one answer per step:

    - ``["permission", {"kind": ..., "announce": bool}]`` asks permission for a tool call
      (``announce``: its kind is told in a ``tool_call`` update first, not in the request);
    - ``["run", {"args": [...], "cwd": ..., "env": {...}}]`` creates a terminal running the
      Python interpreter, waits for its exit and releases it.

    An answer is ``{"ok": result}`` or ``{"code": ..., "message": ...}``."""

    def __init__(self) -> None:
        self.results: list[dict[str, Any]] = []
        self.calls = 0

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        block = params.prompt[0]
        assert isinstance(block, s.TextContent)
        sid = params.session_id
        for step, args in json.loads(block.text):
            try:
                if step == "permission":
                    self.results.append({"ok": await self._permission(sid, args)})
                else:
                    self.results.append({"ok": await self._run(sid, args)})
            except JsonRpcError as exc:
                self.results.append({"code": exc.code, "message": exc.message})
        return "end_turn"

    async def _permission(self, sid: str, args: dict[str, Any]) -> Any:
        self.calls += 1
        call_id = f"call_{self.calls}"
        tool_call: dict[str, Any] = {"toolCallId": call_id, "title": "Run a command"}
        if args.get("announce"):
            await self.client.start_tool_call(
                sid, s.ToolCall(tool_call_id=call_id, title="Run", kind=args["kind"])
            )
        elif args.get("kind") is not None:
            tool_call["kind"] = args["kind"]
        return await self.client.peer.request(
            "session/request_permission",
            {"sessionId": sid, "toolCall": tool_call, "options": OPTIONS},
        )

    async def _run(self, sid: str, args: dict[str, Any]) -> Any:
        call: dict[str, Any] = {"sessionId": sid, "command": sys.executable, "args": args["args"]}
        if "cwd" in args:
            call["cwd"] = args["cwd"]
        if "env" in args:
            call["env"] = [{"name": k, "value": v} for k, v in args["env"].items()]
        created = await self.client.peer.request("terminal/create", call)
        terminal = {"sessionId": sid, "terminalId": created["terminalId"]}
        status = await self.client.peer.request("terminal/wait_for_exit", terminal)
        await self.client.peer.request("terminal/release", terminal)
        return status


def listing(directory: Path) -> list[str]:
    """The names in ``directory``, sorted (what the commands left there)."""
    return sorted(p.name for p in directory.iterdir())


def real(path: Path) -> str:
    return os.path.realpath(path)


def run_step(name: str, **extra: Any) -> list[Any]:
    return ["run", {"args": marker_script(name), **extra}]


def permission(kind: str | None, *, announce: bool = False) -> list[Any]:
    return ["permission", {"kind": kind, "announce": announce}]


async def turns(ws: Path, client: LocalClient, *batches: list[list[Any]]) -> list[dict[str, Any]]:
    """Run each batch of steps as one prompt turn; the answers, in order."""
    agent = ScriptAgent()
    with anyio.fail_after(30):
        async with connected(agent, client) as (conn, agent_check, client_check):
            sid = (await conn.new_session(str(ws))).session_id
            for batch in batches:
                assert (await conn.prompt(sid, json.dumps(batch))).stop_reason == "end_turn"
            # Still serving after every refusal: a file written and read back.
            await conn.prompt(sid, json.dumps([]))
    client_check.assert_valid()
    agent_check.assert_valid()
    return agent.results


def assert_refused(answer: dict[str, Any], *fragments: str) -> None:
    assert answer.get("code") == INVALID_PARAMS, answer
    assert REFUSED in answer["message"], answer
    for fragment in fragments:
        assert fragment in answer["message"], answer


async def test_commands_are_refused_by_default(tmp_path: Path) -> None:
    client = LocalClient(permission="allow")
    answers = await turns(
        tmp_path,
        client,
        [run_step("marker.txt"), permission("edit"), run_step("again.txt")],
        [run_step("next-turn.txt")],
    )
    assert_refused(answers[0], "without the user's consent", "marker.txt")
    assert answers[1] == {"ok": {"outcome": {"outcome": "selected", "optionId": "yes"}}}
    assert_refused(answers[2])  # an edit permission is no consent for a command
    assert_refused(answers[3])
    assert listing(tmp_path) == []  # nothing ran
    assert not client.terminals


async def test_allow_runs_every_command(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    answers = await turns(
        tmp_path,
        LocalClient(commands="allow"),
        [run_step("one.txt"), run_step("two.txt", cwd=str(tmp_path / "sub"))],
    )
    assert answers == [EXITED_0] * 2
    assert (tmp_path / "one.txt").read_text() == real(tmp_path)
    assert (tmp_path / "sub" / "two.txt").read_text() == real(tmp_path / "sub")


async def test_the_ask_callback_sees_the_command_and_decides(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    asked: list[TerminalCommand] = []
    answers_to_give = [True, False]

    async def ask(command: TerminalCommand) -> bool:
        asked.append(command)
        return answers_to_give.pop(0)

    answers = await turns(
        tmp_path,
        LocalClient(commands=ask),
        [
            run_step("yes.txt", cwd=f"{tmp_path}/sub/..", env={"GREETING": "hello there"}),
            run_step("no.txt", cwd=str(tmp_path / "sub")),
        ],
    )
    assert answers[0] == EXITED_0
    assert_refused(answers[1], "the user did not allow", "no.txt", real(tmp_path / "sub"))
    assert (tmp_path / "yes.txt").is_file() and not (tmp_path / "sub" / "no.txt").exists()
    first, second = asked
    assert first.command == sys.executable and first.args == tuple(marker_script("yes.txt"))
    assert first.cwd == real(tmp_path)  # the real directory it runs in
    assert first.env == {"GREETING": "hello there"}
    assert first.command_line().startswith("env 'GREETING=hello there' ")
    assert second.cwd == real(tmp_path / "sub") and second.env == {}
    assert shlex.split(second.command_line()) == [sys.executable, *marker_script("no.txt")]


async def test_an_execute_permission_granted_in_the_turn_is_consent_once(tmp_path: Path) -> None:
    asked: list[str] = []

    async def ask(command: TerminalCommand) -> bool:
        asked.append(command.args[1])
        return False

    answers = await turns(
        tmp_path,
        LocalClient(permission="allow", commands=ask),
        # Turn 1: asked permission first: runs without a second question; the grant is
        # used up by that terminal.
        [permission("execute"), run_step("granted.txt"), run_step("second.txt")],
        # Turn 2: last turn's grant is gone.
        [run_step("next-turn.txt")],
        # Turn 3: the kind told in an earlier tool_call update counts too.
        [permission("execute", announce=True), run_step("announced.txt")],
        # Turn 4: a grant with no kind known, or for another kind, is no consent.
        [permission(None), permission("edit"), run_step("no-kind.txt")],
    )
    assert answers[0]["ok"]["outcome"]["optionId"] == "yes"
    assert answers[1] == EXITED_0
    assert_refused(answers[2], "second.txt")
    assert_refused(answers[3], "next-turn.txt")
    assert answers[5] == EXITED_0
    assert_refused(answers[8], "no-kind.txt")
    assert listing(tmp_path) == ["announced.txt", "granted.txt"]
    # Asked only for what had no grant: never twice for a granted command.
    assert asked == [marker_script(n)[1] for n in ("second.txt", "next-turn.txt", "no-kind.txt")]


async def test_a_rejected_execute_permission_is_no_consent(tmp_path: Path) -> None:
    answers = await turns(
        tmp_path,
        LocalClient(permission="reject"),
        [permission("execute"), run_step("marker.txt")],
    )
    assert answers[0]["ok"]["outcome"]["optionId"] == "no"
    assert_refused(answers[1])
    assert listing(tmp_path) == []


class PatientAgent(Agent):
    """Asks for a terminal from a background task and waits for the answer even when the
    turn is cancelled: an agent that neither stops its request nor sends
    ``$/cancel_request``, so only the client can withdraw the question."""

    def __init__(self) -> None:
        self.answer: dict[str, Any] = {}

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        done = anyio.Event()
        call = {"sessionId": params.session_id, "command": sys.executable}

        async def create() -> None:
            try:
                self.answer = {"ok": await self.client.peer.request("terminal/create", call)}
            except JsonRpcError as exc:
                self.answer = {"code": exc.code, "message": exc.message}
            done.set()

        self.client.start_soon(create)
        # Deaf to the cancellation, for a bounded time (a failing test ends, not hangs).
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await done.wait()
        return "end_turn"


async def test_cancelling_the_turn_withdraws_the_question(tmp_path: Path) -> None:
    asked = anyio.Event()

    async def ask_forever(command: TerminalCommand) -> bool:
        asked.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    agent = PatientAgent()
    client = LocalClient(commands=ask_forever)
    with anyio.fail_after(10):
        async with connected(agent, client) as (conn, agent_check, client_check):
            sid = (await conn.new_session(str(tmp_path))).session_id
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(conn.prompt, sid, "run something")
                await asked.wait()
                await conn.cancel(sid)
    assert_refused(agent.answer, "the turn was cancelled")
    assert not client.terminals
    client_check.assert_valid()
    agent_check.assert_valid()


async def test_an_unknown_command_policy_is_refused_when_made() -> None:
    # "reject" is a permission policy: as a command policy it would mean nothing.
    with pytest.raises(ValueError, match="commands must be 'allow', 'deny' or a function"):
        LocalClient(commands="reject")  # type: ignore[arg-type]
