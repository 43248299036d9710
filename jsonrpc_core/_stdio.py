"""stdio transports: serve on this process's stdin/stdout, or spawn a server process.

Rules:

1. While serving on stdio, file descriptor 1 is pointed at stderr, and the transport
   writes to a private duplicate of the original stdout. A stray ``print`` therefore
   cannot corrupt the JSON-RPC stream.
2. A spawned process inherits the full environment unless told otherwise; its stderr
   is always drained (a full stderr pipe would block the child) and surfaced through
   logging, an optional callback and `StdioProcess.stderr_tail`.
3. A spawned process runs in a process group of its own, and shutdown ends the whole
   group, gracefully then firmly: close stdin, wait; SIGTERM to the group, wait; SIGKILL
   to the group (see `spawn_stdio`).
4. A descriptor the event loop can watch (a pipe, socket or tty) is non-blocking and
   read or written when ready. One it cannot (epoll refuses regular files and some
   character devices, such as ``/dev/null``) stays blocking: a regular file is read
   and written directly (a file never makes a read wait long), any other such device
   is read in a worker thread; writes to it go straight through (it takes them at
   once, as ``/dev/null`` does). Its end of input ends the stream as a pipe's does.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import signal
import stat
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread

from ._backend import is_asyncio
from ._bytestream import _PLAIN_RECEIVE, NdjsonStream
from ._errors import TransportError
from ._framing import DEFAULT_MAX_MESSAGE_SIZE
from ._transport import Received

__all__ = ["FdReceiveStream", "FdSendStream", "StdioProcess", "spawn_stdio", "stdio_server"]

logger = logging.getLogger("jsonrpc_core.stdio")


def _is_regular_file(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def _is_watchable(fd: int, events: int) -> bool:
    """Whether the event loop can watch ``fd`` (rule 4): epoll says so by accepting it.
    Without epoll (not Linux) every descriptor but a regular file is taken as watchable."""
    if _is_regular_file(fd):
        return False
    epoll = getattr(select, "epoll", None)
    if epoll is None:  # pragma: no cover - Linux has epoll
        return True
    with epoll() as probe:
        try:
            probe.register(fd, events)
        except PermissionError:
            return False
    return True


class FdReceiveStream(anyio.abc.ByteReceiveStream):
    """Reads a pipe, tty or file descriptor without a thread (see rule 4 for the others:
    regular files are read directly, other unwatchable devices in a worker thread)."""

    def __init__(self, fd: int, *, close_fd: bool = False) -> None:
        self._fd = fd
        self._close_fd = close_fd
        self._pollable = _is_watchable(fd, getattr(select, "EPOLLIN", 1))
        self._threaded = not self._pollable and not _is_regular_file(fd)
        self._was_blocking = os.get_blocking(fd)
        if self._pollable:
            os.set_blocking(fd, False)
        self._closed = False
        self._reader: _AsyncioFdReader | None = None
        self._backend_checked = False
        self._listener: Callable[[bytearray], bool] | None = None

    def _set_listener(self, listener: Callable[[bytearray], bool] | None) -> bool:
        """asyncio only: call ``listener`` with the read buffer each time bytes arrive,
        in the event loop's callback: it takes what it wants out of the buffer (what it
        leaves is returned by ``receive``) and returns whether it has something for the
        task waiting in ``receive`` (which then returns ``b""``). Whether listening is
        possible here."""
        if not self._pollable or not is_asyncio():
            return False
        self._listener = listener
        if self._reader is not None:
            self._reader.listener = listener
        return True

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._backend_checked:
            self._backend_checked = True
            if self._pollable and is_asyncio():
                self._reader = _AsyncioFdReader(self._fd)
                self._reader.listener = self._listener
        if self._reader is not None:
            if self._closed:
                raise anyio.ClosedResourceError
            return await self._reader.receive(max_bytes)
        if self._threaded:
            if self._closed:
                raise anyio.ClosedResourceError
            data = await anyio.to_thread.run_sync(
                os.read, self._fd, max_bytes, abandon_on_cancel=True
            )
            if not data:
                raise anyio.EndOfStream
            return data
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            if not data:
                raise anyio.EndOfStream
            return data

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._reader is not None:
                self._reader.close()
            elif self._pollable:
                anyio.notify_closing(self._fd)
            if self._pollable:
                os.set_blocking(self._fd, self._was_blocking)
            if self._close_fd:
                os.close(self._fd)


class _AsyncioFdReader:
    """asyncio only: keeps the descriptor registered with the loop for its whole life.

    ``anyio.wait_readable`` registers and unregisters the descriptor on every wait (two
    ``epoll_ctl`` calls and a future per message). Here the loop's callback reads what is
    there into a buffer and wakes the one waiting reader; past ``_HIGH_WATER`` buffered
    bytes it stops reading until the consumer catches up, so memory stays bounded.
    """

    _HIGH_WATER = 4 * 1024 * 1024

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._loop = asyncio.get_running_loop()
        self._buffer = bytearray()
        self._eof = False
        self._error: BaseException | None = None
        self._closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._reading = True
        self.listener: Callable[[bytearray], bool] | None = None
        self._loop.add_reader(fd, self._on_readable)

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        except OSError as exc:
            self._error, data = exc, b""
        if data:
            self._buffer += data
            listener = self.listener
            if listener is not None and not self._closed:
                if not listener(self._buffer) and not self._buffer:
                    return  # all handled by the listener: nothing new for the receiver
            if len(self._buffer) > self._HIGH_WATER:
                self._pause()
        else:
            self._eof = True
            self._pause()
        self._wake()

    def _pause(self) -> None:
        if self._reading:
            self._reading = False
            self._loop.remove_reader(self._fd)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self, max_bytes: int) -> bytes:
        while not self._buffer:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._eof:
                if self._error is not None:
                    raise anyio.BrokenResourceError from self._error
                raise anyio.EndOfStream
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
            if (
                not self._buffer
                and self.listener is not None
                and not self._eof
                and not self._closed
            ):
                # The listener took the bytes and has something for the caller.
                return b""
        data = bytes(self._buffer[:max_bytes])
        del self._buffer[:max_bytes]
        if not self._reading and not self._eof and not self._closed:
            self._reading = True
            self._loop.add_reader(self._fd, self._on_readable)
        return data

    def close(self) -> None:
        """Unregister and wake the reader (it then sees the stream closed)."""
        self._closed = True
        self._pause()
        self._wake()


class FdSendStream(anyio.abc.ByteSendStream):
    """Writes to a pipe, tty or file descriptor without a thread (rule 4)."""

    def __init__(self, fd: int, *, close_fd: bool = False) -> None:
        self._fd = fd
        self._close_fd = close_fd
        self._pollable = _is_watchable(fd, getattr(select, "EPOLLOUT", 4))
        self._was_blocking = os.get_blocking(fd)
        if self._pollable:
            os.set_blocking(fd, False)
        self._closed = False

    def write_nowait(self, item: bytes) -> int:
        """Write what the pipe takes now, without waiting; the number of bytes written."""
        if self._closed:
            raise anyio.ClosedResourceError
        try:
            return os.write(self._fd, item)
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc

    async def send(self, item: bytes) -> None:
        view = memoryview(item)
        while view:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
                continue
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            view = view[written:]

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._pollable:
                anyio.notify_closing(self._fd)
                os.set_blocking(self._fd, self._was_blocking)
            if self._close_fd:
                os.close(self._fd)


@asynccontextmanager
async def stdio_server(
    *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> AsyncIterator[NdjsonStream]:
    """A message stream on this process's own stdin and stdout (see rule 1 above)."""
    sys.stdout.flush()
    private_stdout = os.dup(1)
    saved_stdout = os.dup(1)
    os.dup2(2, 1)
    stream = NdjsonStream(
        FdReceiveStream(0),
        FdSendStream(private_stdout, close_fd=True),
        max_message_size=max_message_size,
    )
    try:
        yield stream
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()
        sys.stdout.flush()
        os.dup2(saved_stdout, 1)
        os.close(saved_stdout)


class StdioProcess(NdjsonStream):
    """The message stream to a spawned server process, with the process itself."""

    def __init__(
        self,
        process: anyio.abc.Process,
        stdout: FdReceiveStream,
        stdin: FdSendStream,
        *,
        max_message_size: int,
        stderr_lines: int,
    ) -> None:
        super().__init__(stdout, stdin, max_message_size=max_message_size)
        self.process = process
        self.stdin = stdin
        self.stderr_tail: deque[str] = deque(maxlen=stderr_lines)

    async def receive(self) -> Received:
        try:
            return await super().receive()
        except anyio.EndOfStream:
            code = await self._exit_code_soon()
            if code:
                tail = " | ".join(list(self.stderr_tail)[-3:])
                detail = f"; stderr: {tail}" if tail else ""
                raise TransportError(f"server process exited with code {code}{detail}") from None
            raise

    async def _exit_code_soon(self) -> int | None:
        with anyio.move_on_after(0.5):
            return await self.process.wait()
        return self.process.returncode


# Its receive only reports the end of the stream differently: direct dispatch is fine.
_PLAIN_RECEIVE.add(StdioProcess.receive)


@asynccontextmanager
async def spawn_stdio(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    inherit_env: bool = True,
    cwd: str | os.PathLike[str] | None = None,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    on_stderr: Callable[[str], Any] | None = None,
    stderr_lines: int = 200,
    shutdown_timeout: float = 2.0,
    terminate_timeout: float = 2.0,
) -> AsyncIterator[StdioProcess]:
    """Start ``command`` and yield a message stream over its stdin/stdout.

    ``env`` is added to this process's environment (``inherit_env=False`` passes only
    ``env``). Each stderr line is logged at INFO on ``jsonrpc_core.stdio.stderr``, kept in
    ``stderr_tail`` and passed to ``on_stderr``.

    The process runs in a session and process group of its own (``start_new_session``):
    a terminal's Ctrl-C, which signals the terminal's foreground process group, reaches
    this process and not the server. On exit the whole group is ended (rule 3): the
    server's stdin is closed and the group gets ``shutdown_timeout`` seconds to end by
    itself; then SIGTERM goes to the group, which gets ``terminate_timeout`` seconds
    more; then SIGKILL goes to the group. So a process the command started in turn (a
    launcher's real server, such as the native binary behind an npm package) does not
    outlive it, unless it left the group itself (``setsid``). stdin, stdout and stderr
    are pipes of our own, all closed before the context exits, whatever holds their
    other ends.

    On platforms without process groups (Windows) only the command's own process is
    ended: stdin closed, ``shutdown_timeout``, terminate, ``terminate_timeout``, kill; a
    process it started may survive it.
    """
    if not command:
        raise ValueError("command must not be empty")
    process, to_child, from_child, from_stderr = await _start_process(
        command, _child_env(env, inherit_env), cwd
    )
    stream = StdioProcess(
        process,
        FdReceiveStream(from_child, close_fd=True),
        FdSendStream(to_child, close_fd=True),
        max_message_size=max_message_size,
        stderr_lines=stderr_lines,
    )
    stderr = FdReceiveStream(from_stderr, close_fd=True)
    drained = anyio.Event()
    try:
        async with anyio.create_task_group() as tg:
            name = os.path.basename(command[0])
            tg.start_soon(_drain_stderr, stderr, stream, name, on_stderr, drained)
            try:
                yield stream
            finally:
                with anyio.CancelScope(shield=True):
                    await _shut_down(process, stream, shutdown_timeout, terminate_timeout)
                    # Every writer is gone: the last lines are there to read.
                    with anyio.move_on_after(_STDERR_LINGER):
                        await drained.wait()
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await stderr.aclose()


def _child_env(env: Mapping[str, str] | None, inherit_env: bool) -> dict[str, str] | None:
    """The spawned process's environment; ``None`` (inherit ours as it is) if unchanged."""
    if env is None and inherit_env:
        return None
    full_env = dict(os.environ) if inherit_env else {}
    full_env.update(env or {})
    return full_env


async def _start_process(
    command: Sequence[str], env: dict[str, str] | None, cwd: str | os.PathLike[str] | None
) -> tuple[anyio.abc.Process, int, int, int]:
    """Start ``command`` on pipes of our own; the process and our ends of its stdin,
    stdout and stderr (the child's ends are closed here, whatever happens)."""
    # Our own pipes for stdin, stdout and stderr: written and read directly, like
    # stdio_server does, without the extra checkpoints of a buffered stream wrapper, and
    # closed by us however long another process holds their other ends (an asyncio pipe
    # transport held open by a grandchild would outlive the event loop).
    child_stdin, to_child = os.pipe()
    from_child, child_stdout = os.pipe()
    from_stderr, child_stderr = os.pipe()
    try:
        process = await anyio.open_process(
            list(command),
            stdin=child_stdin,
            stdout=child_stdout,
            stderr=child_stderr,
            env=env,
            cwd=cwd,
            start_new_session=_PROCESS_GROUPS,
        )
    except OSError as exc:
        for fd in (to_child, from_child, from_stderr):
            os.close(fd)
        raise TransportError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from exc
    finally:
        for fd in (child_stdin, child_stdout, child_stderr):
            os.close(fd)
    return process, to_child, from_child, from_stderr


async def _drain_stderr(
    stderr: FdReceiveStream,
    stream: StdioProcess,
    name: str,
    on_stderr: Callable[[str], Any] | None,
    drained: anyio.Event,
) -> None:
    """Read the process's stderr to its end, line by line (rule 2); ``drained`` is set
    when it ends."""
    pending = b""
    try:
        while True:
            try:
                chunk = await stderr.receive()
            except anyio.EndOfStream:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace").rstrip("\r")
                stream.stderr_tail.append(line)
                _stderr_logger.info("[%s stderr] %s", name, line)
                if on_stderr is not None:
                    on_stderr(line)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        drained.set()


# Whether the server gets a process group of its own (spawn_stdio's docstring).
_PROCESS_GROUPS = hasattr(os, "killpg") and sys.platform != "win32"
# How long the last stderr lines may take to arrive once the server's group has ended.
_STDERR_LINGER = 0.5
_stderr_logger = logging.getLogger("jsonrpc_core.stdio.stderr")


async def _shut_down(
    process: anyio.abc.Process, stream: StdioProcess, grace: float, terminate_timeout: float
) -> None:
    """Rule 3: close stdin, wait; SIGTERM to the group, wait; SIGKILL to the group."""
    try:
        await stream.stdin.aclose()
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
    # The group's id is the leader's pid, as start_new_session made it.
    group = process.pid if _PROCESS_GROUPS else None
    if not await _ended(process, group, grace):
        _send(process, group, terminate=True)
        if not await _ended(process, group, terminate_timeout):
            _send(process, group, terminate=False)
            await process.wait()
    await stream.aclose()


async def _ended(process: anyio.abc.Process, group: int | None, timeout: float) -> bool:
    """Whether the process, and its group if it has one, ended within ``timeout``."""
    with anyio.move_on_after(timeout):
        await process.wait()
        delay = 0.005
        # Another process of the group has no exit to wait on: look until it is gone.
        while group is not None and _group_alive(group):
            await anyio.sleep(delay)
            delay = min(delay * 2, 0.1)
        return True
    return False


def _send(process: anyio.abc.Process, group: int | None, *, terminate: bool) -> None:
    try:
        if group is not None:
            os.killpg(group, signal.SIGTERM if terminate else signal.SIGKILL)
        elif terminate:
            process.terminate()
        else:
            process.kill()
    except ProcessLookupError:  # already gone
        pass


def _group_alive(group: int) -> bool:
    """Whether a process of ``group`` still runs (a zombie, ended and waiting for its new
    parent to reap it, does not count where ``/proc`` tells)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                stat_line = file.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat_line[stat_line.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == group and fields[0] not in (b"Z", b"X"):
            return True
    return False
