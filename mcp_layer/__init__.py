"""mcp_layer: the Model Context Protocol (MCP) on rpcweave's JSON-RPC core.

`mcp_layer.types` holds the protocol's objects as pydantic models (revision 2025-11-25,
lenient towards what 2025-06-18, 2025-03-26 and 2024-11-05 peers send).
"""

from . import types

__all__ = ["types"]
