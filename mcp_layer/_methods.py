"""Every MCP method, declared once as a `jsonrpc_core` descriptor, in one table per direction.

    CLIENT_REQUESTS        client -> server requests       (the server registers these)
    SERVER_REQUESTS        server -> client requests       (the client registers these)
    CLIENT_NOTIFICATIONS   client -> server notifications
    SERVER_NOTIFICATIONS   server -> client notifications

Each table maps the method name to its descriptor, and each descriptor is also a module
constant (``TOOLS_CALL``). Methods both sides send (``ping``, ``tasks/*``,
``notifications/cancelled``, ``notifications/progress``, ``notifications/tasks/status``)
are one descriptor listed in both tables.

Task augmentation changes a result's type, not the method: ``tools/call`` with ``task``
in its params answers with a `CreateTaskResult`. The tables keep the plain result type
(what a handler returns without tasks); a requestor that sends ``task`` calls through
``TOOLS_CALL_TASK``, ``SAMPLING_CREATE_MESSAGE_TASK`` or ``ELICITATION_CREATE_TASK``
(same method, `CreateTaskResult` as result), listed in `TASK_AUGMENTED_REQUESTS`.

Methods whose params are optional on the wire (``ping``, the ``*/list`` methods,
list-changed notifications) use models whose members are all optional, so a missing
``params`` validates (`jsonrpc_core` validates a missing ``params`` as ``{}``).

2026-07-28 adds ``server/discover``, ``subscriptions/listen`` (and its
``notifications/subscriptions/acknowledged``) and, with the tasks extension (SEP-2663),
``tasks/update`` and new shapes for ``tasks/get`` and ``tasks/cancel`` (``*_V2``, with
``notifications/tasks``); `MODERN_CLIENT_REQUESTS` lists what a 2026-07-28 server
answers.

MCP's own error codes are in `mcp_layer._errors.MCP_ERRORS`; give it to MCP peers
(``Peer(..., errors=MCP_ERRORS)``) so received errors come back as MCP's classes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from jsonrpc_core import NotificationType, RequestType

from ._types._base import (
    EmptyResult,
    NotificationParams,
    PaginatedRequestParams,
    RequestParams,
    Result,
)
from ._types._completion import CompleteRequestParams, CompleteResult
from ._types._lifecycle import InitializeRequestParams, InitializeResult
from ._types._logging import LoggingMessageNotificationParams, SetLevelRequestParams
from ._types._modern import (
    DiscoverResult,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
)
from ._types._prompts import GetPromptRequestParams, GetPromptResult, ListPromptsResult
from ._types._resources import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
)
from ._types._tools import CallToolRequestParams, CallToolResult, ListToolsResult
from ._types._utilities import CancelledNotificationParams, ProgressNotificationParams

if TYPE_CHECKING:
    from ._types._elicitation import (
        ElicitationCompleteNotificationParams,
        ElicitRequestFormParams,
        ElicitRequestURLParams,
        ElicitResult,
    )
    from ._types._roots import ListRootsResult
    from ._types._sampling import CreateMessageRequestParams, CreateMessageResult
    from ._types._tasks import (
        CancelTaskRequestParams,
        CancelTaskResult,
        CreateTaskResult,
        GetTaskPayloadRequestParams,
        GetTaskPayloadResult,
        GetTaskRequestParams,
        GetTaskResult,
        ListTasksResult,
        TaskStatusNotificationParams,
    )
    from ._types._tasks_ext import (
        DetailedTask,
        TaskIdParams,
        TaskStatusNotificationParamsV2,
        UpdateTaskRequestParams,
    )

__all__ = [
    "CLIENT_NOTIFICATIONS",
    "CLIENT_REQUESTS",
    "COMPLETION_COMPLETE",
    "ELICITATION_CREATE",
    "ELICITATION_CREATE_TASK",
    "INITIALIZE",
    "LOGGING_SET_LEVEL",
    "MODERN_CLIENT_REQUESTS",
    "NOTIFICATIONS_CANCELLED",
    "NOTIFICATIONS_ELICITATION_COMPLETE",
    "NOTIFICATIONS_INITIALIZED",
    "NOTIFICATIONS_MESSAGE",
    "NOTIFICATIONS_PROGRESS",
    "NOTIFICATIONS_PROMPTS_LIST_CHANGED",
    "NOTIFICATIONS_RESOURCES_LIST_CHANGED",
    "NOTIFICATIONS_RESOURCES_UPDATED",
    "NOTIFICATIONS_ROOTS_LIST_CHANGED",
    "NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED",
    "NOTIFICATIONS_TASKS",
    "NOTIFICATIONS_TASKS_STATUS",
    "NOTIFICATIONS_TOOLS_LIST_CHANGED",
    "PING",
    "PROMPTS_GET",
    "PROMPTS_LIST",
    "RESOURCES_LIST",
    "RESOURCES_READ",
    "RESOURCES_SUBSCRIBE",
    "RESOURCES_TEMPLATES_LIST",
    "RESOURCES_UNSUBSCRIBE",
    "ROOTS_LIST",
    "SAMPLING_CREATE_MESSAGE",
    "SAMPLING_CREATE_MESSAGE_TASK",
    "SERVER_DISCOVER",
    "SERVER_NOTIFICATIONS",
    "SERVER_REQUESTS",
    "SUBSCRIPTIONS_LISTEN",
    "TASKS_CANCEL",
    "TASKS_CANCEL_V2",
    "TASKS_GET",
    "TASKS_GET_V2",
    "TASKS_LIST",
    "TASKS_RESULT",
    "TASKS_UPDATE",
    "TASK_AUGMENTED_REQUESTS",
    "TOOLS_CALL",
    "TOOLS_CALL_TASK",
    "TOOLS_LIST",
]

_D = TypeVar("_D", RequestType[Any, Any], NotificationType[Any])

# --- both directions ---------------------------------------------------------------------

PING = RequestType("ping", RequestParams, EmptyResult)

NOTIFICATIONS_CANCELLED = NotificationType("notifications/cancelled", CancelledNotificationParams)
NOTIFICATIONS_PROGRESS = NotificationType("notifications/progress", ProgressNotificationParams)

# --- client -> server --------------------------------------------------------------------

INITIALIZE = RequestType("initialize", InitializeRequestParams, InitializeResult)
TOOLS_LIST = RequestType("tools/list", PaginatedRequestParams, ListToolsResult)
TOOLS_CALL = RequestType("tools/call", CallToolRequestParams, CallToolResult)
RESOURCES_LIST = RequestType("resources/list", PaginatedRequestParams, ListResourcesResult)
RESOURCES_TEMPLATES_LIST = RequestType(
    "resources/templates/list", PaginatedRequestParams, ListResourceTemplatesResult
)
RESOURCES_READ = RequestType("resources/read", ReadResourceRequestParams, ReadResourceResult)
RESOURCES_SUBSCRIBE = RequestType("resources/subscribe", SubscribeRequestParams, EmptyResult)
RESOURCES_UNSUBSCRIBE = RequestType("resources/unsubscribe", UnsubscribeRequestParams, EmptyResult)
PROMPTS_LIST = RequestType("prompts/list", PaginatedRequestParams, ListPromptsResult)
PROMPTS_GET = RequestType("prompts/get", GetPromptRequestParams, GetPromptResult)
COMPLETION_COMPLETE = RequestType("completion/complete", CompleteRequestParams, CompleteResult)
LOGGING_SET_LEVEL = RequestType("logging/setLevel", SetLevelRequestParams, EmptyResult)

NOTIFICATIONS_INITIALIZED = NotificationType("notifications/initialized", NotificationParams)
NOTIFICATIONS_ROOTS_LIST_CHANGED = NotificationType(
    "notifications/roots/list_changed", NotificationParams
)

# --- server -> client --------------------------------------------------------------------

NOTIFICATIONS_MESSAGE = NotificationType("notifications/message", LoggingMessageNotificationParams)
NOTIFICATIONS_RESOURCES_UPDATED = NotificationType(
    "notifications/resources/updated", ResourceUpdatedNotificationParams
)
NOTIFICATIONS_RESOURCES_LIST_CHANGED = NotificationType(
    "notifications/resources/list_changed", NotificationParams
)
NOTIFICATIONS_TOOLS_LIST_CHANGED = NotificationType(
    "notifications/tools/list_changed", NotificationParams
)
NOTIFICATIONS_PROMPTS_LIST_CHANGED = NotificationType(
    "notifications/prompts/list_changed", NotificationParams
)

# --- 2026-07-28 -------------------------------------------------------------------------

SERVER_DISCOVER = RequestType("server/discover", RequestParams, DiscoverResult)
SUBSCRIPTIONS_LISTEN = RequestType("subscriptions/listen", SubscriptionsListenRequestParams, Result)
NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED = NotificationType(
    "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedNotificationParams
)


def _table(descriptors: Iterable[_D]) -> Mapping[str, _D]:
    table = {d.method: d for d in descriptors}
    return MappingProxyType(table)


# --- built on first use ------------------------------------------------------------------
#
# The tasks methods (2025-11-25 and the 2026 extension), the requests a server sends
# (sampling, elicitation, roots), the task-augmented variants and the tables that list
# them: their models load with the first of these names asked for (PEP 562), so that a
# server that never uses them never loads them.

if TYPE_CHECKING:
    TASKS_GET: RequestType[GetTaskRequestParams, GetTaskResult]
    TASKS_RESULT: RequestType[GetTaskPayloadRequestParams, GetTaskPayloadResult]
    TASKS_LIST: RequestType[PaginatedRequestParams, ListTasksResult]
    TASKS_CANCEL: RequestType[CancelTaskRequestParams, CancelTaskResult]
    NOTIFICATIONS_TASKS_STATUS: NotificationType[TaskStatusNotificationParams]
    CLIENT_REQUESTS: Mapping[str, RequestType[Any, Any]]
    """Requests a client sends and a server answers, by method name."""
    CLIENT_NOTIFICATIONS: Mapping[str, NotificationType[Any]]
    """Notifications a client sends, by method name."""
    SAMPLING_CREATE_MESSAGE: RequestType[CreateMessageRequestParams, CreateMessageResult]
    ELICITATION_CREATE: RequestType[ElicitRequestFormParams | ElicitRequestURLParams, ElicitResult]
    ROOTS_LIST: RequestType[RequestParams, ListRootsResult]
    NOTIFICATIONS_ELICITATION_COMPLETE: NotificationType[ElicitationCompleteNotificationParams]
    TASKS_GET_V2: RequestType[TaskIdParams, DetailedTask]
    TASKS_UPDATE: RequestType[UpdateTaskRequestParams, Result]
    TASKS_CANCEL_V2: RequestType[TaskIdParams, Result]
    NOTIFICATIONS_TASKS: NotificationType[TaskStatusNotificationParamsV2]
    TOOLS_CALL_TASK: RequestType[CallToolRequestParams, CreateTaskResult]
    SAMPLING_CREATE_MESSAGE_TASK: RequestType[CreateMessageRequestParams, CreateTaskResult]
    ELICITATION_CREATE_TASK: RequestType[
        ElicitRequestFormParams | ElicitRequestURLParams, CreateTaskResult
    ]
    SERVER_REQUESTS: Mapping[str, RequestType[Any, Any]]
    """Requests a server sends and a client answers, by method name."""
    SERVER_NOTIFICATIONS: Mapping[str, NotificationType[Any]]
    """Notifications a server sends, by method name."""
    TASK_AUGMENTED_REQUESTS: Mapping[str, RequestType[Any, CreateTaskResult]]
    """The task-augmentable requests, by method name, with `CreateTaskResult` as result."""
    MODERN_CLIENT_REQUESTS: Mapping[str, RequestType[Any, Any]]
    """Requests a 2026-07-28 client sends and a server answers (tasks: with the extension).

    ``tools/call``, ``prompts/get`` and ``resources/read`` may answer with an
    ``InputRequiredResult`` instead of their result type, and ``tools/call`` with a
    ``CreateTaskResultV2`` under the tasks extension."""


def _build_deferred() -> dict[str, Any]:
    from ._types._elicitation import (
        ElicitationCompleteNotificationParams,
        ElicitRequestParams,
        ElicitResult,
    )
    from ._types._roots import ListRootsResult
    from ._types._sampling import CreateMessageRequestParams, CreateMessageResult
    from ._types._tasks import (
        CancelTaskRequestParams,
        CancelTaskResult,
        CreateTaskResult,
        GetTaskPayloadRequestParams,
        GetTaskPayloadResult,
        GetTaskRequestParams,
        GetTaskResult,
        ListTasksResult,
        TaskStatusNotificationParams,
    )
    from ._types._tasks_ext import (
        DetailedTask,
        TaskIdParams,
        TaskStatusNotificationParamsV2,
        UpdateTaskRequestParams,
    )

    # `ElicitRequestParams` is a discriminated union (an ``Annotated`` form, not a class);
    # the cast gives its descriptors the union of its members as params.
    elicit_params = cast(
        "type[ElicitRequestFormParams | ElicitRequestURLParams]", ElicitRequestParams
    )
    # Both directions: tasks (2025-11-25).
    tasks_get = RequestType("tasks/get", GetTaskRequestParams, GetTaskResult)
    tasks_result = RequestType("tasks/result", GetTaskPayloadRequestParams, GetTaskPayloadResult)
    tasks_list = RequestType("tasks/list", PaginatedRequestParams, ListTasksResult)
    tasks_cancel = RequestType("tasks/cancel", CancelTaskRequestParams, CancelTaskResult)
    tasks_status = NotificationType("notifications/tasks/status", TaskStatusNotificationParams)
    # Server -> client.
    sampling = RequestType(
        "sampling/createMessage", CreateMessageRequestParams, CreateMessageResult
    )
    elicitation = RequestType("elicitation/create", elicit_params, ElicitResult)
    roots = RequestType("roots/list", RequestParams, ListRootsResult)
    elicitation_complete = NotificationType(
        "notifications/elicitation/complete", ElicitationCompleteNotificationParams
    )
    # 2026-07-28, the tasks extension.
    tasks_get_v2 = RequestType("tasks/get", TaskIdParams, DetailedTask)
    tasks_update = RequestType("tasks/update", UpdateTaskRequestParams, Result)
    tasks_cancel_v2 = RequestType("tasks/cancel", TaskIdParams, Result)
    notifications_tasks = NotificationType("notifications/tasks", TaskStatusNotificationParamsV2)
    # Task-augmented variants (same methods, result is a CreateTaskResult).
    tools_call_task = RequestType("tools/call", CallToolRequestParams, CreateTaskResult)
    sampling_task = RequestType(
        "sampling/createMessage", CreateMessageRequestParams, CreateTaskResult
    )
    elicitation_task = RequestType("elicitation/create", elicit_params, CreateTaskResult)
    return {
        "TASKS_GET": tasks_get,
        "TASKS_RESULT": tasks_result,
        "TASKS_LIST": tasks_list,
        "TASKS_CANCEL": tasks_cancel,
        "NOTIFICATIONS_TASKS_STATUS": tasks_status,
        "CLIENT_REQUESTS": _table(
            [
                INITIALIZE,
                PING,
                TOOLS_LIST,
                TOOLS_CALL,
                RESOURCES_LIST,
                RESOURCES_TEMPLATES_LIST,
                RESOURCES_READ,
                RESOURCES_SUBSCRIBE,
                RESOURCES_UNSUBSCRIBE,
                PROMPTS_LIST,
                PROMPTS_GET,
                COMPLETION_COMPLETE,
                LOGGING_SET_LEVEL,
                tasks_get,
                tasks_result,
                tasks_list,
                tasks_cancel,
            ]
        ),
        "CLIENT_NOTIFICATIONS": _table(
            [
                NOTIFICATIONS_INITIALIZED,
                NOTIFICATIONS_CANCELLED,
                NOTIFICATIONS_PROGRESS,
                NOTIFICATIONS_ROOTS_LIST_CHANGED,
                tasks_status,
            ]
        ),
        "SAMPLING_CREATE_MESSAGE": sampling,
        "ELICITATION_CREATE": elicitation,
        "ROOTS_LIST": roots,
        "NOTIFICATIONS_ELICITATION_COMPLETE": elicitation_complete,
        "TASKS_GET_V2": tasks_get_v2,
        "TASKS_UPDATE": tasks_update,
        "TASKS_CANCEL_V2": tasks_cancel_v2,
        "NOTIFICATIONS_TASKS": notifications_tasks,
        "TOOLS_CALL_TASK": tools_call_task,
        "SAMPLING_CREATE_MESSAGE_TASK": sampling_task,
        "ELICITATION_CREATE_TASK": elicitation_task,
        "SERVER_REQUESTS": _table(
            [
                PING,
                sampling,
                elicitation,
                roots,
                tasks_get,
                tasks_result,
                tasks_list,
                tasks_cancel,
            ]
        ),
        "SERVER_NOTIFICATIONS": _table(
            [
                NOTIFICATIONS_CANCELLED,
                NOTIFICATIONS_PROGRESS,
                NOTIFICATIONS_MESSAGE,
                NOTIFICATIONS_RESOURCES_UPDATED,
                NOTIFICATIONS_RESOURCES_LIST_CHANGED,
                NOTIFICATIONS_TOOLS_LIST_CHANGED,
                NOTIFICATIONS_PROMPTS_LIST_CHANGED,
                elicitation_complete,
                tasks_status,
            ]
        ),
        "TASK_AUGMENTED_REQUESTS": _table([tools_call_task, sampling_task, elicitation_task]),
        "MODERN_CLIENT_REQUESTS": _table(
            [
                SERVER_DISCOVER,
                SUBSCRIPTIONS_LISTEN,
                TOOLS_LIST,
                TOOLS_CALL,
                RESOURCES_LIST,
                RESOURCES_TEMPLATES_LIST,
                RESOURCES_READ,
                PROMPTS_LIST,
                PROMPTS_GET,
                COMPLETION_COMPLETE,
                tasks_get_v2,
                tasks_update,
                tasks_cancel_v2,
            ]
        ),
    }


_DEFERRED = frozenset(
    {
        "TASKS_GET",
        "TASKS_RESULT",
        "TASKS_LIST",
        "TASKS_CANCEL",
        "NOTIFICATIONS_TASKS_STATUS",
        "CLIENT_REQUESTS",
        "CLIENT_NOTIFICATIONS",
        "SAMPLING_CREATE_MESSAGE",
        "ELICITATION_CREATE",
        "ROOTS_LIST",
        "NOTIFICATIONS_ELICITATION_COMPLETE",
        "TASKS_GET_V2",
        "TASKS_UPDATE",
        "TASKS_CANCEL_V2",
        "NOTIFICATIONS_TASKS",
        "TOOLS_CALL_TASK",
        "SAMPLING_CREATE_MESSAGE_TASK",
        "ELICITATION_CREATE_TASK",
        "SERVER_REQUESTS",
        "SERVER_NOTIFICATIONS",
        "TASK_AUGMENTED_REQUESTS",
        "MODERN_CLIENT_REQUESTS",
    }
)

_deferred_lock = threading.Lock()


def __getattr__(name: str) -> Any:
    if name not in _DEFERRED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Built once, all together, under a lock (threads may race here): each descriptor
    # is one object wherever it is listed.
    namespace = globals()
    with _deferred_lock:
        if name not in namespace:
            namespace.update(_build_deferred())
    return namespace[name]
