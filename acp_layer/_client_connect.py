"""Opening a `ClientConnection`: on any message stream, or to a spawned agent process.

`spawn_agent` also runs the login flows that need the agent's command (``_auth``): it
restarts the agent with an ``env_var`` method's variables, or runs a ``terminal`` login with
the same command, then reconnects and initializes again.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from jsonrpc_core import DEFAULT_MAX_MESSAGE_SIZE, MessageStream, Peer, spawn_stdio

from . import schema as s
from ._auth import (
    AskEnv,
    AuthMethodEnvVar,
    LoginFailed,
    TerminalLogin,
    auth_method_kind,
    env_var_values,
)
from ._client import Client
from ._client_connection import ClientConnection
from ._client_server import ClientServer
from ._errors import ACP_ERRORS
from ._rpc import cancel_request_message
from ._telemetry import ACP_CLIENT_TELEMETRY

if TYPE_CHECKING:
    from jsonrpc_core import WireTap  # the wire tap loads only where one is given

__all__ = ["connect_agent", "spawn_agent"]


@asynccontextmanager
async def connect_agent(
    client: Client,
    stream: MessageStream,
    *,
    initialize: bool = True,
    unstable: bool = False,
    tap: WireTap | None = None,
    request_timeout: float | None = None,
    terminal_auth: bool = False,
    initialize_timeout: float | None = None,
) -> AsyncIterator[ClientConnection]:
    """A `ClientConnection` to the agent at the other end of ``stream``.

    With ``initialize=True`` (the default) the ``initialize`` exchange is done before the
    connection is handed over. ``request_timeout`` bounds every call to the agent (none by
    default: prompt turns can be long); ``initialize_timeout`` bounds ``initialize`` (a
    `TimeoutError`). ``terminal_auth`` advertises ``auth.terminal``: pass
    it only if you can run the agent's terminal login (`spawn_agent` does, given a
    ``terminal_login``).
    """
    if tap is not None:
        stream = tap.wrap(stream, local="client", remote="agent", transport="acp")
    async with anyio.create_task_group() as task_group:
        peer = Peer(
            stream,
            name="acp-client",
            request_timeout=request_timeout,
            on_outgoing_cancel=cancel_request_message,
            errors=ACP_ERRORS,
            telemetry=ACP_CLIENT_TELEMETRY,
        )
        conn = ClientConnection(client, peer, task_group)
        conn.terminal_auth = terminal_auth
        client.on_connect(conn)
        peer.registry = ClientServer(conn).registry(unstable)
        try:
            async with peer:
                if initialize:
                    with anyio.fail_after(initialize_timeout):
                        await conn.initialize()
                yield conn
        finally:
            with anyio.CancelScope(shield=True):
                await client.aclose()
            task_group.cancel_scope.cancel()


@asynccontextmanager
async def spawn_agent(
    command: Sequence[str],
    client: Client,
    *,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    cwd: str | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    on_stderr: Callable[[str], Any] | None = None,
    initialize: bool = True,
    unstable: bool = False,
    tap: WireTap | None = None,
    request_timeout: float | None = None,
    initialize_timeout: float | None = None,
    auth: str | None = None,
    ask_env: AskEnv | None = None,
    terminal_login: TerminalLogin | None = None,
) -> AsyncIterator[ClientConnection]:
    """Start an agent process and yield an (initialized) `ClientConnection` to it.

    The agent inherits this process's full environment plus ``env`` (``inherit_env=False``
    passes only ``env``); its stderr lines are logged on ``jsonrpc_core.stdio``, passed to
    ``on_stderr`` and kept in ``connection.process.stderr_tail``. A message over
    ``max_message_size`` bytes (default 16 MiB) is answered with an error and skipped; the
    connection lives on. On exit the agent's stdin is closed, then it is terminated.
    ``initialize_timeout`` bounds each ``initialize`` (see `connect_agent`).

    ``auth`` names one of the agent's ``authMethods`` to log in with before the connection is
    handed over (`AuthMethodNotOffered` if it offers none of that id, `LoginFailed` if the
    flow fails): an ``agent`` method is sent to ``authenticate``; for an ``env_var`` method
    each variable comes from ``env``, this process's environment (when inherited) or
    ``ask_env``, the agent is restarted if one was not set yet, then ``authenticate`` is
    called; a ``terminal`` method runs ``command`` plus its ``args`` with its ``env`` through
    ``terminal_login`` (e.g. `run_terminal_login`), and on exit status 0 the agent is started
    again. ``auth.terminal`` is advertised only when ``terminal_login`` is given.
    """
    if auth is not None and not initialize:
        raise ValueError("auth needs initialize=True: the methods come from initialize")
    base_env = dict(env or {})

    def start(extra: Mapping[str, str]) -> AbstractAsyncContextManager[ClientConnection]:
        return _spawn_once(
            command,
            client,
            env={**base_env, **extra},
            inherit_env=inherit_env,
            cwd=cwd,
            max_message_size=max_message_size,
            on_stderr=on_stderr,
            initialize=initialize,
            unstable=unstable,
            tap=tap,
            request_timeout=request_timeout,
            initialize_timeout=initialize_timeout,
            terminal_auth=terminal_login is not None,
        )

    if auth is None:
        async with start({}) as conn:
            yield conn
        return
    async with _logged_in(
        start, auth, command, base_env, inherit_env, cwd, ask_env, terminal_login
    ) as conn:
        yield conn


@asynccontextmanager
async def _logged_in(
    start: Callable[[Mapping[str, str]], AbstractAsyncContextManager[ClientConnection]],
    auth: str,
    command: Sequence[str],
    base_env: Mapping[str, str],
    inherit_env: bool,
    cwd: str | None,
    ask_env: AskEnv | None,
    terminal_login: TerminalLogin | None,
) -> AsyncIterator[ClientConnection]:
    """A connection that ``start`` opened (given the extra variables of the agent's
    environment), logged in with the method ``auth`` as `spawn_agent` describes: on the
    first connection, or on a second one after a restart or a terminal login."""
    # A login step's failure is raised after the connection it used is closed, so that it
    # reaches the caller as itself, not inside the connection's exception group.
    failure: Exception | None = None
    extra: dict[str, str] = {}
    async with start(extra) as conn:
        try:
            method = conn.auth_method(auth)
            kind = auth_method_kind(method)
            restart = kind == "terminal"
            if kind == "env_var":
                assert isinstance(method, AuthMethodEnvVar)
                extra, restart = await env_var_values(
                    method, base_env, inherit_env=inherit_env, ask_env=ask_env
                )
            elif kind == "unknown":
                raise LoginFailed(f"login method {auth!r} is of a type rpcweave does not know")
            if not restart and kind != "terminal":
                await conn.authenticate(auth)
        except Exception as exc:
            failure = exc
        if failure is None and not restart:
            yield conn
            return
    if failure is not None:
        raise failure
    if kind == "terminal":
        assert isinstance(method, s.AuthMethodTerminal)
        await _terminal_login(command, method, base_env, inherit_env, cwd, terminal_login)
    async with start(extra) as conn:
        if kind == "env_var":
            try:
                await conn.authenticate(auth)
            except Exception as exc:
                failure = exc
        if failure is None:
            yield conn
            return
    raise failure


async def _terminal_login(
    command: Sequence[str],
    method: s.AuthMethodTerminal,
    env: Mapping[str, str],
    inherit_env: bool,
    cwd: str | None,
    terminal_login: TerminalLogin | None,
) -> None:
    """Run the login process of a ``terminal`` method; `LoginFailed` unless it exits 0."""
    if terminal_login is None:
        raise LoginFailed(f"{method.id!r} is a terminal login and no terminal can be given to it")
    argv = [*command, *method.args]
    login_env = {**(os.environ if inherit_env else {}), **env, **method.env}
    status = await terminal_login(argv, login_env, cwd)
    if status != 0:
        raise LoginFailed(f"the login ({' '.join(argv)}) ended with exit status {status}")


@asynccontextmanager
async def _spawn_once(
    command: Sequence[str],
    client: Client,
    *,
    env: Mapping[str, str],
    inherit_env: bool,
    cwd: str | None,
    max_message_size: int,
    on_stderr: Callable[[str], Any] | None,
    initialize: bool,
    unstable: bool,
    tap: WireTap | None,
    request_timeout: float | None,
    initialize_timeout: float | None,
    terminal_auth: bool,
) -> AsyncIterator[ClientConnection]:
    async with spawn_stdio(
        command,
        env=env,
        inherit_env=inherit_env,
        cwd=cwd,
        max_message_size=max_message_size,
        on_stderr=on_stderr,
    ) as process:
        async with connect_agent(
            client,
            process,
            initialize=initialize,
            unstable=unstable,
            tap=tap,
            request_timeout=request_timeout,
            initialize_timeout=initialize_timeout,
            terminal_auth=terminal_auth,
        ) as conn:
            conn.process = process
            yield conn
