"""The A2A gRPC binding (spec 10), an optional extra: ``pip install rpcweave[grpc]``.

Server: `grpc_handler` (one ``grpc`` generic handler over the method records) and
`GrpcServer`; `A2AServer(..., grpc_port=N)` runs one beside the HTTP bindings. Client:
`GrpcClientTransport`, which `A2AClient` picks for a card's ``GRPC`` interface.
"""

from ._client import GrpcClientTransport
from ._server import GrpcServer, grpc_handler, require_asyncio

__all__ = ["GrpcClientTransport", "GrpcServer", "grpc_handler", "require_asyncio"]
