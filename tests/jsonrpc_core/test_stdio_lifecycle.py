"""A spawned server's whole process group ends with its stream (jsonrpc_core.spawn_stdio).

The servers are started through tests/acp_fixtures/launcher.py, like an npm package's
launcher: the launcher's child holds the pipes and, with ``--linger``, outlives its
program. Every process of a test carries a marker variable (tests/_processes.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from _connect import ECHO_SERVER
from _processes import MARK, marked, none_left, running

from jsonrpc_core import Peer, spawn_stdio
from mcp_layer import connect_stdio

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "acp_fixtures"
PY = sys.executable
LAUNCHER = [PY, str(FIXTURES / "launcher.py")]
EVERYTHING = ROOT / "examples" / "mcp" / "everything_server.py"


@pytest.fixture
def mark() -> Iterator[str]:
    """A marker for the processes of the test (tests/_processes.py)."""
    yield from marked()


@pytest.mark.anyio
async def test_spawn_stdio_ends_a_launchers_lingering_child(mark: str) -> None:
    command = [*LAUNCHER, "--linger", PY, str(ECHO_SERVER)]
    with anyio.fail_after(30):
        async with spawn_stdio(command, env={MARK: mark}, shutdown_timeout=0.3) as process:
            async with Peer(process) as peer:
                assert await peer.request("echo", [1]) == [1]
            assert len(running(mark)) == 3  # launcher, its child, the echo server
    assert none_left(mark) == []


@pytest.mark.anyio
async def test_an_mcp_stdio_client_leaves_no_process_behind(mark: str) -> None:
    command = [*LAUNCHER, "--linger", PY, str(EVERYTHING), "--stdio"]
    with anyio.fail_after(30):
        async with connect_stdio(command, env={MARK: mark}) as client:
            result = await client.call_tool("test_simple_text", {})
            assert "simple text" in str(result.content[0])
    assert none_left(mark) == []


@pytest.mark.anyio
async def test_the_child_leads_a_session_and_process_group_of_its_own() -> None:
    """So a terminal's Ctrl-C (SIGINT to its foreground process group) misses it."""
    code = "import os, sys; print(os.getpgrp(), os.getsid(0), file=sys.stderr); sys.stdin.read()"
    said: list[str] = []
    got = anyio.Event()

    def on_stderr(line: str) -> None:
        said.append(line)
        got.set()

    with anyio.fail_after(30):
        async with spawn_stdio([PY, "-c", code], on_stderr=on_stderr) as process:
            await got.wait()
    pid = process.process.pid
    assert said == [f"{pid} {pid}"]
    assert os.getpgrp() != pid


def test_closing_leaves_no_unclosed_pipe_for_the_event_loop(tmp_path: Path, mark: str) -> None:
    """In a process of its own, as the warning comes when its interpreter ends."""
    script = tmp_path / "spawn.py"
    script.write_text(
        "import sys, anyio\n"
        "from jsonrpc_core import spawn_stdio\n"
        "async def main():\n"
        f"    async with spawn_stdio({[*LAUNCHER, '--linger', PY, '-c', 'pass']!r},"
        " shutdown_timeout=0.2):\n"
        "        pass\n"
        "anyio.run(main)\n"
        "import gc; gc.collect()\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", MARK: mark}
    done = subprocess.run([PY, str(script)], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert none_left(mark) == []
