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

from typing import TYPE_CHECKING

from jsonrpc_core import NotificationType, RequestType, install_lazy_exports

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

__all__ = [
    "COMPLETION_COMPLETE",
    "INITIALIZE",
    "LOGGING_SET_LEVEL",
    "NOTIFICATIONS_CANCELLED",
    "NOTIFICATIONS_INITIALIZED",
    "NOTIFICATIONS_MESSAGE",
    "NOTIFICATIONS_PROGRESS",
    "NOTIFICATIONS_PROMPTS_LIST_CHANGED",
    "NOTIFICATIONS_RESOURCES_LIST_CHANGED",
    "NOTIFICATIONS_RESOURCES_UPDATED",
    "NOTIFICATIONS_ROOTS_LIST_CHANGED",
    "NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED",
    "NOTIFICATIONS_TOOLS_LIST_CHANGED",
    "PING",
    "PROMPTS_GET",
    "PROMPTS_LIST",
    "RESOURCES_LIST",
    "RESOURCES_READ",
    "RESOURCES_SUBSCRIBE",
    "RESOURCES_TEMPLATES_LIST",
    "RESOURCES_UNSUBSCRIBE",
    "SERVER_DISCOVER",
    "SUBSCRIPTIONS_LISTEN",
    "TOOLS_CALL",
    "TOOLS_LIST",
]

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


# --- loaded on first use ----------------------------------------------------------------
#
# The tasks methods, the requests a server sends (sampling, elicitation, roots), the
# task-augmented variants and the tables that list them are defined in
# `mcp_layer._methods_deferred`, with the models they need: a server that never uses
# them never loads them.

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from ._methods_deferred import CLIENT_NOTIFICATIONS as CLIENT_NOTIFICATIONS
    from ._methods_deferred import CLIENT_REQUESTS as CLIENT_REQUESTS
    from ._methods_deferred import ELICITATION_CREATE as ELICITATION_CREATE
    from ._methods_deferred import ELICITATION_CREATE_TASK as ELICITATION_CREATE_TASK
    from ._methods_deferred import MODERN_CLIENT_REQUESTS as MODERN_CLIENT_REQUESTS
    from ._methods_deferred import (
        NOTIFICATIONS_ELICITATION_COMPLETE as NOTIFICATIONS_ELICITATION_COMPLETE,
    )
    from ._methods_deferred import NOTIFICATIONS_TASKS as NOTIFICATIONS_TASKS
    from ._methods_deferred import NOTIFICATIONS_TASKS_STATUS as NOTIFICATIONS_TASKS_STATUS
    from ._methods_deferred import ROOTS_LIST as ROOTS_LIST
    from ._methods_deferred import SAMPLING_CREATE_MESSAGE as SAMPLING_CREATE_MESSAGE
    from ._methods_deferred import SAMPLING_CREATE_MESSAGE_TASK as SAMPLING_CREATE_MESSAGE_TASK
    from ._methods_deferred import SERVER_NOTIFICATIONS as SERVER_NOTIFICATIONS
    from ._methods_deferred import SERVER_REQUESTS as SERVER_REQUESTS
    from ._methods_deferred import TASK_AUGMENTED_REQUESTS as TASK_AUGMENTED_REQUESTS
    from ._methods_deferred import TASKS_CANCEL as TASKS_CANCEL
    from ._methods_deferred import TASKS_CANCEL_V2 as TASKS_CANCEL_V2
    from ._methods_deferred import TASKS_GET as TASKS_GET
    from ._methods_deferred import TASKS_GET_V2 as TASKS_GET_V2
    from ._methods_deferred import TASKS_LIST as TASKS_LIST
    from ._methods_deferred import TASKS_RESULT as TASKS_RESULT
    from ._methods_deferred import TASKS_UPDATE as TASKS_UPDATE
    from ._methods_deferred import TOOLS_CALL_TASK as TOOLS_CALL_TASK
