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

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar, cast

from jsonrpc_core import NotificationType, RequestType

from ._types._base import (
    EmptyResult,
    NotificationParams,
    PaginatedRequestParams,
    RequestParams,
    Result,
)
from ._types._completion import CompleteRequestParams, CompleteResult
from ._types._elicitation import (
    ElicitationCompleteNotificationParams,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
)
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
from ._types._tools import CallToolRequestParams, CallToolResult, ListToolsResult
from ._types._utilities import CancelledNotificationParams, ProgressNotificationParams

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

# `ElicitRequestParams` is a discriminated union (an ``Annotated`` form, not a class); the
# cast and the annotations below give its descriptors the union of its members as params.
_ElicitParams = cast("type[ElicitRequestFormParams | ElicitRequestURLParams]", ElicitRequestParams)

# --- both directions ---------------------------------------------------------------------

PING = RequestType("ping", RequestParams, EmptyResult)
TASKS_GET = RequestType("tasks/get", GetTaskRequestParams, GetTaskResult)
TASKS_RESULT = RequestType("tasks/result", GetTaskPayloadRequestParams, GetTaskPayloadResult)
TASKS_LIST = RequestType("tasks/list", PaginatedRequestParams, ListTasksResult)
TASKS_CANCEL = RequestType("tasks/cancel", CancelTaskRequestParams, CancelTaskResult)

NOTIFICATIONS_CANCELLED = NotificationType("notifications/cancelled", CancelledNotificationParams)
NOTIFICATIONS_PROGRESS = NotificationType("notifications/progress", ProgressNotificationParams)
NOTIFICATIONS_TASKS_STATUS = NotificationType(
    "notifications/tasks/status", TaskStatusNotificationParams
)

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

SAMPLING_CREATE_MESSAGE = RequestType(
    "sampling/createMessage", CreateMessageRequestParams, CreateMessageResult
)
ELICITATION_CREATE: RequestType[ElicitRequestFormParams | ElicitRequestURLParams, ElicitResult]
ELICITATION_CREATE = RequestType("elicitation/create", _ElicitParams, ElicitResult)
ROOTS_LIST = RequestType("roots/list", RequestParams, ListRootsResult)

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
NOTIFICATIONS_ELICITATION_COMPLETE = NotificationType(
    "notifications/elicitation/complete", ElicitationCompleteNotificationParams
)

# --- 2026-07-28 -------------------------------------------------------------------------

SERVER_DISCOVER = RequestType("server/discover", RequestParams, DiscoverResult)
SUBSCRIPTIONS_LISTEN = RequestType("subscriptions/listen", SubscriptionsListenRequestParams, Result)
NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED = NotificationType(
    "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedNotificationParams
)
TASKS_GET_V2 = RequestType("tasks/get", TaskIdParams, DetailedTask)
TASKS_UPDATE = RequestType("tasks/update", UpdateTaskRequestParams, Result)
TASKS_CANCEL_V2 = RequestType("tasks/cancel", TaskIdParams, Result)
NOTIFICATIONS_TASKS = NotificationType("notifications/tasks", TaskStatusNotificationParamsV2)

# --- task-augmented variants (same methods, result is a CreateTaskResult) ----------------

TOOLS_CALL_TASK = RequestType("tools/call", CallToolRequestParams, CreateTaskResult)
SAMPLING_CREATE_MESSAGE_TASK = RequestType(
    "sampling/createMessage", CreateMessageRequestParams, CreateTaskResult
)
ELICITATION_CREATE_TASK: RequestType[
    ElicitRequestFormParams | ElicitRequestURLParams, CreateTaskResult
]
ELICITATION_CREATE_TASK = RequestType("elicitation/create", _ElicitParams, CreateTaskResult)


def _table(descriptors: Iterable[_D]) -> Mapping[str, _D]:
    table = {d.method: d for d in descriptors}
    return MappingProxyType(table)


CLIENT_REQUESTS: Mapping[str, RequestType[Any, Any]] = _table(
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
        TASKS_GET,
        TASKS_RESULT,
        TASKS_LIST,
        TASKS_CANCEL,
    ]
)
"""Requests a client sends and a server answers, by method name."""

SERVER_REQUESTS: Mapping[str, RequestType[Any, Any]] = _table(
    [
        PING,
        SAMPLING_CREATE_MESSAGE,
        ELICITATION_CREATE,
        ROOTS_LIST,
        TASKS_GET,
        TASKS_RESULT,
        TASKS_LIST,
        TASKS_CANCEL,
    ]
)
"""Requests a server sends and a client answers, by method name."""

CLIENT_NOTIFICATIONS: Mapping[str, NotificationType[Any]] = _table(
    [
        NOTIFICATIONS_INITIALIZED,
        NOTIFICATIONS_CANCELLED,
        NOTIFICATIONS_PROGRESS,
        NOTIFICATIONS_ROOTS_LIST_CHANGED,
        NOTIFICATIONS_TASKS_STATUS,
    ]
)
"""Notifications a client sends, by method name."""

SERVER_NOTIFICATIONS: Mapping[str, NotificationType[Any]] = _table(
    [
        NOTIFICATIONS_CANCELLED,
        NOTIFICATIONS_PROGRESS,
        NOTIFICATIONS_MESSAGE,
        NOTIFICATIONS_RESOURCES_UPDATED,
        NOTIFICATIONS_RESOURCES_LIST_CHANGED,
        NOTIFICATIONS_TOOLS_LIST_CHANGED,
        NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        NOTIFICATIONS_ELICITATION_COMPLETE,
        NOTIFICATIONS_TASKS_STATUS,
    ]
)
"""Notifications a server sends, by method name."""

TASK_AUGMENTED_REQUESTS: Mapping[str, RequestType[Any, CreateTaskResult]] = _table(
    [TOOLS_CALL_TASK, SAMPLING_CREATE_MESSAGE_TASK, ELICITATION_CREATE_TASK]
)
"""The task-augmentable requests, by method name, with `CreateTaskResult` as result."""

MODERN_CLIENT_REQUESTS: Mapping[str, RequestType[Any, Any]] = _table(
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
        TASKS_GET_V2,
        TASKS_UPDATE,
        TASKS_CANCEL_V2,
    ]
)
"""Requests a 2026-07-28 client sends and a server answers (tasks: with the extension).

``tools/call``, ``prompts/get`` and ``resources/read`` may answer with an
``InputRequiredResult`` instead of their result type, and ``tools/call`` with a
``CreateTaskResultV2`` under the tasks extension."""
