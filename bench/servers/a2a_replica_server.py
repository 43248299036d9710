"""A2A benchmark replica: the chunk agent of ``a2a_rpcweave_server.py`` on a chosen store.

    python bench/servers/a2a_replica_server.py postgres DSN
    python bench/servers/a2a_replica_server.py sqlite PATH
    python bench/servers/a2a_replica_server.py memory

Several replicas on one PostgreSQL database serve the same tasks (``bench/a2a_replicas.py``).
Prints ``LISTENING <port>`` once serving (``a2a_uvicorn.serve_app``).
"""

from __future__ import annotations

import sys
from typing import Any

from a2a_rpcweave_server import chunk_agent
from a2a_uvicorn import serve_app

from a2a_layer import A2AServer, InMemoryTaskStore, PostgresTaskStore, SQLiteTaskStore, TaskStore
from a2a_layer.types import AgentCapabilities, AgentCard


def store_from(argv: list[str]) -> TaskStore:
    kind = argv[0] if argv else "memory"
    if kind == "postgres":
        return PostgresTaskStore(argv[1], pool_size=8)
    if kind == "sqlite":
        return SQLiteTaskStore(argv[1])
    return InMemoryTaskStore()


def build(base_url: str) -> Any:
    card = AgentCard(
        name="rpcweave replica bench agent",
        description="One text artifact, then completed.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
    )
    server = A2AServer(
        card,
        chunk_agent,
        store=store_from(sys.argv[1:]),
        url=base_url,
        rest_path=None,
        compat_v03=False,
    )
    return server.asgi_app()


if __name__ == "__main__":
    serve_app(build)
