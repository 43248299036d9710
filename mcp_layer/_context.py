"""What a tool, resource or prompt function can do while it runs, in either era."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import pydantic

from jsonrpc_core import InvalidParams, LocalError, RequestContext, RequestType

from ._errors import MissingRequiredClientCapability
from ._methods import NOTIFICATIONS_MESSAGE, NOTIFICATIONS_PROGRESS
from .types import (
    LOGGING_LEVELS,
    ClientCapabilities,
    Implementation,
    LoggingLevel,
    LoggingMessageNotificationParams,
    MCPModel,
    ProgressNotificationParams,
    RequestParams,
    TextContent,
)

if TYPE_CHECKING:
    from ._era import RequestScope
    from ._mrtr import InputRound
    from ._session import ServerSession
    from ._tasks import TaskRecord

    # Elicitation, sampling and roots load when a function first asks for one of them.
    from ._types._elicitation import ElicitResult
    from ._types._roots import ListRootsResult, Root
    from ._types._sampling import CreateMessageResult, SamplingMessage

__all__ = ["Context", "InputRequest"]


@dataclass(frozen=True, slots=True)
class InputRequest:
    """Something a handler asks the client for: an elicitation, a sampling, its roots.

    Build one with `InputRequest.elicit`, `InputRequest.elicit_url`,
    `InputRequest.sample` or `InputRequest.roots`, and ask with `Context.ask`.
    """

    descriptor: RequestType[Any, Any]
    params: MCPModel
    kind: str

    @property
    def method(self) -> str:
        """The method of the request (``elicitation/create``, ...)."""
        return self.descriptor.method

    @classmethod
    def elicit(
        cls, message: str, schema: type[pydantic.BaseModel] | Mapping[str, Any]
    ) -> InputRequest:
        """Form-mode elicitation: ``schema`` is a flat object schema or a pydantic model."""
        if isinstance(schema, type):
            requested = schema.model_json_schema()
            requested.pop("title", None)
        else:
            requested = dict(schema)
        from ._methods import ELICITATION_CREATE
        from ._types._elicitation import ElicitRequestFormParams

        params = ElicitRequestFormParams.model_validate(
            {"mode": "form", "message": message, "requestedSchema": requested}
        )
        return cls(ELICITATION_CREATE, params, "elicitation")

    @classmethod
    def elicit_url(cls, message: str, url: str, elicitation_id: str = "") -> InputRequest:
        """URL-mode elicitation (``elicitation_id`` exists in 2025-11-25 only)."""
        from ._methods import ELICITATION_CREATE
        from ._types._elicitation import ElicitRequestURLParams

        params = ElicitRequestURLParams(
            mode="url", message=message, url=url, elicitation_id=elicitation_id
        )
        return cls(ELICITATION_CREATE, params, "elicitation")

    @classmethod
    def sample(
        cls,
        messages: list[SamplingMessage] | str,
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        **params: Any,
    ) -> InputRequest:
        """A completion from the client's model (``sampling/createMessage``)."""
        from ._methods import SAMPLING_CREATE_MESSAGE
        from ._types._sampling import CreateMessageRequestParams, SamplingMessage

        if isinstance(messages, str):
            messages = [SamplingMessage(role="user", content=TextContent(text=messages))]
        request = CreateMessageRequestParams(
            messages=messages, max_tokens=max_tokens, system_prompt=system_prompt, **params
        )
        return cls(SAMPLING_CREATE_MESSAGE, request, "sampling")

    @classmethod
    def roots(cls) -> InputRequest:
        """The client's roots (``roots/list``)."""
        from ._methods import ROOTS_LIST

        return cls(ROOTS_LIST, RequestParams(), "roots")

    def wire(self, *, modern: bool) -> dict[str, Any]:
        """``{"method", "params"}`` as an entry of ``inputRequests``."""
        params = self.params.model_dump(by_alias=True, exclude_none=True, mode="json")
        if modern and self.kind == "elicitation" and _is_url_mode(self.params):
            params.pop("elicitationId", None)  # removed in 2026-07-28
        return {"method": self.method, "params": params}

    def missing_capability(self, declared: ClientCapabilities) -> dict[str, Any] | None:
        """The capability the client must declare for this request, if it did not."""
        if self.kind == "roots":
            return None if declared.roots is not None else {"roots": {}}
        if self.kind == "sampling":
            sampling = declared.sampling
            if sampling is None:
                return {"sampling": {}}
            params: Any = self.params  # a CreateMessageRequestParams
            if (params.tools or params.tool_choice) and sampling.tools is None:
                return {"sampling": {"tools": {}}}
            return None
        elicitation = declared.elicitation
        if _is_url_mode(self.params):
            ok = elicitation is not None and elicitation.supports_url
            return None if ok else {"elicitation": {"url": {}}}
        ok = elicitation is not None and elicitation.supports_form
        return None if ok else {"elicitation": {}}

    def parse(self, key: str, answer: Any) -> Any:
        """A client's answer, validated (-32602 naming the key if it does not fit)."""
        try:
            return self.descriptor.validate_result(answer)
        except pydantic.ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            raise InvalidParams(
                f"Invalid params: inputResponses.{key}{'.' + where if where else ''}: "
                f"{first['msg']}"
            ) from None


class Context:
    """Handed to any tool, resource or prompt function that declares a ``Context`` parameter.

    Its messages go to the client that made the request, on that request's stream:
    log lines (``notifications/message``), progress (when the client asked for it
    with a ``progressToken``), and questions for the client: sampling, elicitation,
    roots.

    The same function serves both protocol eras. In the handshake era (2025-11-25 and
    earlier) a question is a request to the client, and the call waits for its answer.
    In the 2026-07-28 era it becomes an input request of an ``InputRequiredResult``:
    the function is ended, the client answers and retries, and the function runs again
    from the start with the answer there (see `mcp_layer._mrtr`). So ask questions in a
    deterministic order (or name them with ``key=``), and put side effects after the
    questions, or in `once`.
    """

    def __init__(
        self,
        session: ServerSession,
        request: RequestContext,
        scope: RequestScope | None = None,
        inputs: InputRound | None = None,
    ) -> None:
        self.session = session
        self.request = request
        self.scope = scope if scope is not None else session.legacy_scope(request)
        self.inputs = inputs
        self.task: TaskRecord | None = None
        self.task_starter: Callable[[], TaskRecord] | None = None

    @property
    def request_id(self) -> Any:
        """The id of the request being served."""
        return self.request.request_id

    @property
    def modern(self) -> bool:
        """Whether the request follows 2026-07-28 (per-request metadata, no handshake)."""
        return self.scope.modern

    @property
    def client_info(self) -> Implementation | None:
        """The client's name and version (from ``initialize``, or from this request)."""
        return self.scope.client_info

    @property
    def client_capabilities(self) -> ClientCapabilities:
        """What the client said it supports (for this request, in the 2026 era)."""
        return self.scope.client_capabilities

    @property
    def protocol_version(self) -> str:
        """The protocol revision in use for this request."""
        return self.scope.protocol_version

    @property
    def resumed(self) -> bool:
        """Whether this is a retry carrying a verified ``requestState`` (2026 era)."""
        return self.inputs is not None and self.inputs.resumed

    async def start_task(self) -> bool:
        """Go on as a task (tasks extension): the call answers now with the task, and the
        function keeps running in the background; later questions wait for the client's
        ``tasks/update``. For tools declared ``task_start="explicit"``; elsewhere (the
        handshake era, a client without the extension, a running task) it returns
        ``False`` and changes nothing."""
        if self.task is not None or self.task_starter is None:
            return False
        starter, self.task_starter = self.task_starter, None
        starter()
        await anyio.lowlevel.checkpoint()  # let the call answer before going on
        return True

    @property
    def progress_token(self) -> str | int | None:
        """The ``progressToken`` the client sent with this request, if any."""
        params = self.request.raw_params
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None

    @property
    def cancelled(self) -> bool:
        """Whether the client cancelled this request."""
        return self.request.cancelled

    def close_sse_stream(self) -> bool:
        """End the SSE stream carrying this request's messages, keeping the request alive.

        SSE polling (2025-11-25, SEP-1699): a long-running handler may let go of its HTTP
        response; the client reconnects with ``Last-Event-ID`` after the ``retry`` delay
        and receives what the handler sent meanwhile, including the result. It needs a
        server with an event store (``asgi_app(event_store=...)``) to keep those
        messages; elsewhere (stdio, JSON responses, no event store, the 2026 era) it
        returns ``False`` and does nothing.
        """
        close = getattr(self.request.info, "close_sse_stream", None)
        if close is None:
            return False
        close()
        return True

    # -- logging and progress ----------------------------------------------------------

    def wants_log(self, level: LoggingLevel) -> bool:
        """Whether the client's log level lets a message of ``level`` through.

        In the 2026 era a request without ``io.modelcontextprotocol/logLevel`` gets no
        log messages at all.
        """
        threshold = self.scope.log_level
        if threshold is None:
            return not self.scope.modern
        return LOGGING_LEVELS.index(level) >= LOGGING_LEVELS.index(threshold)

    async def log(self, level: LoggingLevel, data: Any, *, logger: str | None = None) -> None:
        """Send a log message to the client, if its log level lets it through (never
        from a task: the tasks extension has no channel for them)."""
        if self.task is not None or not self.wants_log(level):
            return
        params = LoggingMessageNotificationParams(level=level, logger=logger, data=data)
        await self.request.peer.notify(NOTIFICATIONS_MESSAGE, params)

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``debug``."""
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``info``."""
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``warning``."""
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        """Log at ``error``."""
        await self.log("error", data, logger=logger)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` (nothing if the client did not ask for it, or
        from a task)."""
        token = self.progress_token
        if token is None or self.task is not None:
            return
        params = ProgressNotificationParams(
            progress_token=token, progress=progress, total=total, message=message
        )
        await self.request.peer.notify(NOTIFICATIONS_PROGRESS, params)

    # -- questions for the client -------------------------------------------------------

    async def ask(
        self, requests: Mapping[str, InputRequest], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Ask the client several questions at once; their answers, by key.

        Handshake era: the requests go out concurrently and the call waits for every
        answer. 2026 era: answers the client already gave are returned; if any is
        missing, the request ends with an ``InputRequiredResult`` asking for all the
        missing ones together (the function runs again once they are in). Either era
        refuses, sending nothing, questions the client declared no capability for:
        `jsonrpc_core.LocalError` in the handshake era, -32021 in the 2026 era.
        """
        if self.task is not None:
            self._require_modern(requests)
            return await self.task.ask(requests, self)
        if self.scope.modern:
            return self._answers(requests)
        for request in requests.values():
            self._require_legacy(request)
        results: dict[str, Any] = {}
        peer = self.request.peer

        async def one(key: str, request: InputRequest) -> None:
            results[key] = await peer.request(request.descriptor, request.params, timeout=timeout)

        if len(requests) == 1:
            [(key, request)] = requests.items()
            await one(key, request)
            return results
        async with anyio.create_task_group() as task_group:
            for key, request in requests.items():
                task_group.start_soon(one, key, request)
        return {key: results[key] for key in requests}

    def _require_modern(self, requests: Mapping[str, InputRequest]) -> None:
        required: dict[str, Any] = {}
        for request in requests.values():
            missing = request.missing_capability(self.client_capabilities)
            if missing is not None:
                required.update(missing)
        if required:
            raise MissingRequiredClientCapability.for_capabilities(required)

    def _answers(self, requests: Mapping[str, InputRequest]) -> dict[str, Any]:
        self._require_modern(requests)
        inputs = self.inputs
        if inputs is None:
            raise LocalError(
                f"{self.request.method} cannot ask the client for input in the 2026-07-28 era "
                "(only tools/call, prompts/get and resources/read can)"
            )
        results: dict[str, Any] = {}
        pending: dict[str, dict[str, Any]] = {}
        for key, request in requests.items():
            if key in inputs.answers:
                answer = inputs.answers[key]
                results[key] = request.parse(key, answer)
                inputs.used[key] = answer
            else:
                pending[key] = request.wire(modern=True)
        if pending:
            from ._mrtr import InputRequiredSignal  # loaded: there is an input round

            raise InputRequiredSignal(pending)
        return results

    def _require_legacy(self, request: InputRequest) -> None:
        # Requests back to the client use only what it declared ("Only use capabilities
        # that were successfully negotiated"; for elicitation modes and sampling with
        # tools the spec says MUST NOT outright). A stateless server has no handshake to
        # learn them from, so it tries.
        missing = request.missing_capability(self.client_capabilities)
        if missing is not None and not self.session.stateless:
            feature = request.kind
            if request.kind == "elicitation":
                mode = "url" if _is_url_mode(request.params) else "form"
                feature = f"{mode}-mode elicitation"
            elif "tools" in missing.get("sampling", {}):
                feature = "sampling with tools"
            raise LocalError(f"the client does not support {feature}")

    def _key(self, key: str | None, kind: str) -> str:
        if key is not None:
            return key
        if self.inputs is not None:
            return self.inputs.next_key(kind)
        return kind

    async def _ask_one(self, request: InputRequest, key: str | None, timeout: float | None) -> Any:
        name = self._key(key, request.kind)
        return (await self.ask({name: request}, timeout=timeout))[name]

    async def sample(
        self,
        messages: list[SamplingMessage] | str,
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        timeout: float | None = None,
        key: str | None = None,
        **params: Any,
    ) -> CreateMessageResult:
        """Ask the client's model for a completion (``sampling/createMessage``).

        Refused, sending nothing, if the client did not declare sampling (or
        ``sampling.tools``, for a request with ``tools`` or ``tool_choice``).
        """
        request = InputRequest.sample(
            messages, max_tokens=max_tokens, system_prompt=system_prompt, **params
        )
        result: CreateMessageResult = await self._ask_one(request, key, timeout)
        return result

    async def elicit(
        self,
        message: str,
        schema: type[pydantic.BaseModel] | dict[str, Any],
        *,
        timeout: float | None = None,
        key: str | None = None,
    ) -> ElicitResult:
        """Ask the user for structured input through the client (form mode).

        Refused, sending nothing, if the client did not declare form-mode elicitation.
        """
        result: ElicitResult = await self._ask_one(
            InputRequest.elicit(message, schema), key, timeout
        )
        return result

    async def elicit_url(
        self,
        message: str,
        url: str,
        elicitation_id: str = "",
        *,
        timeout: float | None = None,
        key: str | None = None,
    ) -> ElicitResult:
        """Ask the user to visit ``url`` (URL mode elicitation).

        Refused, sending nothing, if the client did not declare URL-mode elicitation.
        In the 2026 era the retry itself tells that the user is done
        (``elicitation_id`` is not sent).
        """
        request = InputRequest.elicit_url(message, url, elicitation_id)
        result: ElicitResult = await self._ask_one(request, key, timeout)
        return result

    async def list_roots(
        self, *, timeout: float | None = None, key: str | None = None
    ) -> list[Root]:
        """The client's roots (``roots/list``).

        Refused, sending nothing, if the client did not declare roots.
        """
        result: ListRootsResult = await self._ask_one(InputRequest.roots(), key, timeout)
        return list(result.roots)

    async def once(self, key: str, func: Callable[[], Awaitable[Any] | Any]) -> Any:
        """Run ``func`` once per request, even across 2026-era rounds.

        In the 2026 era a function that asks questions runs again on every retry; a
        step wrapped here runs the first time only, and its result (which must be JSON)
        is carried to later rounds in the sealed ``requestState``. Elsewhere it simply
        calls ``func``.
        """
        inputs = self.inputs
        if inputs is not None and key in inputs.steps:
            return inputs.steps[key]
        value = func()
        if inspect.isawaitable(value):
            value = await value
        if inputs is not None:
            inputs.steps[key] = value
        return value


def _is_url_mode(params: MCPModel) -> bool:
    """Whether ``params`` are those of a URL-mode elicitation (no import when the
    elicitation models were never loaded: then they cannot be)."""
    module = sys.modules.get("mcp_layer._types._elicitation")
    return module is not None and isinstance(params, module.ElicitRequestURLParams)
