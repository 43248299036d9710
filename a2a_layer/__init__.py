"""a2a_layer: the Agent2Agent (A2A) protocol on rpcweave's JSON-RPC core.

Speaks A2A 1.0 (ProtoJSON objects, PascalCase methods, ``A2A-Version: 1.0``) and keeps
0.3 peers working (``message/send``, ``kind`` discriminators). The objects live in
`a2a_layer.types`.
"""

from . import types

__all__ = ["types"]
