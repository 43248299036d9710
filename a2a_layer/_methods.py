"""A2A methods declared once, as data: one `A2AMethod` record per operation of ``A2AService``.

Each record is the method's JSON-RPC descriptor (a `RequestType`: 1.0 name, params and
result types) and carries everything else a binding needs: the 0.3 JSON-RPC name, the
HTTP+JSON routes (the proto's ``google.api.http`` annotations), whether it streams, its
gRPC method name and the `A2AService` operation that serves it. Every table below, the
JSON-RPC registry, the HTTP+JSON router, the gRPC service and the client's typed calls are
derived from `A2A_METHODS`; no method name is spelled twice.

The two streaming methods (`SEND_STREAMING_MESSAGE`, `SUBSCRIBE_TO_TASK`) declare the
type of *each* event (``StreamResponse``) as their result type.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from jsonrpc_core import RequestType

from ._runtime import CallInfo
from ._service import A2AService
from .types import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    Empty,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
)

__all__ = [
    "A2A_METHODS",
    "CANCEL_TASK",
    "CREATE_TASK_PUSH_NOTIFICATION_CONFIG",
    "DELETE_TASK_PUSH_NOTIFICATION_CONFIG",
    "GET_EXTENDED_AGENT_CARD",
    "GET_TASK",
    "GET_TASK_PUSH_NOTIFICATION_CONFIG",
    "HTTP_ROUTES_V10",
    "HTTP_ROUTE_ALIASES_V10",
    "LIST_TASKS",
    "LIST_TASK_PUSH_NOTIFICATION_CONFIGS",
    "METHODS_V03_TO_V10",
    "METHODS_V10",
    "METHODS_V10_TO_V03",
    "SEND_MESSAGE",
    "SEND_STREAMING_MESSAGE",
    "STREAMING_METHODS",
    "STREAMING_METHODS_V03",
    "SUBSCRIBE_TO_TASK",
    "A2AMethod",
    "HttpRoute",
    "match_http_route",
]

P = TypeVar("P")
R = TypeVar("R")

_VAR = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class HttpRoute:
    """One HTTP+JSON binding of a method: verb, path template, whether a body is sent.

    Path variables are proto field names (``{task_id}``), i.e. the request model's
    attribute names; every field not bound by the path travels in the body (``body:
    "*"``) or, for GET and DELETE, in the query string (spec 11.5).
    """

    http_method: str
    path: str
    method: str
    body: bool
    path_params: tuple[str, ...] = field(init=False)
    _regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = tuple(_VAR.findall(self.path))
        pattern = "".join(
            f"(?P<{part[1:-1]}>[^/]+)" if _VAR.fullmatch(part) else re.escape(part)
            for part in re.split(r"(\{\w+\})", self.path)
        )
        object.__setattr__(self, "path_params", names)
        object.__setattr__(self, "_regex", re.compile(f"^{pattern}$"))

    def match(self, path: str) -> dict[str, str] | None:
        """The path variables if ``path`` (already percent-decoded) fits, else ``None``."""
        m = self._regex.match(path)
        return m.groupdict() if m else None

    def expand(self, **values: str) -> str:
        """The path with its variables filled in, each percent-encoded as one segment."""
        return _VAR.sub(lambda m: quote(values[m.group(1)], safe=""), self.path)


Operation = Callable[[A2AService, Any, CallInfo], Awaitable[Any]]
"""An unbound `A2AService` operation: ``(service, params model, call) -> result`` (for a
streaming method the result is an async iterator of `StreamResponse`)."""

HttpShape = tuple[str, str, bool]
"""An HTTP+JSON route before its tenant form: (verb, path template, body sent)."""


class A2AMethod(RequestType[P, R], Generic[P, R]):
    """One A2A method: its 1.0 JSON-RPC descriptor plus every other binding's name for it.

    ``v03`` is the 0.3 JSON-RPC name (``None``: 0.3 JSON-RPC lacks the method);
    ``http`` its HTTP+JSON route and ``http_aliases`` routes a server also accepts but a
    client never sends (each with its ``/{tenant}`` form); ``streaming`` whether it is
    answered with a stream of results (SSE, gRPC server streaming); ``grpc`` the rpc name
    in ``A2AService`` of ``a2a.proto``, ``grpc_v03`` in the 0.3 proto's (the same unless
    given; ``None`` where ``v03`` is); ``operation`` the `A2AService` method serving it.
    """

    __slots__ = ("grpc", "grpc_v03", "http", "http_aliases", "operation", "streaming", "v03")

    def __init__(
        self,
        method: str,
        params: type[P],
        result: type[R],
        *,
        v03: str | None,
        http: HttpShape,
        operation: Operation,
        http_aliases: tuple[HttpShape, ...] = (),
        streaming: bool = False,
        grpc_v03: str | None = None,
    ) -> None:
        super().__init__(method, params, result)
        self.v03 = v03
        self.http = http
        self.http_aliases = http_aliases
        self.streaming = streaming
        self.grpc = method  # the proto's rpc names are the 1.0 JSON-RPC names
        self.grpc_v03 = (grpc_v03 or method) if v03 else None
        self.operation = operation

    def __repr__(self) -> str:
        return f"A2AMethod({self.method!r})"

    def routes(self, *, aliases: bool = False) -> tuple[HttpRoute, ...]:
        """The method's HTTP+JSON routes, each followed by its ``/{tenant}`` form."""
        shapes = (self.http, *self.http_aliases) if aliases else (self.http,)
        return tuple(
            HttpRoute(verb, prefix + path, self.method, body)
            for verb, path, body in shapes
            # Each proto binding has an additional_binding with a leading "/{tenant}".
            for prefix in ("", "/{tenant}")
        )


_S = A2AService
_PUSH = "/tasks/{task_id}/pushNotificationConfigs"

# -- the records (spec 9.4; a2a.proto service A2AService) ----------------------------------
# Declared in HTTP matching order: routes with a custom verb (":cancel") come before the
# plain "/tasks/{id}" they would otherwise also fit.

SEND_MESSAGE = A2AMethod(
    "SendMessage",
    SendMessageRequest,
    SendMessageResponse,
    v03="message/send",
    http=("POST", "/message:send", True),
    operation=_S.send_message,
)
SEND_STREAMING_MESSAGE = A2AMethod(
    "SendStreamingMessage",
    SendMessageRequest,
    StreamResponse,
    v03="message/stream",
    http=("POST", "/message:stream", True),
    streaming=True,
    operation=_S.send_streaming_message,
)
CANCEL_TASK = A2AMethod(
    "CancelTask",
    CancelTaskRequest,
    Task,
    v03="tasks/cancel",
    http=("POST", "/tasks/{id}:cancel", True),
    operation=_S.cancel_task,
)
SUBSCRIBE_TO_TASK = A2AMethod(
    "SubscribeToTask",
    SubscribeToTaskRequest,
    StreamResponse,
    v03="tasks/resubscribe",
    http=("GET", "/tasks/{id}:subscribe", False),
    # Spec 5.3 and 11.3.2 write "POST /tasks/{id}:subscribe" where the normative proto
    # says GET; a server accepts both, a client sends GET.
    http_aliases=(("POST", "/tasks/{id}:subscribe", True),),
    streaming=True,
    grpc_v03="TaskSubscription",
    operation=_S.subscribe,
)
GET_TASK = A2AMethod(
    "GetTask",
    GetTaskRequest,
    Task,
    v03="tasks/get",
    http=("GET", "/tasks/{id}", False),
    operation=_S.get_task,
)
LIST_TASKS = A2AMethod(
    "ListTasks",
    ListTasksRequest,
    ListTasksResponse,
    v03=None,  # 0.3 JSON-RPC lacks it
    http=("GET", "/tasks", False),
    operation=_S.list_tasks,
)
CREATE_TASK_PUSH_NOTIFICATION_CONFIG = A2AMethod(
    "CreateTaskPushNotificationConfig",
    TaskPushNotificationConfig,
    TaskPushNotificationConfig,
    v03="tasks/pushNotificationConfig/set",
    http=("POST", _PUSH, True),
    operation=_S.create_push_config,
)
GET_TASK_PUSH_NOTIFICATION_CONFIG = A2AMethod(
    "GetTaskPushNotificationConfig",
    GetTaskPushNotificationConfigRequest,
    TaskPushNotificationConfig,
    v03="tasks/pushNotificationConfig/get",
    http=("GET", _PUSH + "/{id}", False),
    operation=_S.get_push_config,
)
LIST_TASK_PUSH_NOTIFICATION_CONFIGS = A2AMethod(
    "ListTaskPushNotificationConfigs",
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    v03="tasks/pushNotificationConfig/list",
    http=("GET", _PUSH, False),
    grpc_v03="ListTaskPushNotificationConfig",
    operation=_S.list_push_configs,
)
DELETE_TASK_PUSH_NOTIFICATION_CONFIG = A2AMethod(
    "DeleteTaskPushNotificationConfig",
    DeleteTaskPushNotificationConfigRequest,
    Empty,
    v03="tasks/pushNotificationConfig/delete",
    http=("DELETE", _PUSH + "/{id}", False),
    operation=_S.delete_push_config,
)
GET_EXTENDED_AGENT_CARD = A2AMethod(
    "GetExtendedAgentCard",
    GetExtendedAgentCardRequest,
    AgentCard,
    v03="agent/getAuthenticatedExtendedCard",
    http=("GET", "/extendedAgentCard", False),
    grpc_v03="GetAgentCard",
    operation=_S.get_extended_card,
)

A2A_METHODS: tuple[A2AMethod[Any, Any], ...] = (
    SEND_MESSAGE,
    SEND_STREAMING_MESSAGE,
    CANCEL_TASK,
    SUBSCRIBE_TO_TASK,
    GET_TASK,
    LIST_TASKS,
    CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
    GET_TASK_PUSH_NOTIFICATION_CONFIG,
    LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
    DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
    GET_EXTENDED_AGENT_CARD,
)
"""Every A2A 1.0 method, once; every table below is derived from it."""

# -- derived tables ------------------------------------------------------------------------

METHODS_V10: dict[str, A2AMethod[Any, Any]] = {m.method: m for m in A2A_METHODS}
"""Every A2A 1.0 JSON-RPC method by name."""

STREAMING_METHODS = frozenset(m.method for m in A2A_METHODS if m.streaming)
"""1.0 methods answered with an SSE stream of `StreamResponse` results."""

METHODS_V10_TO_V03: dict[str, str] = {m.method: m.v03 for m in A2A_METHODS if m.v03}
"""The 0.3 JSON-RPC name of each 1.0 method that 0.3 JSON-RPC has."""

METHODS_V03_TO_V10: dict[str, str] = {
    **{v03: v10 for v10, v03 in METHODS_V10_TO_V03.items()},
    # 0.3 spec 11.1.3 also names the card method this way; accepted, never sent.
    "agent/authenticatedExtendedCard": GET_EXTENDED_AGENT_CARD.method,
}
"""The 1.0 method each 0.3 JSON-RPC method name stands for."""

STREAMING_METHODS_V03 = frozenset(m.v03 for m in A2A_METHODS if m.streaming and m.v03)
"""0.3 methods answered with an SSE stream."""

HTTP_ROUTES_V10: tuple[HttpRoute, ...] = tuple(r for m in A2A_METHODS for r in m.routes())
"""The HTTP+JSON routes of A2A 1.0, exactly as annotated in ``a2a.proto``, in matching
order (untenanted form before the tenanted one)."""

HTTP_ROUTE_ALIASES_V10: tuple[HttpRoute, ...] = tuple(
    r for m in A2A_METHODS for r in m.routes(aliases=True) if r not in m.routes()
)
"""Routes a server also accepts but a client never sends."""


def match_http_route(
    http_method: str, path: str, *, aliases: bool = True
) -> tuple[HttpRoute, dict[str, str]] | None:
    """The route for a request and its path variables, or ``None`` (answer 404/405)."""
    http_method = http_method.upper()
    routes = HTTP_ROUTES_V10 + HTTP_ROUTE_ALIASES_V10 if aliases else HTTP_ROUTES_V10
    for route in routes:
        if route.http_method == http_method:
            found = route.match(path)
            if found is not None:
                return route, found
    return None
