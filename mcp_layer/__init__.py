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

# Every name is loaded on first use (PEP 562): a server process never imports the client,
# a client never imports the server, and neither pays for HTTP unless it serves or
# connects over HTTP. `TYPE_CHECKING` keeps the names visible to type checkers.

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import types
    from ._client import ClientSession, InputRoundsExceeded, ProtocolVersionError
    from ._client_tasks import TaskCancelled
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
    from ._pg_subscriptions import PostgresSubscriptionBus
    from ._results import Audio, Image
    from ._server import MCPServer
    from ._session import ServerSession
    from ._subscriptions import ChangeEvent, InMemorySubscriptionBus, SubscriptionBus
    from ._tasks import TaskManager

_LAZY: dict[str, str] = {
    "types": "",
    "ClientSession": "_client",
    "InputRoundsExceeded": "_client",
    "ProtocolVersionError": "_client",
    "TaskCancelled": "_client_tasks",
    "connect": "_connect",
    "connect_http": "_connect",
    "connect_memory": "_connect",
    "connect_sse": "_connect",
    "connect_stdio": "_connect",
    "Context": "_context",
    "InputRequest": "_context",
    "HeaderMismatch": "_errors",
    "MCP_ERRORS": "_errors",
    "MissingRequiredClientCapability": "_errors",
    "ResourceNotFound": "_errors",
    "URLElicitationRequired": "_errors",
    "UnsupportedProtocolVersion": "_errors",
    "Subscription": "_listen",
    "RequestStateSealer": "_mrtr",
    "PostgresSubscriptionBus": "_pg_subscriptions",
    "Audio": "_results",
    "Image": "_results",
    "MCPServer": "_server",
    "ServerSession": "_session",
    "ChangeEvent": "_subscriptions",
    "InMemorySubscriptionBus": "_subscriptions",
    "SubscriptionBus": "_subscriptions",
    "TaskManager": "_tasks",
}
"""Exported name -> the submodule that defines it ("" for a submodule itself)."""


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    if module_name:
        value = getattr(importlib.import_module("." + module_name, __name__), name)
    else:
        value = importlib.import_module("." + name, __name__)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
    "TaskCancelled",
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
