"""The MCP methods whose models load on first use, re-exported by `mcp_layer._methods`.

The tasks methods (2025-11-25 and the 2026 extension), the requests a server sends
(sampling, elicitation, roots), the task-augmented variants and the four tables that
list them: a server that never uses them never imports this module, nor the models it
needs (`mcp_layer._methods` re-exports every name here lazily, see
`jsonrpc_core.install_lazy_exports`). Each descriptor is one object wherever it is
listed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar, cast

from jsonrpc_core import NotificationType, RequestType

from ._methods import (
    COMPLETION_COMPLETE,
    INITIALIZE,
    LOGGING_SET_LEVEL,
    NOTIFICATIONS_CANCELLED,
    NOTIFICATIONS_INITIALIZED,
    NOTIFICATIONS_MESSAGE,
    NOTIFICATIONS_PROGRESS,
    NOTIFICATIONS_PROMPTS_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_LIST_CHANGED,
    NOTIFICATIONS_RESOURCES_UPDATED,
    NOTIFICATIONS_ROOTS_LIST_CHANGED,
    NOTIFICATIONS_TOOLS_LIST_CHANGED,
    PING,
    PROMPTS_GET,
    PROMPTS_LIST,
    RESOURCES_LIST,
    RESOURCES_READ,
    RESOURCES_SUBSCRIBE,
    RESOURCES_TEMPLATES_LIST,
    RESOURCES_UNSUBSCRIBE,
    SERVER_DISCOVER,
    SUBSCRIPTIONS_LISTEN,
    TOOLS_CALL,
    TOOLS_LIST,
)
from ._types._base import PaginatedRequestParams, RequestParams, Result
from ._types._elicitation import (
    ElicitationCompleteNotificationParams,
    ElicitRequestFormParams,
    ElicitRequestParams,
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
from ._types._tools import CallToolRequestParams

_D = TypeVar("_D", RequestType[Any, Any], NotificationType[Any])


def _table(descriptors: Iterable[_D]) -> Mapping[str, _D]:
    return MappingProxyType({d.method: d for d in descriptors})


# `ElicitRequestParams` is a discriminated union (an ``Annotated`` form, not a class);
# the cast gives its descriptors the union of its members as params.
_ELICIT_PARAMS = cast("type[ElicitRequestFormParams | ElicitRequestURLParams]", ElicitRequestParams)

# --- both directions: tasks (2025-11-25) -------------------------------------------------

TASKS_GET = RequestType("tasks/get", GetTaskRequestParams, GetTaskResult)
TASKS_RESULT = RequestType("tasks/result", GetTaskPayloadRequestParams, GetTaskPayloadResult)
TASKS_LIST = RequestType("tasks/list", PaginatedRequestParams, ListTasksResult)
TASKS_CANCEL = RequestType("tasks/cancel", CancelTaskRequestParams, CancelTaskResult)
NOTIFICATIONS_TASKS_STATUS = NotificationType(
    "notifications/tasks/status", TaskStatusNotificationParams
)

# --- server -> client --------------------------------------------------------------------

SAMPLING_CREATE_MESSAGE = RequestType(
    "sampling/createMessage", CreateMessageRequestParams, CreateMessageResult
)
ELICITATION_CREATE = RequestType("elicitation/create", _ELICIT_PARAMS, ElicitResult)
ROOTS_LIST = RequestType("roots/list", RequestParams, ListRootsResult)
NOTIFICATIONS_ELICITATION_COMPLETE = NotificationType(
    "notifications/elicitation/complete", ElicitationCompleteNotificationParams
)

# --- 2026-07-28, the tasks extension -----------------------------------------------------

TASKS_GET_V2 = RequestType("tasks/get", TaskIdParams, DetailedTask)
TASKS_UPDATE = RequestType("tasks/update", UpdateTaskRequestParams, Result)
TASKS_CANCEL_V2 = RequestType("tasks/cancel", TaskIdParams, Result)
NOTIFICATIONS_TASKS = NotificationType("notifications/tasks", TaskStatusNotificationParamsV2)

# --- task-augmented variants (same methods, the result is a CreateTaskResult) ------------

TOOLS_CALL_TASK = RequestType("tools/call", CallToolRequestParams, CreateTaskResult)
SAMPLING_CREATE_MESSAGE_TASK = RequestType(
    "sampling/createMessage", CreateMessageRequestParams, CreateTaskResult
)
ELICITATION_CREATE_TASK = RequestType("elicitation/create", _ELICIT_PARAMS, CreateTaskResult)

# --- the tables --------------------------------------------------------------------------

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

TASK_AUGMENTED_REQUESTS: Mapping[str, RequestType[Any, CreateTaskResult]] = MappingProxyType(
    {d.method: d for d in (TOOLS_CALL_TASK, SAMPLING_CREATE_MESSAGE_TASK, ELICITATION_CREATE_TASK)}
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
