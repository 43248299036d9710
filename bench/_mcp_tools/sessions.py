"""Server processes and sessions of each pair, in either era: launch ``pair.server``,
open a ``pair.client`` session to it, shut both down."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from .._harness import FLOOR, FLOOR_PAIR, REPO_ROOT, RPCWEAVE, Pair, listening_process
from .floor import floor_session, no_listing, stdio_floor_session
from .plan import (
    HANDSHAKE,
    HTTP,
    HTTP_SHUTDOWN_TIMEOUT,
    HTTP_STARTUP_TIMEOUT,
    MODERN,
    SERVER_SCRIPTS,
    STDIO,
    Session,
    session_calls,
)

__all__ = ["CHILD_ENV", "open_session"]


def _server_pid(script: Path) -> int | None:
    """The pid of our child process running ``script`` (the server), if exactly one."""
    me = os.getpid()
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
            # Fields after the command name, which is in parentheses and may hold spaces.
            ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
            if ppid != me:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if str(script).encode() in handle.read():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found[0] if len(found) == 1 else None


@asynccontextmanager
async def _http_server(server: str, log: TextIO) -> AsyncIterator[tuple[str, int]]:
    """Start a fixture server with ``--http``; yield its ``/mcp`` URL and pid; stop it."""
    async with listening_process(
        [str(SERVER_SCRIPTS[server]), "--http"],
        what=f"{server} HTTP server",
        log=log,
        url_suffix="/mcp",
        startup_timeout=HTTP_STARTUP_TIMEOUT,
        shutdown_timeout=HTTP_SHUTDOWN_TIMEOUT,
    ) as (url, pid):
        yield url, pid


CHILD_ENV: dict[str, str] = {}
"""Environment for servers launched by the official client (see `bytecode_caches`)."""


@asynccontextmanager
async def _official_modern_session(
    transport: str, script: Path, log: TextIO, url: str, pid: int | None
) -> AsyncIterator[Session]:
    """The official `mcp.Client` in its default mode (``"auto"``: ``server/discover``,
    then 2026-07-28 with a server that speaks it), over stdio or Streamable HTTP."""
    from mcp import Client, StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if transport == STDIO:
        params = StdioServerParameters(
            command=sys.executable, args=[str(script)], cwd=str(REPO_ROOT), env=CHILD_ENV
        )
        connection: Any = stdio_client(params, errlog=log)
    else:
        connection = streamable_http_client(url)
    async with Client(connection) as client:
        if client.protocol_version != MODERN:
            raise RuntimeError(f"official client negotiated {client.protocol_version}")
        yield Session(*session_calls(client), pid if transport == HTTP else _server_pid(script))


@asynccontextmanager
async def open_session(
    pair: Pair, transport: str, log: TextIO, in_flight: int = 1, era: str = HANDSHAKE
) -> AsyncIterator[Session]:
    """Launch ``pair.server`` and open a ``pair.client`` session to it in ``era``
    (``in_flight`` only tells the stdio floor whether to start its reader task)."""
    script = SERVER_SCRIPTS[pair.server]
    if era == MODERN:
        async with _modern_session(pair, transport, script, log) as session:
            yield session
        return
    if pair == FLOOR_PAIR:
        if transport == STDIO:
            async with stdio_floor_session(in_flight, log) as session:
                yield session
            return
        async with _http_server(FLOOR, log) as (url, pid), floor_session(url) as call_echo:
            yield Session(call_echo, no_listing, pid)
        return
    if transport == STDIO:
        if pair.client == RPCWEAVE:
            from mcp_layer import connect_stdio

            command = [sys.executable, str(script)]
            async with connect_stdio(command, cwd=str(REPO_ROOT)) as session:
                yield Session(*session_calls(session), _server_pid(script))
        else:
            from mcp import ClientSession, StdioServerParameters, stdio_client

            # The official client gives its server a trimmed environment: pass on the
            # bytecode-cache settings every other process of the run has.
            params = StdioServerParameters(
                command=sys.executable, args=[str(script)], cwd=str(REPO_ROOT), env=CHILD_ENV
            )
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield Session(*session_calls(session), _server_pid(script))
        return
    async with _http_server(pair.server, log) as (url, pid):
        if pair.client == RPCWEAVE:
            from mcp_layer import connect_http

            async with connect_http(url) as session:
                yield Session(*session_calls(session), pid)
        else:
            from mcp import ClientSession
            from mcp.client.streamable_http import streamable_http_client

            async with (
                streamable_http_client(url) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                yield Session(*session_calls(session), pid)


@asynccontextmanager
async def _modern_session(
    pair: Pair, transport: str, script: Path, log: TextIO
) -> AsyncIterator[Session]:
    """A 2026-07-28 session of ``pair`` (rpcweave's client asks for it by version, the
    official one negotiates it by default); fails if either end settles elsewhere."""
    if transport == STDIO:
        if pair.client == RPCWEAVE:
            from mcp_layer import connect_stdio

            command = [sys.executable, str(script)]
            async with connect_stdio(command, cwd=str(REPO_ROOT), protocol_version=MODERN) as ours:
                yield Session(*session_calls(ours), _server_pid(script))
            return
        async with _official_modern_session(STDIO, script, log, "", None) as session:
            yield session
        return
    async with _http_server(pair.server, log) as (url, pid):
        if pair.client == RPCWEAVE:
            from mcp_layer import connect_http

            async with connect_http(url, protocol_version=MODERN) as ours:
                yield Session(*session_calls(ours), pid)
            return
        async with _official_modern_session(HTTP, script, log, url, pid) as session:
            yield session
