"""mcp_layer: the Model Context Protocol (MCP) on rpcweave's JSON-RPC core.

Servers: `MCPServer` with ``@server.tool()``, ``@server.resource(uri)``,
``@server.prompt()``; a `Context` parameter gives logging, progress, sampling,
elicitation and roots. Clients: `connect` (a command, a URL or a server object) yields
an initialized `ClientSession`. `mcp_layer.types` holds the protocol's objects
(revision 2025-11-25, lenient towards 2025-06-18, 2025-03-26 and 2024-11-05 peers).
"""

from . import types
from ._client import ClientSession, ProtocolVersionError
from ._connect import connect, connect_http, connect_memory, connect_sse, connect_stdio
from ._context import Context
from ._errors import MCP_ERRORS, ResourceNotFound, URLElicitationRequired
from ._results import Audio, Image
from ._server import MCPServer
from ._session import ServerSession

__all__ = [
    "MCP_ERRORS",
    "Audio",
    "ClientSession",
    "Context",
    "Image",
    "MCPServer",
    "ProtocolVersionError",
    "ResourceNotFound",
    "ServerSession",
    "URLElicitationRequired",
    "connect",
    "connect_http",
    "connect_memory",
    "connect_sse",
    "connect_stdio",
    "types",
]
