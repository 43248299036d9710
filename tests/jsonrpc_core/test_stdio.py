"""stdio specifics: spawning, environment, stderr, shutdown, stdout protection."""

from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path

import anyio
import pytest
from _connect import ECHO_SERVER

from jsonrpc_core import ConnectionClosed, Peer, TransportError, spawn_stdio

pytestmark = pytest.mark.anyio


def script(tmp_path: Path, body: str) -> list[str]:
    path = tmp_path / "server.py"
    path.write_text(textwrap.dedent(body))
    return [sys.executable, str(path)]


SERVER_WITH_PRINTS = """
    import os, sys, anyio
    sys.path.insert(0, {root!r})
    from jsonrpc_core import MethodRegistry, Peer, stdio_server

    registry = MethodRegistry()

    def env(params, ctx):
        print("a stray print must not corrupt the protocol stream")
        return os.environ.get(params["name"])

    registry.on("env", env)

    async def main():
        print("stray print before serving")
        async with stdio_server() as stream:
            print("stray print while serving", flush=True)
            await Peer(stream, registry).run()

    anyio.run(main)
"""


async def test_environment_is_inherited_and_prints_do_not_corrupt_stdout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RPCWEAVE_TEST_INHERITED", "from-parent")
    command = script(tmp_path, SERVER_WITH_PRINTS.format(root=str(ECHO_SERVER.parents[2])))
    async with spawn_stdio(command, env={"RPCWEAVE_EXTRA": "extra"}) as process:
        async with Peer(process) as peer:
            with anyio.fail_after(20):
                assert await peer.request("env", {"name": "RPCWEAVE_TEST_INHERITED"}) == (
                    "from-parent"
                )
                assert await peer.request("env", {"name": "RPCWEAVE_EXTRA"}) == "extra"
    assert any("stray print while serving" in line for line in process.stderr_tail)


async def test_env_can_be_isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RPCWEAVE_TEST_INHERITED", "from-parent")
    command = script(tmp_path, SERVER_WITH_PRINTS.format(root=str(ECHO_SERVER.parents[2])))
    env = {"PATH": os.environ.get("PATH", ""), "RPCWEAVE_EXTRA": "only"}
    async with spawn_stdio(command, env=env, inherit_env=False) as process:
        async with Peer(process) as peer:
            with anyio.fail_after(20):
                assert await peer.request("env", {"name": "RPCWEAVE_TEST_INHERITED"}) is None


async def test_stderr_is_surfaced_and_exit_code_reported(tmp_path: Path) -> None:
    command = script(
        tmp_path,
        """
        import sys
        sys.stdin.readline()
        print("fatal: configuration missing", file=sys.stderr, flush=True)
        sys.exit(3)
        """,
    )
    lines: list[str] = []
    async with spawn_stdio(command, on_stderr=lines.append) as process:
        async with Peer(process) as peer:
            with anyio.fail_after(20), pytest.raises(ConnectionClosed) as closed:
                await peer.request("anything")
    assert "code 3" in str(closed.value)
    assert "configuration missing" in str(closed.value)
    assert lines == ["fatal: configuration missing"]


async def test_unknown_command_is_a_clear_transport_error() -> None:
    with pytest.raises(TransportError, match="cannot start"):
        async with spawn_stdio(["/nonexistent/rpcweave-server"]):
            pass


async def test_shutdown_terminates_a_server_that_ignores_stdin_close(tmp_path: Path) -> None:
    command = script(
        tmp_path,
        """
        import threading
        threading.Event().wait()  # never returns: stdin's end is ignored
        """,
    )
    with anyio.fail_after(20):
        async with spawn_stdio(command, shutdown_timeout=0.2) as process:
            pass
    assert process.process.returncode is not None


async def test_server_finishes_when_client_closes_stdin() -> None:
    with anyio.fail_after(20):
        async with spawn_stdio([sys.executable, str(ECHO_SERVER)], shutdown_timeout=10) as process:
            async with Peer(process) as peer:
                assert await peer.request("echo", [1]) == [1]
    assert process.process.returncode == 0
