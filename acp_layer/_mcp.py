"""Connecting an agent to the MCP servers a client passes in ``session/new``.

``mcp_layer`` (and with it httpx) is imported only when this is first used, so agents that
never talk MCP do not pay for it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from . import schema as s

if TYPE_CHECKING:
    from mcp_layer import ClientSession

__all__ = ["connect_mcp_servers"]

logger = logging.getLogger("acp_layer.mcp")


def _opener(server: s.McpServer, options: dict[str, Any]) -> Any:
    import mcp_layer

    if isinstance(server, s.McpServerStdio):
        env = {e.name: e.value for e in server.env}
        return mcp_layer.connect_stdio([server.command, *server.args], env=env, **options)
    if isinstance(server, (s.McpServerHttp, s.McpServerSse)):
        headers = {h.name: h.value for h in server.headers}
        connect = mcp_layer.connect_http if server.type == "http" else mcp_layer.connect_sse
        return connect(server.url, headers=headers, **options)
    raise ValueError(f"unsupported MCP server transport {getattr(server, 'type', None)!r}")


@asynccontextmanager
async def connect_mcp_servers(
    servers: Sequence[s.McpServer], *, ignore_errors: bool = False, **session_options: Any
) -> AsyncIterator[dict[str, ClientSession]]:
    """Connect to every MCP server of a session; yield initialized sessions by server name::

        async with connect_mcp_servers(self.client.sessions[sid].mcp_servers) as mcp:
            for name, session in mcp.items():
                tools = await session.list_all_tools()

    stdio servers are started with their ``env`` added to this process's environment; HTTP
    and SSE servers get their ``headers``. A server that cannot be reached raises, unless
    ``ignore_errors=True`` (then it is logged and left out, as are unknown transports).
    ``session_options`` go to each `mcp_layer.ClientSession`. All are closed on exit.
    """
    sessions: dict[str, ClientSession] = {}
    async with AsyncExitStack() as stack:
        for server in servers:
            name = getattr(server, "name", None) or f"server{len(sessions) + 1}"
            try:
                sessions[name] = await stack.enter_async_context(
                    _opener(server, dict(session_options))
                )
            except Exception as exc:
                if not ignore_errors:
                    raise
                logger.warning("MCP server %r left out: %s", name, exc)
        yield sessions
