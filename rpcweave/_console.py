"""The person at the terminal for ``rpcweave acp run``: lines typed on stdin, and Ctrl-C.

Rules:

1. On a TTY, stdin is read by the event loop itself (`read_line`), never by a thread: a
   question withdrawn when its turn is cancelled leaves no thread behind to swallow the
   next line typed, nor to hold stdin's lock when the interpreter exits. Other stdin
   (a pipe, a file, a test's ``StringIO``) is read by a worker thread, line by line.
2. Ctrl-C (SIGINT) during a turn cancels the turn (`Interrupts`); a second one within
   `Interrupts.QUIT_WINDOW` seconds, or one with no turn running, ends the run. The agent
   never sees the terminal's Ctrl-C: it runs in a process group of its own
   (`jsonrpc_core.spawn_stdio`).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Awaitable, Callable

import anyio

__all__ = ["Interrupts", "read_line"]

_pending = bytearray()  # what was typed on the TTY past the last line returned


def _tty_fd() -> int | None:
    try:
        if sys.stdin is not None and sys.stdin.isatty():
            return sys.stdin.fileno()
    except (ValueError, OSError, AttributeError):  # closed, or no descriptor (a test's)
        pass
    return None


async def read_line() -> str:
    """The next line typed on stdin, with its newline; ``""`` at the end (rule 1)."""
    fd = _tty_fd()
    if fd is None:
        return await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    while b"\n" not in _pending:
        await anyio.wait_readable(fd)
        try:
            chunk = os.read(fd, 4096)
        except BlockingIOError:
            continue
        if not chunk:  # Ctrl-D on an empty line
            line = _pending.decode("utf-8", "replace")
            _pending.clear()
            return line
        _pending.extend(chunk)
    end = _pending.index(b"\n") + 1
    line = _pending[:end].decode("utf-8", "replace")
    del _pending[:end]
    return line


class Interrupts:
    """Ctrl-C for one run (rule 2). `watch` runs for the whole run; `turn` marks a turn.

    The first Ctrl-C during a turn calls ``on_cancel`` (which sends ``session/cancel``);
    a second within `QUIT_WINDOW` seconds, or one while no turn runs, cancels ``scope``
    and sets `quit`: the run then ends (exit status 130) once the agent was shut down.
    """

    QUIT_WINDOW = 2.0

    def __init__(self, scope: anyio.CancelScope, *, notice: Callable[[str], None]) -> None:
        self.scope = scope
        self.notice = notice
        self.quit = False
        self._on_cancel: Callable[[], Awaitable[object]] | None = None
        self._last: float | None = None

    def turn(self, on_cancel: Callable[[], Awaitable[object]] | None) -> None:
        """A turn starts (``on_cancel`` cancels it) or, with ``None``, ends."""
        self._on_cancel = on_cancel
        if on_cancel is None:
            self._last = None

    async def watch(self) -> None:
        """Handle SIGINT until cancelled (where signals cannot be received, Ctrl-C keeps
        Python's default: KeyboardInterrupt)."""
        try:
            receiver = anyio.open_signal_receiver(signal.SIGINT)
            signals = receiver.__enter__()
        except (NotImplementedError, ValueError, RuntimeError):  # no signals here
            return
        try:
            async with anyio.create_task_group() as tasks:
                async for _ in signals:
                    now = anyio.current_time()
                    on_cancel = self._on_cancel
                    recent = self._last is not None and now - self._last < self.QUIT_WINDOW
                    if on_cancel is None or recent:
                        self.quit = True
                        self.scope.cancel()
                        return
                    self._last = now
                    self.notice("(cancelling the turn; Ctrl-C again to quit)")
                    tasks.start_soon(_quietly, on_cancel)
        finally:
            receiver.__exit__(None, None, None)


async def _quietly(call: Callable[[], Awaitable[object]]) -> None:
    try:
        await call()
    except Exception:  # the connection is gone: the turn's own end tells the tale
        pass
