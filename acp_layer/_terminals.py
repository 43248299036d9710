"""Terminals as local subprocesses, for `LocalClient`.

Rules:

1. Output is stdout and stderr merged, as a terminal shows them. Past ``outputByteLimit``
   bytes the oldest output is dropped, and the cut moves forward to a UTF-8 character
   boundary, so the retained text may be a little shorter than the limit; ``truncated`` then
   stays true (docs/terminals.mdx).
2. Each command runs in a process group of its own: ``kill`` and ``release`` kill the whole
   group, so a shell's children cannot keep the output pipe (and ``wait_for_exit``) open.
3. Every terminal is killed when released or when the connection ends.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence

import anyio
import anyio.abc

from . import schema as s

__all__ = ["LocalTerminal", "OutputBuffer"]

# How long to wait for the last output once the command exited (a daemonised grandchild
# may hold the pipe open forever).
_EOF_GRACE = 1.0


def _complete_length(data: bytes | bytearray) -> int:
    """Length of ``data`` without a trailing incomplete UTF-8 sequence."""
    size = len(data)
    for back in range(1, min(4, size) + 1):
        byte = data[size - back]
        if byte & 0xC0 == 0x80:  # continuation byte: look further back
            continue
        if byte < 0xC0:
            return size
        needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
        return size if back >= needed else size - back
    return size


class OutputBuffer:
    """Retained terminal output, truncated from the beginning at a character boundary."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.data = bytearray()
        self.truncated = False

    def append(self, chunk: bytes) -> None:
        """Add output; drop the oldest bytes beyond the limit (rule 1)."""
        data = self.data
        data += chunk
        if self.limit is not None and len(data) > self.limit:
            cut = len(data) - self.limit
            while cut < len(data) and data[cut] & 0xC0 == 0x80:
                cut += 1
            del data[:cut]
            self.truncated = True

    def text(self, *, final: bool) -> str:
        """The output as text; while output may still come, an incomplete last character
        is held back rather than shown as a replacement character."""
        data = bytes(self.data) if final else bytes(self.data[: _complete_length(self.data)])
        return data.decode("utf-8", "replace")


class LocalTerminal:
    """One command running as a subprocess, with its retained output."""

    def __init__(self, terminal_id: str, process: anyio.abc.Process, limit: int | None) -> None:
        self.id = terminal_id
        self.process = process
        self.output = OutputBuffer(limit)
        self.exited = anyio.Event()
        self.eof = anyio.Event()
        self.scope = anyio.CancelScope()

    @classmethod
    async def start(
        cls,
        terminal_id: str,
        command: str,
        args: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        limit: int | None,
    ) -> LocalTerminal:
        """Start the command (raises `OSError` if it cannot be started)."""
        process = await anyio.open_process(
            [command, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env={**os.environ, **env},
            start_new_session=True,
        )
        return cls(terminal_id, process, limit)

    async def run(self) -> None:
        """Collect output and notice the exit until released (run as a background task)."""
        with self.scope:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._read)
                await self.process.wait()
                self.exited.set()

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            async for chunk in stdout:
                self.output.append(chunk)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            self.eof.set()

    def exit_status(self) -> s.TerminalExitStatus | None:
        """The exit code or signal, once the command has exited."""
        code = self.process.returncode
        if not self.exited.is_set() or code is None:
            return None
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return s.TerminalExitStatus(signal=name)
        return s.TerminalExitStatus(exit_code=code)

    def snapshot(self) -> s.TerminalOutputResponse:
        """The ``terminal/output`` answer."""
        status = self.exit_status()
        return s.TerminalOutputResponse(
            output=self.output.text(final=self.eof.is_set()),
            truncated=self.output.truncated,
            exit_status=status,
        )

    async def wait(self) -> s.WaitForTerminalExitResponse:
        """Wait for the exit (and, briefly, for the last output)."""
        await self.exited.wait()
        with anyio.move_on_after(_EOF_GRACE):
            await self.eof.wait()
        status = self.exit_status()
        assert status is not None
        return s.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    def kill(self) -> None:
        """Kill the command's whole process group (rule 2)."""
        if self.process.returncode is not None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            # Only without a group of its own. (Calling this after killpg would race: the
            # Popen poll inside it can reap the child before asyncio's watcher, which then
            # reports exit code 255 instead of the signal.)
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()

    async def close(self) -> None:
        """Kill, reap and stop collecting (rule 3)."""
        self.kill()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await self.process.wait()
        self.scope.cancel()
        with contextlib.suppress(Exception):
            await self.process.aclose()
