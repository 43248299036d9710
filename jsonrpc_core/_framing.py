"""Newline-delimited JSON framing without I/O.

Rule: a frame never exceeds ``max_message_size`` bytes in memory. An over-long line is
reported once as `Oversized` (with its first bytes, to recover the request id) and the
rest of it is skipped up to its newline, so the next message is served normally.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_MAX_MESSAGE_SIZE", "LineFramer", "Oversized"]

DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024
_PREFIX_KEPT = 65536


@dataclass(slots=True)
class Oversized:
    """A line longer than the limit; ``prefix`` holds its first bytes."""

    prefix: bytes
    limit: int


class LineFramer:
    """Splits a byte stream into lines (``\\n``-terminated, ``\\r\\n`` tolerated)."""

    __slots__ = ("_buffer", "_discarding", "_scan_from", "max_message_size")

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._scan_from = 0
        self._discarding = False

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        """Add received bytes; return the complete frames they finish (blank lines skipped)."""
        frames: list[bytes | Oversized] = []
        if self._discarding:
            newline = data.find(b"\n")
            if newline < 0:
                return frames
            self._discarding = False
            data = data[newline + 1 :]
        buffer = self._buffer
        limit = self.max_message_size
        if not buffer:
            # Nothing pending: the chunk's whole lines are cut from it directly (one copy
            # less per line); only its unfinished tail is buffered.
            *lines, tail = bytes(data).split(b"\n")
            for line in lines:
                if line.endswith(b"\r"):
                    line = line.rstrip(b"\r")
                if len(line) > limit:
                    frames.append(Oversized(line[:_PREFIX_KEPT], limit))
                elif line.strip():
                    frames.append(line)
            buffer += tail
            self._scan_from = len(buffer)
            return self._check_pending(frames)
        buffer += data
        start = 0
        scan = self._scan_from
        while True:
            newline = buffer.find(b"\n", scan)
            if newline < 0:
                break
            line = bytes(buffer[start:newline]).rstrip(b"\r")
            if len(line) > limit:
                frames.append(Oversized(line[:_PREFIX_KEPT], limit))
            elif line.strip():
                frames.append(line)
            start = scan = newline + 1
        if start:
            del buffer[:start]
        self._scan_from = len(buffer)
        return self._check_pending(frames)

    def _check_pending(self, frames: list[bytes | Oversized]) -> list[bytes | Oversized]:
        """Report the unfinished line once it is over the limit (then skip the rest of it)."""
        buffer = self._buffer
        limit = self.max_message_size
        # A trailing CR may be the first half of a CR LF split across chunks.
        pending_size = len(buffer) - 1 if buffer.endswith(b"\r") else len(buffer)
        if pending_size > limit:
            frames.append(Oversized(bytes(buffer[:_PREFIX_KEPT]), limit))
            buffer.clear()
            self._scan_from = 0
            self._discarding = True
        return frames

    def close(self) -> list[bytes | Oversized]:
        """End of stream: a final line without a newline still counts as a frame."""
        rest = bytes(self._buffer).rstrip(b"\r")
        self._buffer.clear()
        self._scan_from = 0
        if self._discarding or not rest.strip():
            return []
        return [rest]
