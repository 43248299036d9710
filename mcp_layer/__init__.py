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
# connects over HTTP. Each name is declared once (`jsonrpc_core.install_lazy_exports`).

from typing import TYPE_CHECKING

from jsonrpc_core import install_lazy_exports

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from . import types as types
    from ._client import ClientSession as ClientSession
    from ._client_era import InputRoundsExceeded as InputRoundsExceeded
    from ._client_era import ProtocolVersionError as ProtocolVersionError
    from ._client_tasks import TaskCancelled as TaskCancelled
    from ._connect import connect as connect
    from ._connect import connect_http as connect_http
    from ._connect import connect_memory as connect_memory
    from ._connect import connect_sse as connect_sse
    from ._connect import connect_stdio as connect_stdio
    from ._context import Context as Context
    from ._context import InputRequest as InputRequest
    from ._errors import MCP_ERRORS as MCP_ERRORS
    from ._errors import HeaderMismatch as HeaderMismatch
    from ._errors import MissingRequiredClientCapability as MissingRequiredClientCapability
    from ._errors import ResourceNotFound as ResourceNotFound
    from ._errors import UnsupportedProtocolVersion as UnsupportedProtocolVersion
    from ._errors import URLElicitationRequired as URLElicitationRequired
    from ._listen import Subscription as Subscription
    from ._mrtr import RequestStateSealer as RequestStateSealer
    from ._pg_subscriptions import PostgresSubscriptionBus as PostgresSubscriptionBus
    from ._results import Audio as Audio
    from ._results import Image as Image
    from ._server import MCPServer as MCPServer
    from ._session import ServerSession as ServerSession
    from ._subscriptions import ChangeEvent as ChangeEvent
    from ._subscriptions import InMemorySubscriptionBus as InMemorySubscriptionBus
    from ._subscriptions import SubscriptionBus as SubscriptionBus
    from ._tasks import TaskManager as TaskManager
