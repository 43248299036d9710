"""Server-Sent Events (``text/event-stream``) codec without I/O.

Decoding follows the WHATWG HTML "server-sent events" parsing rules: any of
LF, CR LF or CR ends a line (also when a CR LF pair is split across chunks), a
leading UTF-8 byte order mark is ignored, comment lines start with ``:``, one
space after the field colon is stripped, unknown fields are ignored, ``retry``
is honoured only when it is all ASCII digits, and an ``id`` containing NUL is
ignored.

One deliberate deviation: a block whose data is the empty string dispatches
nothing, also when it had a ``data:`` line (WHATWG would dispatch an empty
message for ``data:`` alone).  That is MCP's stream "priming" event, ``id: X``
plus an empty ``data:``, which exists only to set the last event ID; its ``id``
still updates :attr:`SSEDecoder.last_event_id`.

Encoding always emits ``name: value`` lines separated by LF.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = [
    "DEFAULT_MAX_EVENT_SIZE",
    "SSEDecoder",
    "SSEError",
    "SSEEvent",
    "encode_comment",
    "encode_event",
]

DEFAULT_MAX_EVENT_SIZE = 16 * 1024 * 1024
"""Default upper bound, in bytes, for one pending line or one event's data."""

_BOM = b"\xef\xbb\xbf"
_TEXT_LINE_SPLIT = re.compile(r"\r\n|\r|\n")


class SSEError(ValueError):
    """Raised when an event stream violates a limit of :class:`SSEDecoder`."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One server-sent event.

    ``event`` and ``id`` are ``None`` when the event has no such field; ``retry``
    is the reconnection time in milliseconds, or ``None`` when not given.
    """

    data: str = ""
    event: str | None = None
    id: str | None = None
    retry: int | None = None


def _field(name: str, value: str) -> str:
    return f"{name}: {value}\n"


def encode_event(event: SSEEvent) -> bytes:
    """Serialise ``event`` to UTF-8 bytes, terminated by a blank line.

    Multi-line ``data`` (split on LF, CR LF or CR) becomes several ``data:``
    lines; empty data still produces one ``data:`` line.

    Raises:
        ValueError: ``event`` contains CR or LF, ``id`` contains CR, LF or NUL,
            or ``retry`` is negative.  Such values could not be transmitted
            faithfully and would let the value inject or forge fields.
    """
    parts: list[str] = []
    if event.event is not None:
        if "\r" in event.event or "\n" in event.event:
            raise ValueError("SSE event type must not contain CR or LF")
        parts.append(_field("event", event.event))
    if event.id is not None:
        if "\r" in event.id or "\n" in event.id or "\0" in event.id:
            raise ValueError("SSE event id must not contain CR, LF or NUL")
        parts.append(_field("id", event.id))
    if event.retry is not None:
        if event.retry < 0:
            raise ValueError("SSE retry must be a non-negative integer")
        parts.append(_field("retry", str(int(event.retry))))
    parts.extend(_field("data", line) for line in _TEXT_LINE_SPLIT.split(event.data))
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def encode_comment(text: str = "") -> bytes:
    """Serialise a comment block (e.g. a keep-alive heartbeat) as ``": text\\n\\n"``.

    Each line of a multi-line ``text`` becomes its own comment line.  Decoders
    ignore comments, so this never dispatches an event.
    """
    lines = _TEXT_LINE_SPLIT.split(text)
    return ("".join(_field("", line) for line in lines) + "\n").encode("utf-8")


class SSEDecoder:
    """Incremental ``text/event-stream`` parser.

    Feed raw bytes as they arrive with :meth:`feed` (or :meth:`feed_messages` when
    only the data of message events matters); chunk boundaries may fall anywhere,
    including inside a multi-byte UTF-8 sequence or between the CR and LF of a line
    ending.

    Attributes:
        last_event_id: The event source's "last event ID": ``None`` until an
            ``id`` field has been dispatched, then the latest one.  It persists
            across events and across :meth:`close`, so it can be sent as
            ``Last-Event-ID`` when reconnecting.  An empty string means the
            server reset it.
        retry: The last valid ``retry`` value seen, in milliseconds, or ``None``.
        ended_with_retry: Whether the last block dispatched set ``retry`` and
            carried no data: how a server says "I am closing this connection
            early; reconnect" (MCP 2025-11-25 SSE polling).
        comments_seen: Number of comment lines seen.
        max_event_size: Limit in bytes for one pending (unterminated) line and
            for the accumulated data of one event.
    """

    # A received chunk is decoded whole: line endings are normalised to LF, the
    # complete blocks (ended by a blank line) are cut out with one split, and a
    # block that is a single ``data:`` line (the usual event) is dispatched without
    # going through the per-line state.  Invariant between calls: ``_pending`` holds
    # one unterminated line (no LF); ``_partial`` tells whether lines of the block it
    # belongs to were already applied to the ``_block_*``/``_data`` state.
    __slots__ = (
        "_block_event",
        "_block_id",
        "_block_retry",
        "_data",
        "_data_size",
        "_head",
        "_id_buffer",
        "_partial",
        "_pending",
        "_pending_size",
        "_skip_lf",
        "comments_seen",
        "ended_with_retry",
        "last_event_id",
        "max_event_size",
        "retry",
    )

    def __init__(self, *, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        """Create a decoder; ``max_event_size`` must be positive."""
        if max_event_size <= 0:
            raise ValueError("max_event_size must be positive")
        self.max_event_size = max_event_size
        self.last_event_id: str | None = None
        self.retry: int | None = None
        self.ended_with_retry = False
        self.comments_seen = 0
        # WHATWG's "last event ID buffer": unlike the other buffers it is not
        # cleared at dispatch, only copied to last_event_id.
        self._id_buffer: str | None = None
        self._reset_stream()

    def _reset_stream(self) -> None:
        # The stream's first bytes while a leading BOM is not ruled out, else None.
        self._head: bytes | None = b""
        self._skip_lf = False
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._partial = False
        self._reset_block()

    def _reset_block(self) -> None:
        self._data: list[str] = []
        self._data_size = 0
        self._block_event: str | None = None
        self._block_id: str | None = None
        self._block_retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Consume ``chunk`` and return the events it completed, in order.

        Raises:
            SSEError: A pending line or an event's data exceeds
                ``max_event_size``.  The decoder state is then unspecified and
                the stream should be abandoned.
        """
        out: list[Any] = []
        self._decode(chunk, out, True, None)
        return out

    def feed_messages(self, chunk: bytes, seen_ids: set[str] | None = None) -> list[str]:
        """Consume ``chunk`` and return the data of the message events it completed.

        Message events are those without an ``event`` field or with
        ``event: message`` (what an ``EventSource`` hands to ``onmessage``).  Other
        events are dropped; the attributes are updated exactly as by :meth:`feed`,
        which this matches but for building no `SSEEvent`.  With ``seen_ids``, an
        event whose id is in that set is skipped, and the id of every other event
        is added to it (to skip events replayed after a reconnection).

        Raises:
            SSEError: As :meth:`feed`.
        """
        out: list[Any] = []
        self._decode(chunk, out, False, seen_ids)
        return out

    def close(self) -> list[SSEEvent]:
        """Signal end of stream and return the final events (always none).

        Per WHATWG, an event not terminated by a blank line is discarded.
        The decoder is reset for a new stream (e.g. after reconnecting) while
        ``last_event_id`` and ``retry`` are kept.
        """
        self._reset_stream()
        return []

    def _decode(self, chunk: bytes, out: list[Any], full: bool, seen: set[str] | None) -> None:
        if type(chunk) is not bytes:
            chunk = bytes(chunk)
        if self._head is not None:
            # The BOM may itself arrive split across chunks, so hold back a
            # prefix of it until it is known whether the stream starts with it.
            head = self._head + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._head = head
                return
            self._head = None
            chunk = head[len(_BOM) :] if head.startswith(_BOM) else head
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 0x0A:
                chunk = chunk[1:]
        if not chunk:
            return
        if b"\r" in chunk:
            # A CR ending the chunk may be the first half of a CR LF.
            self._skip_lf = chunk[-1] == 0x0D
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        pending = self._pending
        if pending:
            if b"\n" not in chunk:
                pending.append(chunk)  # the pending line goes on
                self._pending_size += len(chunk)
                if self._pending_size > self.max_event_size:
                    raise SSEError(f"SSE line exceeds max_event_size ({self.max_event_size} bytes)")
                return
            pending.append(chunk)
            chunk = b"".join(pending)
            pending.clear()
            self._pending_size = 0
        if self._partial:
            # Finish the block whose first lines were applied already.
            if chunk[0] == 0x0A:
                rest = 1
                lines = []
            else:
                end = chunk.find(b"\n\n")
                if end < 0:
                    self._tail(chunk, out, full, seen)
                    return
                rest = end + 2
                lines = chunk[:end].split(b"\n")
            for line in lines:
                self._line(line, out, full, seen)
            self._dispatch(out, full, seen)
            self._partial = False
            chunk = chunk[rest:]
        blocks = chunk.split(b"\n\n")
        tail = blocks.pop()
        for block in blocks:
            if block[:5] == b"data:" and b"\n" not in block:
                # One data line: the whole event.
                if len(block) >= self.max_event_size:  # its data counts one byte more (the LF)
                    max_size = self.max_event_size
                    what = "line" if len(block) > max_size else "event data"
                    raise SSEError(f"SSE {what} exceeds max_event_size ({max_size} bytes)")
                self.last_event_id = self._id_buffer
                self.ended_with_retry = False
                data = block[6:] if block[5:6] == b" " else block[5:]
                if data:
                    text = data.decode("utf-8", "replace")
                    out.append(SSEEvent(text) if full else text)
            else:
                for line in block.split(b"\n"):
                    self._line(line, out, full, seen)
                self._dispatch(out, full, seen)
        if tail:
            self._tail(tail, out, full, seen)

    def _tail(self, tail: bytes, out: list[Any], full: bool, seen: set[str] | None) -> None:
        """Apply the complete lines of ``tail`` (which holds no blank line but perhaps
        a leading one) and keep its last, unterminated line pending."""
        lines = tail.split(b"\n")
        last = lines.pop()
        if lines:
            for line in lines:
                self._line(line, out, full, seen)
            self._partial = bool(lines[-1])
        if last:
            if len(last) > self.max_event_size:
                raise SSEError(f"SSE line exceeds max_event_size ({self.max_event_size} bytes)")
            self._pending.append(last)
            self._pending_size = len(last)

    def _line(self, raw: bytes, out: list[Any], full: bool, seen: set[str] | None) -> None:
        if not raw:
            self._dispatch(out, full, seen)
            return
        if len(raw) > self.max_event_size:
            raise SSEError(f"SSE line exceeds max_event_size ({self.max_event_size} bytes)")
        line = raw.decode("utf-8", errors="replace")
        if line[0] == ":":
            self.comments_seen += 1
            return
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data_size += len(raw) + 1
            if self._data_size > self.max_event_size:
                raise SSEError(
                    f"SSE event data exceeds max_event_size ({self.max_event_size} bytes)"
                )
            self._data.append(value)
        elif name == "event":
            self._block_event = value
        elif name == "id":
            if "\0" not in value:
                self._id_buffer = value
                self._block_id = value
        elif name == "retry":
            if value.isascii() and value.isdigit():
                try:
                    retry = int(value)
                except ValueError:  # more digits than int() accepts
                    return
                self.retry = retry
                self._block_retry = retry

    def _dispatch(self, out: list[Any], full: bool, seen: set[str] | None) -> None:
        self.last_event_id = self._id_buffer
        self.ended_with_retry = self._block_retry is not None and not self._data
        # Joining with LF equals WHATWG's "append value and LF, then strip one
        # trailing LF".
        data = "\n".join(self._data)
        if data:
            event_id = self._block_id
            if full:
                out.append(SSEEvent(data, self._block_event, event_id, self._block_retry))
            elif seen is not None and event_id is not None and event_id in seen:
                pass
            else:
                if seen is not None and event_id is not None:
                    seen.add(event_id)
                if self._block_event in (None, "message"):
                    out.append(data)
        self._reset_block()
