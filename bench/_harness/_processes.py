"""Server processes and their clients: launching a server and waiting for its port,
scratch logs for its stderr, a minimal NDJSON client, bytecode caches for children, and
the import time of a statement in a fresh interpreter."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TextIO, cast

__all__ = [
    "REPO_ROOT",
    "SERVERS_DIR",
    "NdjsonClient",
    "bytecode_caches",
    "import_seconds",
    "listening_process",
    "log_tail",
    "scratch_log",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVERS_DIR = Path(__file__).resolve().parents[1] / "servers"


def scratch_log() -> TextIO:
    """A temporary file for a server's stderr (its tail goes into error messages)."""
    return cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8"))


def log_tail(log: TextIO, lines: int = 6) -> str:
    """The last ``lines`` lines of ``log``, joined with `` | `` (empty if unreadable)."""
    try:
        log.flush()
        log.seek(0)
        return " | ".join(log.read().strip().splitlines()[-lines:])
    except (OSError, ValueError):
        return ""


@asynccontextmanager
async def listening_process(
    args: Sequence[str],
    *,
    what: str,
    log: TextIO | None = None,
    ready: str = "LISTENING",
    url_suffix: str = "",
    stop: signal.Signals = signal.SIGINT,
    startup_timeout: float = 30.0,
    shutdown_timeout: float = 10.0,
) -> AsyncIterator[tuple[str, int]]:
    """Run ``python *args`` (from the repository root, stdin closed, stderr to ``log``
    or inherited), wait for its first stdout line ``<ready> <port>``, and yield
    ``http://127.0.0.1:<port><url_suffix>`` and its pid. On exit send ``stop``, and kill
    it if it has not exited after ``shutdown_timeout`` seconds."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=log,
        cwd=REPO_ROOT,
    )
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), startup_timeout)
        word, _, port = line.decode().partition(" ")
        if word != ready or not port.strip().isdigit():
            detail = f"; {log_tail(log)}" if log is not None else ""
            raise RuntimeError(f"{what} did not start: {line!r}{detail}")
        yield f"http://127.0.0.1:{int(port)}{url_suffix}", process.pid
    finally:
        if process.returncode is None:
            process.send_signal(stop)
            try:
                await asyncio.wait_for(process.wait(), shutdown_timeout)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()


class NdjsonClient:
    """A minimal hand-written JSON-RPC client of a subprocess speaking NDJSON on its pipes
    (standard library only), for floor contenders.

    With one request in flight, `call_sequential` writes the request and reads lines up
    to its response. With several, `start_reader` starts a task that routes each response
    to its caller's future, and callers use `call_multiplexed`. Subclasses may override
    `_reply` to look at the other messages on the way.
    """

    peer = "floor server"
    """How error messages name the other end."""
    close_timeout: float | None = 10.0
    """Seconds `close` waits for the process to exit before killing it (None: no limit)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self._writer = process.stdin
        self._reader = process.stdout
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._reader_task: asyncio.Task[None] | None = None

    def _encode(self, method: str, params: Any) -> tuple[int, bytes]:
        """The next request id and the request as one compact JSON line."""
        self._next_id += 1
        request = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        return self._next_id, json.dumps(request, separators=(",", ":")).encode() + b"\n"

    def _reply(self, line: bytes) -> dict[str, Any] | None:
        """The message on ``line`` if it is a response (an id and no method), else None."""
        message: dict[str, Any] = json.loads(line)
        return message if "id" in message and "method" not in message else None

    async def call_sequential(self, method: str, params: Any) -> Any:
        """One request; only valid while nothing else is in flight."""
        request_id, data = self._encode(method, params)
        self._writer.write(data)
        await self._writer.drain()
        while True:
            line = await self._reader.readline()
            if not line:
                raise ConnectionError(f"{self.peer} closed the connection")
            reply = self._reply(line)
            if reply is None:
                continue
            if reply.get("id") != request_id:
                raise RuntimeError(f"floor: response id {reply.get('id')!r}, not {request_id}")
            if "error" in reply:
                raise RuntimeError(f"floor: error response {reply['error']!r}")
            return reply["result"]

    def start_reader(self) -> None:
        """Switch to multiplexed mode: a task routes each response to its caller."""
        self._reader_task = asyncio.get_running_loop().create_task(self._read_replies())

    async def call_multiplexed(self, method: str, params: Any) -> Any:
        """One request that may overlap with others (after `start_reader`)."""
        request_id, data = self._encode(method, params)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        self._writer.write(data)
        await self._writer.drain()
        return await future

    async def _read_replies(self) -> None:
        try:
            while line := await self._reader.readline():
                reply = self._reply(line)
                if reply is None:
                    continue
                future = self._pending.pop(reply["id"], None)
                if future is None or future.done():
                    continue
                if "error" in reply:
                    future.set_exception(RuntimeError(f"floor: error {reply['error']!r}"))
                else:
                    future.set_result(reply["result"])
        finally:
            pending, self._pending = self._pending, {}
            for future in pending.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"{self.peer} closed the connection"))

    async def close(self) -> None:
        """Close stdin, let the process exit on end of input, and reap it."""
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            await asyncio.wait_for(self.process.wait(), self.close_timeout)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
        if self._reader_task is not None:
            await self._reader_task


@contextmanager
def bytecode_caches() -> Iterator[dict[str, str]]:
    """Let the Python processes started inside read and write bytecode caches.

    Installed packages have theirs; a source checkout run with ``PYTHONDONTWRITEBYTECODE``
    set has none, and every server launch would then compile the project's modules from
    source, which no installed deployment does. If that variable is set, this unsets it and
    points ``PYTHONPYCACHEPREFIX`` at a temporary directory (nothing is written to the
    checkout) until the block ends; otherwise it changes nothing. Yields the variables
    to pass to launchers that do not inherit this environment."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        yield {}
        return
    saved = os.environ.pop("PYTHONDONTWRITEBYTECODE")
    with tempfile.TemporaryDirectory(prefix="bench-pycache-") as prefix:
        os.environ["PYTHONPYCACHEPREFIX"] = prefix
        try:
            yield {"PYTHONPYCACHEPREFIX": prefix}
        finally:
            del os.environ["PYTHONPYCACHEPREFIX"]
            os.environ["PYTHONDONTWRITEBYTECODE"] = saved


_IMPORT_TIMER = "import time; t = time.perf_counter(); {0}; print(time.perf_counter() - t)"


def import_seconds(statement: str) -> tuple[float, float]:
    """(``statement`` alone, the whole process) in seconds, in a fresh interpreter run
    outside the repository (no accidental local imports); start-up is in the second only."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_TIMER.format(statement)],
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    wall = time.perf_counter() - started
    return float(done.stdout.strip()), wall
