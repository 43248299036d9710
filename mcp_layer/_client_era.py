"""The era of a `ClientSession`: how it opens, and how each request goes out and comes back.

It keeps rules 1, 2, 3 and 5 of `mcp_layer._client` (written there once): the era
settled when the session opens (``initialize``, ``server/discover`` or the ``"auto"``
probe), nothing but the handshake before it completes, the 2026-era envelope and its
HTTP headers, input rounds and task polling, and the cancellation of an abandoned call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import anyio
import pydantic

from jsonrpc_core import (
    JsonRpcError,
    LocalError,
    Message,
    MessageStream,
    Notification,
    Peer,
    Request,
    RequestId,
    RequestTimeout,
    RequestType,
    ResultValidationError,
    TransportError,
)

from ._cache import ResultCache
from ._errors import MCP_ERRORS, MODERN_ERROR_CODES, UnsupportedProtocolVersion
from ._headers import param_headers, request_headers
from ._methods import (
    INITIALIZE,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_INITIALIZED,
    SERVER_DISCOVER,
    TASKS_GET_V2,
    TASKS_UPDATE,
)
from .types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LATEST_MODERN_VERSION,
    LATEST_PROTOCOL_VERSION,
    LOG_LEVEL_META_KEY,
    MODERN_PROTOCOL_VERSIONS,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    SUPPORTED_PROTOCOL_VERSIONS,
    TASKS_EXTENSION,
    ClientCapabilities,
    DiscoverResult,
    Implementation,
    InitializeResult,
    LoggingLevel,
    ServerCapabilities,
)

__all__ = [
    "INPUT_METHODS",
    "ClientEra",
    "InputRoundsExceeded",
    "ProtocolVersionError",
    "cancel_notification",
    "dump",
]

INPUT_METHODS = frozenset({"tools/call", "prompts/get", "resources/read"})
"""Requests a 2026-era server may answer with an ``InputRequiredResult``."""


class ProtocolVersionError(LocalError):
    """The server speaks no protocol version we speak."""


class InputRoundsExceeded(LocalError):
    """The server kept asking for input beyond ``max_input_rounds`` rounds."""


def cancel_notification(request_id: RequestId, reason: str) -> Notification:
    """The ``notifications/cancelled`` for an abandoned request."""
    return Notification(NOTIFICATIONS_CANCELLED.method, {"requestId": request_id, "reason": reason})


def dump(value: Any) -> Any:
    """A model's JSON object form (aliases, no ``None`` members); anything else as it is."""
    if isinstance(value, pydantic.BaseModel):
        # `model_dump(by_alias=True, exclude_none=True, mode="json")` without its Python
        # wrapper: the 2026-era envelope dumps two models on every request.
        return value.__pydantic_serializer__.to_python(
            value, by_alias=True, exclude_none=True, mode="json"
        )
    return value


class ClientEra:
    """The era part of `ClientSession`, the base of its feature methods.

    What the feature methods call (the era's interface):

    - `open` settles the era (rules 1 and 2); `modern`, `protocol_version`,
      `server_capabilities`, `server_info` and `instructions` say what it settled;
    - `_request` sends a request in the session's era and reads its answer, validated
      as its descriptor says (2026 era: the envelope added, input requests answered, a
      task followed to its end; rule 3); `_cached` does so through the 2026-era result
      cache; `_modern_request` sends one 2026-era request and returns its raw answer;
    - `envelope` is the ``_meta`` of a 2026-era request sent another way
      (``subscriptions/listen``); `_timeout` is a call's deadline.

    What it needs from the session: the state declared below (set by
    `ClientSession.__init__`) and `answer_input_requests` (the host's answers,
    `mcp_layer._client_host`). Every method is looked up on the session's class as
    before the split: the request path has no extra call.
    """

    stream: MessageStream
    peer: Peer
    client_info: Implementation
    requested_version: str
    capabilities: ClientCapabilities
    probe_timeout: float
    max_input_rounds: int
    tasks: bool
    cache: ResultCache | None
    server: InitializeResult | None
    discovery: DiscoverResult | None
    era: Literal["handshake", "modern"] | None
    modern_version: str | None
    log_level: LoggingLevel | None
    _tool_schemas: dict[str, Any]
    """The input schema of each listed tool, by name (its ``x-mcp-header`` arguments)."""

    if TYPE_CHECKING:

        async def answer_input_requests(self, requests: Mapping[str, Any]) -> dict[str, Any]:
            """The host's answers (`mcp_layer._client_host.HostAnswers`)."""
            raise NotImplementedError

    # -- settling the era (rules 1, 2 and 5) ---------------------------------------------

    @property
    def _http(self) -> bool:
        return hasattr(self.stream, "message_headers")

    def _cancel_notification(self, request_id: RequestId, reason: str) -> Notification | None:
        if self.era == "modern":
            abandon = getattr(self.stream, "abandon", None)
            if self._http and abandon is not None:
                abandon(request_id)  # closing the response stream is the cancellation
                return None
            return cancel_notification(request_id, reason)
        # "The initialize request MUST NOT be cancelled by clients": until the handshake
        # is done (only initialize and ping go out before it), abandon without a word.
        if self.server is None:
            return None
        return cancel_notification(request_id, reason)

    async def open(self) -> None:
        """Settle the era and greet the server (done by ``async with``; rule 1 of
        `mcp_layer._client`)."""
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

    def _timeout(self, timeout: float | None) -> float | None:
        """A call's deadline: its own ``timeout``, else the session's ``request_timeout``
        (a call's ``None`` used to mean no deadline, which left ``request_timeout``
        unused by every call that takes a ``timeout``)."""
        return self.peer.request_timeout if timeout is None else timeout

    # -- the 2026-era request path --------------------------------------------------------

    def modern_capabilities(self) -> dict[str, Any]:
        """The ``clientCapabilities`` every 2026-era request carries."""
        declared: dict[str, Any] = dump(self.capabilities)
        declared.pop("tasks", None)  # the 2025-11-25 experimental tasks
        roots = declared.get("roots")
        if isinstance(roots, dict):
            roots.pop("listChanged", None)  # notifications/roots/list_changed is gone
        if self.tasks:
            extensions = declared.setdefault("extensions", {})
            extensions.setdefault(TASKS_EXTENSION, {})
        return declared

    _envelope: tuple[tuple[Any, ...], dict[str, Any]] | None = None
    """The last envelope made, and what it was made of (`envelope`)."""

    def envelope(self) -> dict[str, Any]:
        """The ``_meta`` members of a 2026-era request (a new dict each time; its
        members are made again only when what they are made of was set anew)."""
        info, capabilities = self.client_info, self.capabilities
        made_of = (
            self.modern_version,
            self.log_level,
            self.tasks,
            info,
            capabilities,
            info.__dict__,
            capabilities.__dict__,
        )
        cached = self._envelope
        if cached is not None and cached[0] == made_of:
            return dict(cached[1])
        meta: dict[str, Any] = {
            PROTOCOL_VERSION_META_KEY: self.modern_version or LATEST_MODERN_VERSION,
            CLIENT_INFO_META_KEY: dump(info),
            CLIENT_CAPABILITIES_META_KEY: self.modern_capabilities(),
        }
        if self.log_level is not None:
            meta[LOG_LEVEL_META_KEY] = self.log_level
        self._envelope = ((*made_of[:5], dict(info.__dict__), dict(capabilities.__dict__)), meta)
        return dict(meta)

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
        a task to its end (rule 3 of `mcp_layer._client`)."""
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
