"""The host's answers to a server's questions (sampling, elicitation, roots), both eras.

A handshake-era server asks with requests (``sampling/createMessage``,
``elicitation/create``, ``roots/list``), answered as they come; a 2026-era server asks
with the ``inputRequests`` of an ``InputRequiredResult``, answered together by
`HostAnswers.answer_input_requests` for the era's next round (`mcp_layer._client_era`).
Capabilities are declared from what the host supplies (`mcp_layer._client` rule 4).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import pydantic

from jsonrpc_core import LocalError, MethodNotFound, RequestContext

from ._call import call
from ._client_era import ClientEra, dump
from ._methods import ELICITATION_CREATE, ROOTS_LIST, SAMPLING_CREATE_MESSAGE
from .types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    ListRootsResult,
    Root,
)

__all__ = [
    "ElicitationHandler",
    "HostAnswers",
    "SamplingHandler",
    "run_callback",
    "with_elicitation_defaults",
]

SamplingHandler = Callable[[CreateMessageRequestParams], Awaitable[CreateMessageResult] | Any]
ElicitationHandler = Callable[[Any], Awaitable[ElicitResult] | Any]

_elicit_params: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ElicitRequestParams)


def with_elicitation_defaults(params: ElicitRequestFormParams, answer: Any) -> Any:
    """``answer`` with the requested schema's defaults filled in for the fields it omits.

    Only an ``accept`` answer is completed; ``decline`` and ``cancel`` carry no content.
    ``answer`` may be an `ElicitResult` or its JSON object form.
    """
    result = answer if isinstance(answer, ElicitResult) else ElicitResult.model_validate(answer)
    if result.action != "accept":
        return result
    content = dict(result.content or {})
    for name, field in params.requested_schema.properties.items():
        if name not in content and field.default is not None:
            content[name] = field.default
    return result.model_copy(update={"content": content})


async def run_callback(callback: Callable[..., Any], *args: Any) -> Any:
    """Call a host callback with positional arguments, as its type says; await it if async."""
    outcome = callback(*args)
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome


class HostAnswers(ClientEra):
    """The session's answers from the host's ``sampling``, ``elicitation`` and ``roots``."""

    sampling: SamplingHandler | None
    elicitation: ElicitationHandler | None
    roots: list[Root] | Callable[[], Awaitable[list[Root]] | list[Root]] | None
    elicitation_defaults: bool

    # -- the server's input requests (2026 era) ------------------------------------------

    async def answer_input_requests(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a server's input requests from the host's handlers, concurrently."""
        answers: dict[str, Any] = {}

        async def answer(key: str, request: Any) -> None:
            answers[key] = dump(await self._answer_input(request))

        async with anyio.create_task_group() as task_group:
            for key, request in requests.items():
                task_group.start_soon(answer, key, request)
        return answers

    async def _answer_input(self, request: Any) -> Any:
        method = request.get("method") if isinstance(request, dict) else None
        params = request.get("params") or {} if isinstance(request, dict) else {}
        if method == SAMPLING_CREATE_MESSAGE.method:
            if self.sampling is None:
                raise LocalError("the server asked for sampling, which this client does not offer")
            return await run_callback(
                self.sampling, CreateMessageRequestParams.model_validate(params)
            )
        if method == ELICITATION_CREATE.method:
            if self.elicitation is None:
                raise LocalError(
                    "the server asked for elicitation, which this client does not offer"
                )
            form = dict(params)
            if "elicitationId" not in form and form.get("mode") == "url":
                form["elicitationId"] = ""
            parsed = _elicit_params.validate_python(form)
            answer = await run_callback(self.elicitation, parsed)
            if self.elicitation_defaults and isinstance(parsed, ElicitRequestFormParams):
                return with_elicitation_defaults(parsed, answer)
            return answer
        if method == ROOTS_LIST.method:
            if self.roots is None:
                raise LocalError("the server asked for roots, which this client does not offer")
            value = await call(self.roots, {}) if callable(self.roots) else self.roots
            return ListRootsResult(roots=list(value))
        raise LocalError(f"the server asked for {method!r}, which no input request may be")

    # -- the server's requests (handshake era) ------------------------------------------

    async def _sample(self, params: CreateMessageRequestParams, ctx: RequestContext) -> Any:
        if self.sampling is None:
            raise MethodNotFound("Sampling is not supported by this client")
        return await run_callback(self.sampling, params)

    async def _elicit(self, params: Any, ctx: RequestContext) -> Any:
        if self.elicitation is None:
            raise MethodNotFound("Elicitation is not supported by this client")
        answer = await run_callback(self.elicitation, params)
        if self.elicitation_defaults and isinstance(params, ElicitRequestFormParams):
            return with_elicitation_defaults(params, answer)
        return answer

    async def _list_roots(self, params: Any, ctx: RequestContext) -> ListRootsResult:
        roots = self.roots
        if roots is None:
            raise MethodNotFound("Roots are not supported by this client")
        value = await call(roots, {}) if callable(roots) else roots
        return ListRootsResult(roots=list(value))
