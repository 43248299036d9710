"""A2A methods declared once, as data: JSON-RPC descriptors, 0.3 names, HTTP+JSON routes.

Every operation of ``A2AService`` in ``a2a.proto`` is one `RequestType`; the two
streaming ones (`SEND_STREAMING_MESSAGE`, `SUBSCRIBE_TO_TASK`) declare the type of *each*
SSE event's ``result``. The HTTP+JSON routes are the proto's ``google.api.http``
annotations, tenant forms included.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from jsonrpc_core import RequestType

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
    "HttpRoute",
    "match_http_route",
]

# -- A2A 1.0 JSON-RPC methods (spec 9.4) ---------------------------------------------------

SEND_MESSAGE = RequestType("SendMessage", SendMessageRequest, SendMessageResponse)
SEND_STREAMING_MESSAGE = RequestType("SendStreamingMessage", SendMessageRequest, StreamResponse)
GET_TASK = RequestType("GetTask", GetTaskRequest, Task)
LIST_TASKS = RequestType("ListTasks", ListTasksRequest, ListTasksResponse)
CANCEL_TASK = RequestType("CancelTask", CancelTaskRequest, Task)
SUBSCRIBE_TO_TASK = RequestType("SubscribeToTask", SubscribeToTaskRequest, StreamResponse)
CREATE_TASK_PUSH_NOTIFICATION_CONFIG = RequestType(
    "CreateTaskPushNotificationConfig", TaskPushNotificationConfig, TaskPushNotificationConfig
)
GET_TASK_PUSH_NOTIFICATION_CONFIG = RequestType(
    "GetTaskPushNotificationConfig",
    GetTaskPushNotificationConfigRequest,
    TaskPushNotificationConfig,
)
LIST_TASK_PUSH_NOTIFICATION_CONFIGS = RequestType(
    "ListTaskPushNotificationConfigs",
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
)
DELETE_TASK_PUSH_NOTIFICATION_CONFIG = RequestType(
    "DeleteTaskPushNotificationConfig", DeleteTaskPushNotificationConfigRequest, Empty
)
GET_EXTENDED_AGENT_CARD = RequestType(
    "GetExtendedAgentCard", GetExtendedAgentCardRequest, AgentCard
)

METHODS_V10: dict[str, RequestType[Any, Any]] = {
    d.method: d
    for d in (
        SEND_MESSAGE,
        SEND_STREAMING_MESSAGE,
        GET_TASK,
        LIST_TASKS,
        CANCEL_TASK,
        SUBSCRIBE_TO_TASK,
        CREATE_TASK_PUSH_NOTIFICATION_CONFIG,
        GET_TASK_PUSH_NOTIFICATION_CONFIG,
        LIST_TASK_PUSH_NOTIFICATION_CONFIGS,
        DELETE_TASK_PUSH_NOTIFICATION_CONFIG,
        GET_EXTENDED_AGENT_CARD,
    )
}
"""Every A2A 1.0 JSON-RPC method by name."""

STREAMING_METHODS = frozenset({SEND_STREAMING_MESSAGE.method, SUBSCRIBE_TO_TASK.method})
"""1.0 methods answered with an SSE stream of `StreamResponse` results."""

# -- A2A 0.3 method names ------------------------------------------------------------------

METHODS_V10_TO_V03: dict[str, str] = {
    "SendMessage": "message/send",
    "SendStreamingMessage": "message/stream",
    "GetTask": "tasks/get",
    "CancelTask": "tasks/cancel",
    "SubscribeToTask": "tasks/resubscribe",
    "CreateTaskPushNotificationConfig": "tasks/pushNotificationConfig/set",
    "GetTaskPushNotificationConfig": "tasks/pushNotificationConfig/get",
    "ListTaskPushNotificationConfigs": "tasks/pushNotificationConfig/list",
    "DeleteTaskPushNotificationConfig": "tasks/pushNotificationConfig/delete",
    "GetExtendedAgentCard": "agent/getAuthenticatedExtendedCard",
}
"""The 0.3 JSON-RPC name of each 1.0 method (ListTasks has none: 0.3 JSON-RPC lacks it)."""

METHODS_V03_TO_V10: dict[str, str] = {
    **{v03: v10 for v10, v03 in METHODS_V10_TO_V03.items()},
    # 0.3 spec 11.1.3 also names the card method this way; accepted, never sent.
    "agent/authenticatedExtendedCard": "GetExtendedAgentCard",
}
"""The 1.0 method each 0.3 JSON-RPC method name stands for."""

STREAMING_METHODS_V03 = frozenset({"message/stream", "tasks/resubscribe"})
"""0.3 methods answered with an SSE stream."""

# -- HTTP+JSON routes (a2a.proto google.api.http) ------------------------------------------

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


def _routes(http_method: str, path: str, method: str, *, body: bool) -> tuple[HttpRoute, ...]:
    # Each proto binding has an additional_binding with a leading "/{tenant}".
    return (
        HttpRoute(http_method, path, method, body),
        HttpRoute(http_method, "/{tenant}" + path, method, body),
    )


_PUSH = "/tasks/{task_id}/pushNotificationConfigs"

# Order matters for matching: routes with a custom verb (":cancel") come before the plain
# "/tasks/{id}" they would otherwise also fit, and untenanted forms before tenanted ones.
HTTP_ROUTES_V10: tuple[HttpRoute, ...] = (
    *_routes("POST", "/message:send", "SendMessage", body=True),
    *_routes("POST", "/message:stream", "SendStreamingMessage", body=True),
    *_routes("POST", "/tasks/{id}:cancel", "CancelTask", body=True),
    *_routes("GET", "/tasks/{id}:subscribe", "SubscribeToTask", body=False),
    *_routes("GET", "/tasks/{id}", "GetTask", body=False),
    *_routes("GET", "/tasks", "ListTasks", body=False),
    *_routes("POST", _PUSH, "CreateTaskPushNotificationConfig", body=True),
    *_routes("GET", _PUSH + "/{id}", "GetTaskPushNotificationConfig", body=False),
    *_routes("GET", _PUSH, "ListTaskPushNotificationConfigs", body=False),
    *_routes("DELETE", _PUSH + "/{id}", "DeleteTaskPushNotificationConfig", body=False),
    *_routes("GET", "/extendedAgentCard", "GetExtendedAgentCard", body=False),
)
"""The HTTP+JSON routes of A2A 1.0, exactly as annotated in ``a2a.proto``."""

HTTP_ROUTE_ALIASES_V10: tuple[HttpRoute, ...] = (
    # Spec 5.3 and 11.3.2 write "POST /tasks/{id}:subscribe" where the normative proto
    # says GET; a server accepts both, a client sends GET.
    *_routes("POST", "/tasks/{id}:subscribe", "SubscribeToTask", body=True),
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
