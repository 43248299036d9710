"""mcp_layer: the Model Context Protocol (MCP) on rpcweave's JSON-RPC core.

Servers: `MCPServer` with ``@server.tool()``, ``@server.resource(uri)``,
``@server.prompt()``; a `Context` parameter gives logging, progress, sampling,
elicitation and roots. Clients: `connect` (a command, a URL or a server object) yields
an initialized `ClientSession`. `mcp_layer.types` holds the protocol's objects
(revision 2025-11-25, lenient towards 2025-06-18, 2025-03-26 and 2024-11-05 peers).

Both protocol eras, from the same objects: the ``initialize`` handshake (2025-11-25 and
earlier) and the per-request metadata of 2026-07-28 (``server/discover``, multi
round-trip requests with a sealed ``requestState``, ``subscriptions/listen`` through a
`SubscriptionBus`, caching hints, the tasks extension with `TaskManager`). A server
serves either era on the same connection or endpoint; a client picks one with
``protocol_version`` (``"auto"`` probes with ``server/discover`` and falls back).
"""

from typing import TYPE_CHECKING, Any

from . import types
from ._client import ClientSession, InputRoundsExceeded, ProtocolVersionError
from ._connect import connect, connect_http, connect_memory, connect_sse, connect_stdio
from ._context import Context, InputRequest
from ._errors import (
    MCP_ERRORS,
    HeaderMismatch,
    MissingRequiredClientCapability,
    ResourceNotFound,
    UnsupportedProtocolVersion,
    URLElicitationRequired,
)
from ._listen import Subscription
from ._mrtr import RequestStateSealer
from ._results import Audio, Image
from ._server import MCPServer
from ._session import ServerSession
from ._subscriptions import ChangeEvent, InMemorySubscriptionBus, SubscriptionBus
from ._tasks import TaskManager

if TYPE_CHECKING:
    from ._pg_subscriptions import PostgresSubscriptionBus


def __getattr__(name: str) -> Any:
    # Needs the postgres extra (psycopg): imported on first use only.
    if name == "PostgresSubscriptionBus":
        from ._pg_subscriptions import PostgresSubscriptionBus

        return PostgresSubscriptionBus
    raise AttributeError(f"module 'mcp_layer' has no attribute {name!r}")


__all__ = [
    "MCP_ERRORS",
    "Audio",
    "ChangeEvent",
    "ClientSession",
    "Context",
    "HeaderMismatch",
    "Image",
    "InMemorySubscriptionBus",
    "InputRequest",
    "InputRoundsExceeded",
    "MCPServer",
    "MissingRequiredClientCapability",
    "PostgresSubscriptionBus",
    "ProtocolVersionError",
    "RequestStateSealer",
    "ResourceNotFound",
    "ServerSession",
    "Subscription",
    "SubscriptionBus",
    "TaskManager",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
    "connect",
    "connect_http",
    "connect_memory",
    "connect_sse",
    "connect_stdio",
    "types",
]
