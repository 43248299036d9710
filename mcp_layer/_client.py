"""`ClientSession`: the host's side of an MCP connection, over any transport, either era.

Rules:

1. The era is settled when the session opens. A handshake-era version (the default,
   2025-11-25) performs ``initialize``; a 2026-07-28 version sends ``server/discover``;
   ``"auto"`` probes with ``server/discover`` and falls back to ``initialize`` on any
   answer that is not a recognised 2026-era one (an error, an HTTP 4xx without such an
   error, silence for ``probe_timeout`` seconds). A -32022 naming a version we speak
   retries with it.
2. Handshake era: nothing but ``initialize`` (and ``ping``) is sent before the handshake
   completes, and a server whose protocol version we do not speak is refused.
3. 2026 era: every request carries the envelope (version, client info, capabilities,
   log level) in ``_meta``; over HTTP its headers mirror the body (``Mcp-Method``,
   ``Mcp-Name``, the tool's ``x-mcp-header`` arguments), and tool definitions whose
   ``x-mcp-header`` annotations are invalid are left out of ``tools/list``. An
   ``InputRequiredResult`` is answered from the host's handlers and the request
   retried (``max_input_rounds`` times at most); a task is polled to its end.
   Handshake era: a tool whose ``execution.taskSupport`` is ``"required"`` (or
   ``"optional"``, when asked) is called as a 2025-11-25 task (`mcp_layer._client_tasks`).
4. Capabilities are declared from what the host supplies: a sampling handler, an
   elicitation handler, roots.
5. A call abandoned by timeout or cancellation sends ``notifications/cancelled``
   (over 2026-era HTTP it closes the request's response stream instead).
"""

from __future__ import annotations

import inspect
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Literal

import anyio
import pydantic

from jsonrpc_core import (
    JsonRpcError,
    LocalError,
    Message,
    MessageStream,
    MethodNotFound,
    MethodRegistry,
    Notification,
    Peer,
    Request,
    RequestContext,
    RequestId,
    RequestTimeout,
    RequestType,
    ResultValidationError,
    TransportError,
)

from ._cache import ResultCache
from ._call import call
from ._client_tasks import TaskStatusCallback, follow_task
from ._errors import (
    MCP_ERRORS,
    MODERN_ERROR_CODES,
    HeaderMismatch,
    UnsupportedProtocolVersion,
)
from ._headers import invalid_x_mcp_header, param_headers, request_headers
from ._listen import Subscription
from ._methods import (
    COMPLETION_COMPLETE,
    ELICITATION_CREATE,
    INITIALIZE,
    LOGGING_SET_LEVEL,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_ELICITATION_COMPLETE,
    NOTIFICATIONS_INITIALIZED,
    NOTIFICATIONS_MESSAGE,
    NOTIFICATIONS_PROGRESS,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
    NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
    NOTIFICATIONS_TASKS,
    NOTIFICATIONS_TASKS_STATUS,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    PING,
    PROMPTS_GET,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_UNSUBSCRIBE,
    ROOTS_LIST,
    SAMPLING_CREATE_MESSAGE,
    SERVER_DISCOVER,
    SUBSCRIPTIONS_LISTEN,
    TASKS_CANCEL,
    TASKS_CANCEL_V2,
    TASKS_GET,
    TASKS_GET_V2,
    TASKS_LIST,
    TASKS_UPDATE,
    TOOLS_CALL,
    TOOLS_CALL_TASK,
    TOOLS_LIST,
)
from ._telemetry import MCP_CLIENT_TELEMETRY
from .types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LATEST_MODERN_VERSION,
    LATEST_PROTOCOL_VERSION,
    LOG_LEVEL_META_KEY,
    MODERN_PROTOCOL_VERSIONS,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
    SUPPORTED_PROTOCOL_VERSIONS,
    TASKS_EXTENSION,
    CallToolResult,
    CancelTaskResult,
    ClientCapabilities,
    CompleteResult,
    CreateMessageRequestParams,
    CreateMessageResult,
    DetailedTask,
    DiscoverResult,
    ElicitationCapability,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitResult,
    EmptyResult,
    GetPromptResult,
    GetTaskResult,
    Implementation,
    InitializeResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListRootsResult,
    ListTasksResult,
    ListToolsResult,
    LoggingLevel,
    LoggingMessageNotificationParams,
    ProgressNotificationParams,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Root,
    RootsCapability,
    SamplingCapability,
    ServerCapabilities,
    SubscriptionFilter,
    Task,
    Tool,
)

__all__ = ["ClientSession", "ProtocolVersionError", "with_elicitation_defaults"]

logger = logging.getLogger("mcp_layer.client")

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]
SamplingHandler = Callable[[CreateMessageRequestParams], Awaitable[CreateMessageResult] | Any]
ElicitationHandler = Callable[[Any], Awaitable[ElicitResult] | Any]
NotificationCallback = Callable[[Any], Awaitable[None] | None]

INPUT_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
"""Requests a 2026-era server may answer with an ``InputRequiredResult``."""

_elicit_params: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(ElicitRequestParams)

_TOOLS_CALL_RAW: RequestType[Any, Any] = RequestType("tools/call")
"""A task-augmented ``tools/call``, its answer read raw: a `CreateTaskResult`, or the
tool's result from a server that ran it at once."""


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


async def _run_callback(callback: Callable[..., Any], *args: Any) -> Any:
    """Call a host callback with positional arguments, as its type says; await it if async."""
    outcome = callback(*args)
    if inspect.isawaitable(outcome):
        outcome = await outcome
    return outcome


class ProtocolVersionError(LocalError):
    """The server speaks no protocol version we speak."""


class InputRoundsExceeded(LocalError):
    """The server kept asking for input beyond ``max_input_rounds`` rounds."""


def _cancel_notification(request_id: RequestId, reason: str) -> Notification:
    return Notification(NOTIFICATIONS_CANCELLED.method, {"requestId": request_id, "reason": reason})


def _dump(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        # `model_dump(by_alias=True, exclude_none=True, mode="json")` without its Python
        # wrapper: the 2026-era envelope dumps two models on every request.
        return value.__pydantic_serializer__.to_python(
            value, by_alias=True, exclude_none=True, mode="json"
        )
    return value


class ClientSession:
    """An MCP client connection, opened with ``async with``::

        async with ClientSession(stream) as client:
            tools = await client.list_all_tools()
            result = await client.call_tool("add", {"a": 1, "b": 2})

    ``protocol_version`` picks the era (module rule 1): a handshake-era version (the
    default), a 2026-07-28 version, or ``"auto"``. ``sampling``, ``elicitation`` and
    ``roots`` are the host's answers to the server's questions (requests in the
    handshake era, input requests in the 2026 era); ``on_log``,
    ``on_resource_updated`` and ``on_list_changed`` receive notifications
    (``on_list_changed`` gets "tools", "resources" or "prompts"). With
    ``elicitation_defaults``, an accepted form-mode answer is completed with the
    ``default`` of every requested field it leaves out (SEP-1034). ``cache`` keeps
    2026-era results for as long as their ``ttlMs`` says; ``tasks`` declares the tasks
    extension in the 2026 era (a tool call the server turns into a task is polled to
    its end).

    ``request_timeout`` is every request's total deadline (the handshake's too), from
    its first byte sent to its answer's last byte read, however slowly the server
    sends; a call's own ``timeout`` replaces it (``math.inf``: none for that call).
    Past it the call raises `jsonrpc_core.RequestTimeout`, the request is abandoned
    (module rule 5) and its HTTP response closed. ``None`` (the default for a session
    built on a stream): no deadline; `connect` over HTTP sets it to its ``timeout``.
    """

    def __init__(
        self,
        stream: MessageStream,
        *,
        client_info: Implementation | None = None,
        protocol_version: str = LATEST_PROTOCOL_VERSION,
        sampling: SamplingHandler | None = None,
        elicitation: ElicitationHandler | None = None,
        roots: list[Root] | Callable[[], Awaitable[list[Root]] | list[Root]] | None = None,
        on_log: NotificationCallback | None = None,
        on_resource_updated: NotificationCallback | None = None,
        on_list_changed: Callable[[str], Awaitable[None] | None] | None = None,
        on_elicitation_complete: NotificationCallback | None = None,
        elicitation_defaults: bool = False,
        request_timeout: float | None = None,
        capabilities: ClientCapabilities | None = None,
        probe_timeout: float = 10.0,
        cache: bool = True,
        max_input_rounds: int = 10,
        tasks: bool = True,
    ) -> None:
        self.stream = stream
        self.client_info = client_info or Implementation(name="rpcweave", version="0.1.0")
        self.requested_version = protocol_version
        self.sampling = sampling
        self.elicitation = elicitation
        self.roots = roots
        self.on_log = on_log
        self.on_resource_updated = on_resource_updated
        self.on_list_changed = on_list_changed
        self.on_elicitation_complete = on_elicitation_complete
        self.elicitation_defaults = elicitation_defaults
        self.capabilities = capabilities or self._capabilities()
        self.probe_timeout = probe_timeout
        self.max_input_rounds = max_input_rounds
        self.tasks = tasks
        self.cache: ResultCache | None = ResultCache() if cache else None
        self.server: InitializeResult | None = None
        self.discovery: DiscoverResult | None = None
        self.era: Literal["handshake", "modern"] | None = None
        self.modern_version: str | None = None
        self.log_level: LoggingLevel | None = None
        self._progress: dict[str | int, ProgressCallback] = {}
        self._tokens = itertools.count(1)
        self._tool_schemas: dict[str, Any] = {}
        self._task_support: dict[str, str | None] = {}
        self.task_watches: dict[str, Callable[[Task], Awaitable[None]]] = {}
        """The handshake-era tasks being followed, by id: where their status goes."""
        self._subscriptions: dict[RequestId, Subscription] = {}
        self.peer = Peer(
            stream,
            self._registry(),
            name="mcp-client",
            errors=MCP_ERRORS,
            telemetry=MCP_CLIENT_TELEMETRY,
            answer_cancelled=False,
            on_outgoing_cancel=self._cancel_notification,
            request_timeout=request_timeout,
        )

    @property
    def _http(self) -> bool:
        return hasattr(self.stream, "message_headers")

    def _cancel_notification(self, request_id: RequestId, reason: str) -> Notification | None:
        if self.era == "modern":
            abandon = getattr(self.stream, "abandon", None)
            if self._http and abandon is not None:
                abandon(request_id)  # closing the response stream is the cancellation
                return None
            return _cancel_notification(request_id, reason)
        # "The initialize request MUST NOT be cancelled by clients": until the handshake
        # is done (only initialize and ping go out before it), abandon without a word.
        if self.server is None:
            return None
        return _cancel_notification(request_id, reason)

    def _capabilities(self) -> ClientCapabilities:
        return ClientCapabilities(
            sampling=SamplingCapability() if self.sampling is not None else None,
            elicitation=(
                ElicitationCapability.model_validate({"form": {}, "url": {}})
                if self.elicitation is not None
                else None
            ),
            roots=RootsCapability(list_changed=True) if self.roots is not None else None,
        )

    def _registry(self) -> MethodRegistry:
        registry = MethodRegistry()
        registry.on(PING, lambda params, ctx: EmptyResult())
        registry.on(SAMPLING_CREATE_MESSAGE, self._sample)
        registry.on(ELICITATION_CREATE, self._elicit)
        registry.on(ROOTS_LIST, self._list_roots)
        registry.on(NOTIFICATIONS_MESSAGE, self._log)
        registry.on(NOTIFICATIONS_PROGRESS, self._progress_update)
        registry.on(NOTIFICATIONS_RESOURCES_UPDATED, self._resource_updated)
        registry.on(NOTIFICATIONS_ELICITATION_COMPLETE, self._elicitation_complete)
        registry.on(NOTIFICATIONS_CANCELLED, self._cancelled)
        registry.on(NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, self._acknowledged)
        registry.on(NOTIFICATIONS_TASKS.method, self._task_status)
        registry.on(NOTIFICATIONS_TASKS_STATUS, self._task_status_legacy)
        for kind, descriptor in (
            ("tools", NOTIFICATIONS_TOOLS_LIST_CHANGED),
            ("resources", NOTIFICATIONS_RESOURCES_LIST_CHANGED),
            ("prompts", NOTIFICATIONS_PROMPTS_LIST_CHANGED),
        ):
            registry.on(descriptor, self._list_changed_handler(kind))
        return registry

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> ClientSession:
        await self.peer.__aenter__()
        try:
            await self.open()
        except BaseException:
            # Stop the peer as after a clean exit, then raise the handshake's own error:
            # handing it to the task group would wrap it in an ExceptionGroup.
            await self.peer.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self.peer.__aexit__(exc_type, exc, tb)

    async def open(self) -> None:
        """Settle the era and greet the server (done by ``async with``; module rule 1)."""
        requested = self.requested_version
        if requested in MODERN_PROTOCOL_VERSIONS:
            await self._probe(requested, fallback=False)
        elif requested == "auto":
            await self._probe()
        else:
            await self.initialize()

    async def _probe(self, version: str = LATEST_MODERN_VERSION, *, fallback: bool = True) -> None:
        for attempt in range(2):
            try:
                with anyio.fail_after(self.probe_timeout):
                    await self.discover(version)
                return
            except UnsupportedProtocolVersion as exc:
                mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in exc.supported]
                if mutual and attempt == 0:
                    version = mutual[0]  # retry once, even at the same version
                    continue
                if not fallback:
                    raise
                if any(v in SUPPORTED_PROTOCOL_VERSIONS for v in exc.supported):
                    break
                ours = ", ".join((*MODERN_PROTOCOL_VERSIONS, *SUPPORTED_PROTOCOL_VERSIONS))
                raise ProtocolVersionError(
                    f"the server speaks MCP {', '.join(exc.supported) or '(none named)'}; "
                    f"we speak {ours}"
                ) from None
            except JsonRpcError as exc:
                if exc.code in MODERN_ERROR_CODES or not fallback:
                    raise  # a 2026-era server refusing us: falling back would not help
                break
            except (TransportError, TimeoutError, RequestTimeout, ResultValidationError):
                if not fallback:
                    raise
                break
        self.era = None
        self.discovery = None
        self.modern_version = None
        if self._http:
            self.stream.message_headers = None  # type: ignore[attr-defined]
        await self.initialize()

    async def discover(self, version: str | None = None) -> DiscoverResult:
        """``server/discover`` (2026 era): the server's versions, capabilities, identity.

        Calling it settles the session in the 2026 era at ``version`` (by default the
        one in use, or the newest we speak).
        """
        version = version or self.modern_version or LATEST_MODERN_VERSION
        self._adopt_modern(version)
        raw = await self._modern_request(SERVER_DISCOVER.method, {}, timeout=None)
        result = DiscoverResult.model_validate(raw)
        mutual = [v for v in MODERN_PROTOCOL_VERSIONS if v in result.supported_versions]
        if not mutual:
            raise ProtocolVersionError(
                f"server/discover names {result.supported_versions}; we speak "
                + ", ".join(MODERN_PROTOCOL_VERSIONS)
            )
        if version not in mutual:
            self._adopt_modern(mutual[0])
        self.discovery = result
        return result

    def _adopt_modern(self, version: str) -> None:
        self.era = "modern"
        self.modern_version = version
        if self._http:
            self.stream.message_headers = self._message_headers  # type: ignore[attr-defined]

    async def initialize(self) -> InitializeResult:
        """Perform the handshake (done by ``async with`` in the handshake era)."""
        result = await self.peer.request(
            INITIALIZE,
            {
                "protocolVersion": self.requested_version
                if self.requested_version in SUPPORTED_PROTOCOL_VERSIONS
                else LATEST_PROTOCOL_VERSION,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
        )
        if result.protocol_version not in SUPPORTED_PROTOCOL_VERSIONS:
            raise ProtocolVersionError(
                f"server speaks MCP {result.protocol_version!r}; we speak "
                + ", ".join(SUPPORTED_PROTOCOL_VERSIONS)
            )
        self.server = result
        self.era = "handshake"
        headers = getattr(self.stream, "headers", None)
        if isinstance(headers, dict):
            headers["mcp-protocol-version"] = result.protocol_version
        await self.peer.notify(NOTIFICATIONS_INITIALIZED, {})
        return result

    @property
    def modern(self) -> bool:
        """Whether the session speaks 2026-07-28 (per-request metadata)."""
        return self.era == "modern"

    @property
    def protocol_version(self) -> str:
        """The protocol version in use."""
        if self.era == "modern" and self.modern_version is not None:
            return self.modern_version
        return self.server.protocol_version if self.server else self.requested_version

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server said it supports."""
        if self.discovery is not None:
            return self.discovery.capabilities
        return self.server.capabilities if self.server else ServerCapabilities()

    @property
    def server_info(self) -> Implementation | None:
        """The server's name and version."""
        if self.discovery is not None:
            info = (self.discovery.meta or {}).get(SERVER_INFO_META_KEY)
            try:
                return Implementation.model_validate(info) if info is not None else None
            except pydantic.ValidationError:
                return None
        return self.server.server_info if self.server else None

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if it gave any."""
        if self.discovery is not None:
            return self.discovery.instructions
        return self.server.instructions if self.server else None

    async def ping(self, *, timeout: float | None = None) -> None:
        """Check that the server answers (handshake era; 2026-07-28 has no ``ping``)."""
        if self.modern:
            raise LocalError("ping does not exist in MCP 2026-07-28")
        await self.peer.request(PING, {}, timeout=self._timeout(timeout))

    def _timeout(self, timeout: float | None) -> float | None:
        """A call's deadline: its own ``timeout``, else the session's ``request_timeout``
        (a call's ``None`` used to mean no deadline, which left ``request_timeout``
        unused by every call that takes a ``timeout``)."""
        return self.peer.request_timeout if timeout is None else timeout

    # -- the 2026-era request path --------------------------------------------------------

    def modern_capabilities(self) -> dict[str, Any]:
        """The ``clientCapabilities`` every 2026-era request carries."""
        declared: dict[str, Any] = _dump(self.capabilities)
        declared.pop("tasks", None)  # the 2025-11-25 experimental tasks
        roots = declared.get("roots")
        if isinstance(roots, dict):
            roots.pop("listChanged", None)  # notifications/roots/list_changed is gone
        if self.tasks:
            extensions = declared.setdefault("extensions", {})
            extensions.setdefault(TASKS_EXTENSION, {})
        return declared

    def envelope(self) -> dict[str, Any]:
        """The ``_meta`` members of a 2026-era request."""
        meta: dict[str, Any] = {
            PROTOCOL_VERSION_META_KEY: self.modern_version or LATEST_MODERN_VERSION,
            CLIENT_INFO_META_KEY: _dump(self.client_info),
            CLIENT_CAPABILITIES_META_KEY: self.modern_capabilities(),
        }
        if self.log_level is not None:
            meta[LOG_LEVEL_META_KEY] = self.log_level
        return meta

    def _message_headers(self, payload: Message | list[Message]) -> dict[str, str]:
        if not isinstance(payload, Request):
            return {}
        version = self.modern_version or LATEST_MODERN_VERSION
        params = payload.params if isinstance(payload.params, dict) else {}
        headers = request_headers(payload.method, params, version)
        if payload.method == "tools/call":
            schema = self._tool_schemas.get(params.get("name", ""))
            if schema is not None:
                headers.update(param_headers(schema, params.get("arguments") or {}))
        return headers

    async def _modern_request(
        self, method: str, params: dict[str, Any], *, timeout: float | None
    ) -> dict[str, Any]:
        params = dict(params)
        params["_meta"] = {**self.envelope(), **params.get("_meta", {})}
        raw = await self.peer.request(method, params, timeout=self._timeout(timeout))
        if not isinstance(raw, dict):
            raise ResultValidationError(f"{method}: the result is not an object")
        return raw

    async def _request(
        self,
        descriptor: RequestType[Any, Any],
        params: dict[str, Any],
        *,
        timeout: float | None = None,
    ) -> Any:
        """Send a request in the session's era; 2026 era: answer input requests, follow
        a task to its end (module rule 3)."""
        if not self.modern:
            return await self.peer.request(descriptor, params, timeout=self._timeout(timeout))
        method = descriptor.method
        base = dict(params)
        raw = await self._modern_request(method, base, timeout=timeout)
        rounds = 0
        while True:
            kind = raw.get("resultType", "complete")
            if kind == "complete":
                break
            if kind == "task" and method == "tools/call":
                raw = await self._follow_task(raw, timeout=timeout)
                break
            if kind != "input_required" or method not in INPUT_METHODS:
                raise ResultValidationError(f"{method}: unexpected resultType {kind!r}")
            rounds += 1
            if rounds > self.max_input_rounds:
                raise InputRoundsExceeded(
                    f"{method}: the server still asks for input after {self.max_input_rounds} "
                    "rounds"
                )
            retry = dict(base)
            requests = raw.get("inputRequests")
            if requests:
                retry["inputResponses"] = await self.answer_input_requests(requests)
            else:
                await anyio.sleep(0.05 * rounds)  # only a requestState: back off a little
            if "requestState" in raw:
                retry["requestState"] = raw["requestState"]
            raw = await self._modern_request(method, retry, timeout=timeout)
        try:
            return descriptor.validate_result(raw)
        except pydantic.ValidationError as exc:
            raise ResultValidationError(
                f"{method}: the result does not match its declared type: {exc}"
            ) from None

    async def answer_input_requests(self, requests: Mapping[str, Any]) -> dict[str, Any]:
        """Answer a server's input requests from the host's handlers, concurrently."""
        answers: dict[str, Any] = {}

        async def answer(key: str, request: Any) -> None:
            answers[key] = _dump(await self._answer_input(request))

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
            return await _run_callback(
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
            answer = await _run_callback(self.elicitation, parsed)
            if self.elicitation_defaults and isinstance(parsed, ElicitRequestFormParams):
                return with_elicitation_defaults(parsed, answer)
            return answer
        if method == ROOTS_LIST.method:
            if self.roots is None:
                raise LocalError("the server asked for roots, which this client does not offer")
            value = await call(self.roots, {}) if callable(self.roots) else self.roots
            return ListRootsResult(roots=list(value))
        raise LocalError(f"the server asked for {method!r}, which no input request may be")

    async def _follow_task(
        self, created: dict[str, Any], *, timeout: float | None
    ) -> dict[str, Any]:
        task_id = created.get("taskId")
        if not isinstance(task_id, str):
            raise ResultValidationError("tools/call: a task result without a taskId")
        answered: set[str] = set()
        task = created
        while True:
            status = task.get("status")
            if status == "completed":
                result = task.get("result")
                if not isinstance(result, dict):
                    raise ResultValidationError("tasks/get: a completed task without a result")
                return result
            if status == "failed":
                error = task.get("error") or {}
                raise (
                    MCP_ERRORS.from_object(error)
                    if isinstance(error, dict)
                    else LocalError("the task failed")
                )
            if status == "cancelled":
                raise LocalError(f"task {task_id} was cancelled")
            if status == "input_required":
                pending = {
                    k: v for k, v in (task.get("inputRequests") or {}).items() if k not in answered
                }
                if pending:
                    responses = await self.answer_input_requests(pending)
                    answered.update(responses)
                    await self._modern_request(
                        TASKS_UPDATE.method,
                        {"taskId": task_id, "inputResponses": responses},
                        timeout=timeout,
                    )
            else:
                interval = task.get("pollIntervalMs")
                delay = interval / 1000 if isinstance(interval, int) and interval > 0 else 0.5
                await anyio.sleep(min(delay, 5.0))
            task = await self._modern_request(
                TASKS_GET_V2.method, {"taskId": task_id}, timeout=timeout
            )

    async def get_task(self, task_id: str) -> DetailedTask | GetTaskResult:
        """``tasks/get``: the task's state; in the 2026 era (tasks extension) a
        `DetailedTask` (its result inlined when done), in the handshake era a
        `GetTaskResult` (2025-11-25 tasks; the result comes from `get_task_result`)."""
        if not self.modern:
            result: GetTaskResult = await self.peer.request(
                TASKS_GET, {"taskId": task_id}, timeout=self._timeout(None)
            )
            return result
        raw = await self._modern_request(TASKS_GET_V2.method, {"taskId": task_id}, timeout=None)
        return DetailedTask.model_validate(raw)

    async def cancel_task(self, task_id: str) -> CancelTaskResult | None:
        """``tasks/cancel``: ask the server to stop a task; in the handshake era the
        answer is the task, now ``cancelled`` (a terminal task is refused, -32602)."""
        if not self.modern:
            cancelled: CancelTaskResult = await self.peer.request(
                TASKS_CANCEL, {"taskId": task_id}, timeout=self._timeout(None)
            )
            return cancelled
        await self._modern_request(TASKS_CANCEL_V2.method, {"taskId": task_id}, timeout=None)
        return None

    async def get_task_result(self, task_id: str, *, timeout: float | None = None) -> Any:
        """``tasks/result`` (handshake era): wait for a task's end and return its result
        (a `CallToolResult` for a tool call), or raise its JSON-RPC error."""
        raw = await self.peer.request(
            "tasks/result", {"taskId": task_id}, timeout=self._timeout(timeout)
        )
        return TOOLS_CALL.validate_result(raw)

    async def list_tasks(self, cursor: str | None = None) -> ListTasksResult:
        """``tasks/list`` (handshake era): one page of this client's tasks."""
        params = {"cursor": cursor} if cursor else {}
        result: ListTasksResult = await self.peer.request(
            TASKS_LIST, params, timeout=self._timeout(None)
        )
        return result

    async def _cached(
        self, descriptor: RequestType[Any, Any], key: str, params: dict[str, Any]
    ) -> Any:
        cache = self.cache if self.modern else None
        if cache is not None:
            hit = cache.get(descriptor.method, key)
            if hit is not None:
                return hit
        result = await self._request(descriptor, params)
        if cache is not None:
            cache.put(descriptor.method, key, result)
        return result

    # -- tools ---------------------------------------------------------------------------

    async def list_tools(self, cursor: str | None = None) -> ListToolsResult:
        """One page of tools."""
        params = {"cursor": cursor} if cursor else {}
        result: ListToolsResult = await self._cached(TOOLS_LIST, cursor or "", params)
        if not self.modern:
            for tool in result.tools:
                execution = tool.execution
                self._task_support[tool.name] = execution.task_support if execution else None
            return result
        accepted = []
        for tool in result.tools:
            problem = invalid_x_mcp_header(tool.input_schema) if self._http else None
            if problem is not None:
                logger.warning("tool %r left out: %s", tool.name, problem)
                self._tool_schemas.pop(tool.name, None)
                continue
            self._tool_schemas[tool.name] = tool.input_schema
            accepted.append(tool)
        if len(accepted) == len(result.tools):
            return result
        return result.model_copy(update={"tools": accepted})

    async def list_all_tools(self) -> list[Tool]:
        """Every tool, following ``nextCursor``."""
        tools: list[Tool] = []
        cursor: str | None = None
        while True:
            page = await self.list_tools(cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        meta: dict[str, Any] | None = None,
        as_task: bool | None = None,
        task_ttl: int | None = None,
        on_task_status: TaskStatusCallback | None = None,
    ) -> CallToolResult:
        """Call a tool; ``progress(progress, total, message)`` gets progress updates.

        Handshake era, on a server that declares ``tasks.requests.tools.call``
        (2025-11-25 tasks): a tool whose ``execution.taskSupport`` is ``"required"``
        runs as a task, and so does an ``"optional"`` one with ``as_task=True``
        (``as_task=False``: never). The result is the tool's, as for a plain call;
        ``on_task_status(task)`` gets each new state of the task (``working`` with
        the server's status message, ``input_required``, ...), ``task_ttl`` asks the
        server to keep the task that many milliseconds, and a call abandoned before
        the end cancels the task (``tasks/cancel``). ``as_task=True`` for a tool or a
        server without task support raises `jsonrpc_core.LocalError`. In the 2026 era
        the server decides (the session's ``tasks`` option).
        """
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if not self.modern and await self._as_task(name, as_task):
            params["task"] = {} if task_ttl is None else {"ttl": task_ttl}

            async def follow(answer: Any) -> CallToolResult:
                raw = answer
                if isinstance(answer, dict) and "task" in answer:
                    created = TOOLS_CALL_TASK.validate_result(answer)
                    raw = await follow_task(
                        self, created, timeout=timeout, on_status=on_task_status
                    )
                # else the server answered at once, as a plain call
                result: CallToolResult = TOOLS_CALL.validate_result(raw)
                return result

            task_result: CallToolResult = await self._with_progress(
                _TOOLS_CALL_RAW, params, timeout, progress, meta, then=follow
            )
            return task_result
        try:
            result: CallToolResult = await self._with_progress(
                TOOLS_CALL, params, timeout, progress, meta
            )
        except HeaderMismatch:
            if not (self.modern and self._http):
                raise
            # The tool's x-mcp-header annotations may have changed: relist, retry once.
            if self.cache is not None:
                self.cache.invalidate(TOOLS_LIST.method)
            await self.list_all_tools()
            result = await self._with_progress(TOOLS_CALL, params, timeout, progress, meta)
        return result

    async def _with_progress(
        self,
        descriptor: Any,
        params: dict[str, Any],
        timeout: float | None,
        progress: ProgressCallback | None,
        meta: dict[str, Any] | None,
        then: Callable[[Any], Awaitable[Any]] | None = None,
    ) -> Any:
        meta = dict(meta or {})
        token: int | None = None
        if progress is not None:
            token = next(self._tokens)
            meta["progressToken"] = token
            self._progress[token] = progress
        if meta:
            params["_meta"] = meta
        try:
            result = await self._request(descriptor, params, timeout=timeout)
            # `then` (a task followed to its end) runs while the progress token holds.
            return result if then is None else await then(result)
        finally:
            if token is not None:
                self._progress.pop(token, None)

    async def _as_task(self, name: str, as_task: bool | None) -> bool:
        """Whether a handshake-era call of tool ``name`` goes as a task (see `call_tool`)."""
        if as_task is False:
            return False
        tasks = self.server_capabilities.tasks
        requests = tasks.requests if tasks is not None else None
        if requests is None or requests.tools is None or requests.tools.call is None:
            if as_task:
                raise LocalError("the server does not support task-augmented tools/call")
            return False
        if name not in self._task_support:
            await self.list_all_tools()  # learn the tool's execution.taskSupport
        support = self._task_support.get(name)
        if as_task and support not in ("optional", "required"):
            raise LocalError(f"tool {name!r} does not support running as a task")
        return support == "required" or (bool(as_task) and support == "optional")

    # -- resources -----------------------------------------------------------------------

    async def list_resources(self, cursor: str | None = None) -> ListResourcesResult:
        """One page of resources."""
        params = {"cursor": cursor} if cursor else {}
        result: ListResourcesResult = await self._cached(RESOURCES_LIST, cursor or "", params)
        return result

    async def list_all_resources(self) -> list[Resource]:
        """Every resource, following ``nextCursor``."""
        resources: list[Resource] = []
        cursor: str | None = None
        while True:
            page = await self.list_resources(cursor)
            resources.extend(page.resources)
            cursor = page.next_cursor
            if not cursor:
                return resources

    async def list_resource_templates(
        self, cursor: str | None = None
    ) -> ListResourceTemplatesResult:
        """One page of resource templates."""
        params = {"cursor": cursor} if cursor else {}
        result: ListResourceTemplatesResult = await self._cached(
            RESOURCES_TEMPLATES_LIST, cursor or "", params
        )
        return result

    async def list_all_resource_templates(self) -> list[ResourceTemplate]:
        """Every resource template, following ``nextCursor``."""
        templates: list[ResourceTemplate] = []
        cursor: str | None = None
        while True:
            page = await self.list_resource_templates(cursor)
            templates.extend(page.resource_templates)
            cursor = page.next_cursor
            if not cursor:
                return templates

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ReadResourceResult:
        """Read a resource."""
        cache = self.cache if self.modern else None
        if cache is not None:
            hit = cache.get(RESOURCES_READ.method, uri)
            if hit is not None:
                return hit  # type: ignore[no-any-return]
        result: ReadResourceResult = await self._request(
            RESOURCES_READ, {"uri": uri}, timeout=timeout
        )
        if cache is not None and result.result_type in (None, "complete"):
            cache.put(RESOURCES_READ.method, uri, result)
        return result

    async def subscribe_resource(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (handshake era;
        in the 2026 era, `listen` with ``resource_uris``)."""
        if self.modern:
            raise LocalError("resources/subscribe does not exist in 2026-07-28: use listen()")
        await self.peer.request(RESOURCES_SUBSCRIBE, {"uri": uri})

    async def unsubscribe_resource(self, uri: str) -> None:
        """Stop updates about ``uri`` (handshake era)."""
        if self.modern:
            raise LocalError("resources/unsubscribe does not exist in 2026-07-28")
        await self.peer.request(RESOURCES_UNSUBSCRIBE, {"uri": uri})

    # -- prompts, completion, logging ---------------------------------------------------

    async def list_prompts(self, cursor: str | None = None) -> ListPromptsResult:
        """One page of prompts."""
        params = {"cursor": cursor} if cursor else {}
        result: ListPromptsResult = await self._cached(PROMPTS_LIST, cursor or "", params)
        return result

    async def list_all_prompts(self) -> list[Prompt]:
        """Every prompt, following ``nextCursor``."""
        prompts: list[Prompt] = []
        cursor: str | None = None
        while True:
            page = await self.list_prompts(cursor)
            prompts.extend(page.prompts)
            cursor = page.next_cursor
            if not cursor:
                return prompts

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None
    ) -> GetPromptResult:
        """Render a prompt."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = arguments
        result: GetPromptResult = await self._request(PROMPTS_GET, params)
        return result

    async def complete(
        self,
        ref: dict[str, Any],
        argument: dict[str, str],
        context: dict[str, Any] | None = None,
    ) -> CompleteResult:
        """Ask for completions of an argument of a prompt or resource template."""
        params: dict[str, Any] = {"ref": ref, "argument": argument}
        if context is not None:
            params["context"] = context
        result: CompleteResult = await self._request(COMPLETION_COMPLETE, params)
        return result

    async def set_logging_level(self, level: LoggingLevel) -> None:
        """Ask the server to send log messages of ``level`` and above (2026 era: on
        every later request, through ``_meta``)."""
        self.log_level = level
        if not self.modern:
            await self.peer.request(LOGGING_SET_LEVEL, {"level": level})

    async def send_roots_list_changed(self) -> None:
        """Tell the server our roots changed (handshake era; 2026-07-28 has no such
        notification: the server asks for the roots when it needs them)."""
        if not self.modern:
            await self.peer.notify(NOTIFICATIONS_ROOTS_LIST_CHANGED, {})

    # -- subscriptions (2026 era) -----------------------------------------------------

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: list[str] | None = None,
        task_ids: list[str] | None = None,
        max_buffered: int = 64,
    ) -> AsyncIterator[Subscription]:
        """Open a ``subscriptions/listen`` stream (2026 era) for the changes named.

        Yields a `Subscription` once the server acknowledged it: iterate it for the
        notifications (``(method, params)``); its ``agreed`` filter says what the server
        will send. Leaving the block cancels the subscription.
        """
        if not self.modern:
            raise LocalError("subscriptions/listen exists in 2026-07-28 only")
        wanted = SubscriptionFilter(
            tools_list_changed=tools or None,
            prompts_list_changed=prompts or None,
            resources_list_changed=resources or None,
            resource_subscriptions=resource_uris,
            task_ids=task_ids,
        )
        request_id = self.peer.new_request_id()
        subscription = Subscription(request_id, max_buffered)
        self._subscriptions[request_id] = subscription
        params = {"_meta": self.envelope(), "notifications": _dump(wanted)}
        try:
            async with anyio.create_task_group() as task_group:

                async def run() -> None:
                    try:
                        await self.peer.request(
                            SUBSCRIPTIONS_LISTEN.method, params, request_id=request_id, timeout=None
                        )
                        subscription.end(None)
                    except Exception as exc:
                        subscription.end(exc)

                task_group.start_soon(run)
                await subscription.wait_acknowledged()
                try:
                    yield subscription
                finally:
                    task_group.cancel_scope.cancel()
        finally:
            self._subscriptions.pop(request_id, None)

    def _subscription_for(self, params: Any) -> Subscription | None:
        meta = getattr(params, "meta", None)
        if meta is None and isinstance(params, dict):
            meta = params.get("_meta")
        if not isinstance(meta, dict) or SUBSCRIPTION_ID_META_KEY not in meta:
            return None
        return self._subscriptions.get(meta[SUBSCRIPTION_ID_META_KEY])

    def _acknowledged(self, params: Any, ctx: RequestContext) -> None:
        subscription = self._subscription_for(params)
        if subscription is not None:
            subscription.acknowledge(params.notifications)

    async def _deliver(self, method: str, params: Any) -> None:
        subscription = self._subscription_for(params)
        if subscription is not None:
            await subscription.deliver(method, params)

    async def _task_status(self, params: Any, ctx: RequestContext) -> None:
        await self._deliver(NOTIFICATIONS_TASKS.method, params)

    async def _task_status_legacy(self, params: Any, ctx: RequestContext) -> None:
        watch = self.task_watches.get(params.task_id)
        if watch is not None:
            await watch(params)

    # -- the server's requests and notifications ----------------------------------------

    async def _sample(self, params: CreateMessageRequestParams, ctx: RequestContext) -> Any:
        if self.sampling is None:
            raise MethodNotFound("Sampling is not supported by this client")
        return await _run_callback(self.sampling, params)

    async def _elicit(self, params: Any, ctx: RequestContext) -> Any:
        if self.elicitation is None:
            raise MethodNotFound("Elicitation is not supported by this client")
        answer = await _run_callback(self.elicitation, params)
        if self.elicitation_defaults and isinstance(params, ElicitRequestFormParams):
            return with_elicitation_defaults(params, answer)
        return answer

    async def _list_roots(self, params: Any, ctx: RequestContext) -> ListRootsResult:
        roots = self.roots
        if roots is None:
            raise MethodNotFound("Roots are not supported by this client")
        value = await call(roots, {}) if callable(roots) else roots
        return ListRootsResult(roots=list(value))

    async def _log(self, params: LoggingMessageNotificationParams, ctx: RequestContext) -> None:
        if self.on_log is not None:
            await _run_callback(self.on_log, params)
        else:
            logger.info("server log [%s] %s: %s", params.level, params.logger or "-", params.data)

    async def _progress_update(
        self, params: ProgressNotificationParams, ctx: RequestContext
    ) -> None:
        callback = self._progress.get(params.progress_token)
        if callback is not None:
            await _run_callback(callback, params.progress, params.total, params.message)

    async def _resource_updated(self, params: Any, ctx: RequestContext) -> None:
        if self.cache is not None:
            self.cache.invalidate(RESOURCES_READ.method, params.uri)
        await self._deliver(NOTIFICATIONS_RESOURCES_UPDATED.method, params)
        if self.on_resource_updated is not None:
            await _run_callback(self.on_resource_updated, params)

    async def _elicitation_complete(self, params: Any, ctx: RequestContext) -> None:
        if self.on_elicitation_complete is not None:
            await _run_callback(self.on_elicitation_complete, params)

    def _cancelled(self, params: Any, ctx: RequestContext) -> None:
        if params.request_id is not None:
            self.peer.cancel_incoming(params.request_id)

    def _list_changed_handler(self, kind: str) -> Callable[[Any, RequestContext], Awaitable[None]]:
        methods = {
            "tools": (TOOLS_LIST.method, NOTIFICATIONS_TOOLS_LIST_CHANGED.method),
            "resources": (
                RESOURCES_LIST.method,
                NOTIFICATIONS_RESOURCES_LIST_CHANGED.method,
            ),
            "prompts": (PROMPTS_LIST.method, NOTIFICATIONS_PROMPTS_LIST_CHANGED.method),
        }
        list_method, notification = methods[kind]

        async def handle(params: Any, ctx: RequestContext) -> None:
            if self.cache is not None:
                self.cache.invalidate(list_method)
                if kind == "resources":
                    self.cache.invalidate(RESOURCES_TEMPLATES_LIST.method)
            await self._deliver(notification, params)
            if self.on_list_changed is not None:
                await _run_callback(self.on_list_changed, kind)

        return handle
