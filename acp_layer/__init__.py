"""acp_layer: the Agent Client Protocol (ACP, protocolVersion 1) on rpcweave's JSON-RPC core.

`acp_layer.schema` holds the protocol's objects as pydantic models; the method tables that
pair each ACP method with its params and result types are built on them.
"""

from . import schema

__all__ = ["schema"]
