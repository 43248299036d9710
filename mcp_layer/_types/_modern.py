"""The objects MCP 2026-07-28 adds: discovery, multi round-trip results, subscriptions.

2026-07-28 ("modern") drops the ``initialize`` handshake: every request carries its
protocol version, the client's capabilities and identity in ``_meta`` under the keys
below, and every result says what it is in ``resultType``.
"""

from __future__ import annotations

from typing import Any

from ._base import CacheableResult, MCPModel, NotificationParams, RequestParams, Result
from ._capabilities import ClientCapabilities, ServerCapabilities

__all__ = [
    "CLIENT_CAPABILITIES_META_KEY",
    "CLIENT_INFO_META_KEY",
    "LATEST_MODERN_VERSION",
    "LOG_LEVEL_META_KEY",
    "MODERN_PROTOCOL_VERSIONS",
    "PROTOCOL_VERSION_META_KEY",
    "SERVER_INFO_META_KEY",
    "SUBSCRIPTION_ID_META_KEY",
    "TASKS_EXTENSION",
    "DiscoverResult",
    "InputRequiredResult",
    "MissingRequiredClientCapabilityErrorData",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "UnsupportedProtocolVersionErrorData",
]

MODERN_PROTOCOL_VERSIONS: tuple[str, ...] = ("2026-07-28",)
"""The per-request ("modern") revisions this layer speaks, newest first."""

LATEST_MODERN_VERSION = MODERN_PROTOCOL_VERSIONS[0]

PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_META_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_META_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_META_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The tasks extension's identifier, in ``capabilities.extensions`` on both sides (defined
here, not in `._tasks_ext`, so that a server declares it without loading the extension)."""


class DiscoverResult(CacheableResult):
    """The answer to ``server/discover``: versions, capabilities, and instructions.

    The server names itself in ``_meta`` under `SERVER_INFO_META_KEY`.
    """

    supported_versions: list[str]
    capabilities: ServerCapabilities
    instructions: str | None = None


class InputRequiredResult(Result):
    """``resultType: "input_required"``: the server needs input before it can answer.

    ``input_requests`` maps server-chosen keys to requests (``elicitation/create``,
    ``sampling/createMessage``, ``roots/list``: each ``{"method", "params"}``); the
    client retries the original request with the answers under the same keys in
    ``inputResponses`` and echoes ``request_state`` unchanged.
    """

    input_requests: dict[str, dict[str, Any]] | None = None
    request_state: str | None = None


class SubscriptionFilter(MCPModel):
    """The notifications a client opts in to on ``subscriptions/listen``.

    ``task_ids`` belongs to the tasks extension (``notifications/tasks``).
    """

    tools_list_changed: bool | None = None
    prompts_list_changed: bool | None = None
    resources_list_changed: bool | None = None
    resource_subscriptions: list[str] | None = None
    task_ids: list[str] | None = None


class SubscriptionsListenRequestParams(RequestParams):
    """Parameters for ``subscriptions/listen``."""

    notifications: SubscriptionFilter


class SubscriptionsAcknowledgedNotificationParams(NotificationParams):
    """``notifications/subscriptions/acknowledged``: what the server agreed to send."""

    notifications: SubscriptionFilter


class UnsupportedProtocolVersionErrorData(MCPModel):
    """``data`` of an `UnsupportedProtocolVersion` error (-32022)."""

    supported: list[str]
    requested: str


class MissingRequiredClientCapabilityErrorData(MCPModel):
    """``data`` of a `MissingRequiredClientCapability` error (-32021)."""

    required_capabilities: ClientCapabilities
