"""`SSEDecoder` decodes a received chunk whole (one split per chunk, a single-``data:``
block without the per-line state): checked here against a plain line-at-a-time decoder
written from the WHATWG rules, for `feed` and `feed_messages`, with the stream whole,
cut at every position, byte by byte and cut at random, comparing the attributes after
every chunk too."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from typing import Any

import pytest

from jsonrpc_core.http import SSEDecoder, SSEError, SSEEvent

_BOM = b"\xef\xbb\xbf"


class _LineDecoder:
    """The reference: one line at a time, as WHATWG describes it (the data-less block
    deviation of `SSEDecoder` included)."""

    def __init__(self, max_event_size: int = 16 * 1024 * 1024) -> None:
        self.max = max_event_size
        self.last_event_id: str | None = None
        self.retry: int | None = None
        self.ended_with_retry = False
        self.comments_seen = 0
        self.id_buffer: str | None = None
        self.buf = b""
        self.start = True
        self.skip_lf = False
        self.reset()

    def reset(self) -> None:
        self.data: list[str] = []
        self.size = 0
        self.event: str | None = None
        self.id: str | None = None
        self.block_retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        buf = self.buf + chunk
        if self.start:
            if len(buf) < 3 and _BOM.startswith(buf):
                self.buf = buf
                return []
            self.start = False
            buf = buf.removeprefix(_BOM)
        if self.skip_lf and buf:
            self.skip_lf = False
            buf = buf.removeprefix(b"\n")
        out: list[SSEEvent] = []
        while True:
            match = re.search(rb"\r\n|\r|\n", buf)
            if match is None:
                break
            if match.group() == b"\r" and match.end() == len(buf):
                self.skip_lf = True
            self.line(buf[: match.start()], out)
            buf = buf[match.end() :]
        if len(buf) > self.max:
            raise SSEError("line")
        self.buf = buf
        return out

    def line(self, raw: bytes, out: list[SSEEvent]) -> None:
        if not raw:
            self.last_event_id = self.id_buffer
            self.ended_with_retry = self.block_retry is not None and not self.data
            if self.data and "\n".join(self.data):
                out.append(SSEEvent("\n".join(self.data), self.event, self.id, self.block_retry))
            self.reset()
            return
        if len(raw) > self.max:
            raise SSEError("line")
        text = raw.decode("utf-8", "replace")
        if text.startswith(":"):
            self.comments_seen += 1
            return
        name, _, value = text.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self.size += len(raw) + 1
            if self.size > self.max:
                raise SSEError("data")
            self.data.append(value)
        elif name == "event":
            self.event = value
        elif name == "id" and "\0" not in value:
            self.id_buffer = self.id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            try:
                self.retry = self.block_retry = int(value)
            except ValueError:
                pass


def _state(decoder: Any) -> tuple[Any, ...]:
    return (decoder.last_event_id, decoder.retry, decoder.ended_with_retry, decoder.comments_seen)


def _messages(events: list[SSEEvent], seen: set[str]) -> list[str]:
    out = []
    for event in events:
        if event.id is not None:
            if event.id in seen:
                continue
            seen.add(event.id)
        if event.event in (None, "message"):
            out.append(event.data)
    return out


def _check(chunks: Sequence[bytes]) -> None:
    """`feed` and `feed_messages` agree with the reference after every chunk."""
    reference, full, data = _LineDecoder(), SSEDecoder(), SSEDecoder()
    seen_reference: set[str] = set()
    seen: set[str] = set()
    for chunk in chunks:
        expected = reference.feed(chunk)
        assert full.feed(chunk) == expected, chunk
        assert data.feed_messages(chunk, seen) == _messages(expected, seen_reference), chunk
        assert _state(full) == _state(reference) == _state(data), chunk
    assert seen == seen_reference


CORPUS = [
    b'data: {"a":1}\n\ndata: {"b":2}\n\ndata: {"c":3}\n\n',
    b"data: line one\ndata: line two\n\ndata:no space\n\n",
    b"data: crlf\r\n\r\ndata: cr\r\rdata: mixed\r\n\n",
    b"\xef\xbb\xbfdata: after a bom\n\n",
    b": a comment\ndata: x\n: another\n\n:keepalive\n\n",
    b"id: 1\ndata: first\n\nid: 1\ndata: repeated id\n\nid: 2\ndata: second\n\n",
    b"event: error\ndata: not a message\n\nevent: message\ndata: a message\n\n",
    b"id: 7\ndata:\n\n",
    b"data: x\n\nretry: 500\n\n",
    b"retry: 500\ndata: y\n\n",
    b"\n\n\ndata: after blank lines\n\n\n\ndata: z\n\n",
    b"event: message\nid: 9\nretry: 10\ndata: all fields\n\n",
    b"data: caf\xc3\xa9 \xff\n\n",
    b"id: a\x00b\ndata: nul id ignored\n\n",
    b"data\n\ndata: trailing colon field:\n\nfield-without-value\n\n",
    b"retry: 12x\ndata: bad retry\n\nretry: 99999999999999999999999999\n\n",
    b"\r\n\rdata: a\r\ndata: b\r\r\n",
    b"data: unterminated at the end",
    b"retry: 700\nid: 3\n: unterminated block",
]


@pytest.mark.parametrize("stream", CORPUS)
def test_whole_cut_anywhere_and_bytewise(stream: bytes) -> None:
    _check([stream])
    for cut in range(len(stream) + 1):
        _check([stream[:cut], stream[cut:]])
    _check([stream[i : i + 1] for i in range(len(stream))])


def test_random_chunkings_of_a_long_stream() -> None:
    rng = random.Random(7)
    stream = b"".join(CORPUS[:3]) + b"".join(CORPUS[4:-2]) + CORPUS[3] + CORPUS[-2]
    for _ in range(300):
        cuts = sorted(rng.sample(range(1, len(stream)), rng.randint(1, 40)))
        _check([stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)])


def test_a_chunk_may_be_a_bytearray_or_memoryview() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(bytearray(b"data: 1\n\n")) == [SSEEvent("1")]  # type: ignore[arg-type]
    assert decoder.feed_messages(memoryview(b"data: 2\n\n")) == ["2"]  # type: ignore[arg-type]


def test_several_events_in_one_chunk_come_out_in_order() -> None:
    decoder = SSEDecoder()
    assert decoder.feed_messages(b"data: 1\n\ndata: 2\n\ndata: 3") == ["1", "2"]
    assert decoder.feed_messages(b"\n\n") == ["3"]


def test_feed_messages_skips_other_event_types_and_seen_ids() -> None:
    decoder = SSEDecoder()
    seen = {"1"}
    wire = b"id: 1\ndata: old\n\nid: 2\ndata: new\n\nevent: ping\ndata: p\n\ndata: plain\n\n"
    assert decoder.feed_messages(wire, seen) == ["new", "plain"]
    assert seen == {"1", "2"}
    assert decoder.last_event_id == "2"
    assert SSEDecoder().feed_messages(wire) == ["old", "new", "plain"]


def test_an_event_in_many_chunks_comes_out_whole() -> None:
    decoder = SSEDecoder()
    data = json.dumps({"text": "y" * 5000})
    wire = b"data: " + data.encode() + b"\n\ndata: next\n\n"
    out: list[str] = []
    for i in range(0, len(wire), 7):
        out.extend(decoder.feed_messages(wire[i : i + 7]))
    assert out == [data, "next"]


@pytest.mark.parametrize("method", ["feed", "feed_messages"])
def test_the_limits_hold_on_every_path(method: str) -> None:
    def feed(decoder: SSEDecoder, chunk: bytes) -> Any:
        return getattr(decoder, method)(chunk)

    for wire in (
        b"data: " + b"x" * 32,  # a pending line
        b"data: " + b"x" * 32 + b"\n\n",  # a single-data-line block
        b"data: " + b"x" * 10 + b"\ndata: " + b"y" * 10 + b"\n\n",  # the data of a block
        b"id: 1\ndata: " + b"x" * 32,  # a pending line after applied lines
    ):
        with pytest.raises(SSEError):
            feed(SSEDecoder(max_event_size=16), wire)
    decoder = SSEDecoder(max_event_size=16)
    feed(decoder, b"data: " + b"x" * 8)
    with pytest.raises(SSEError):
        feed(decoder, b"x" * 8)
    # Exactly at the limit: a 15-byte data line counts 16 bytes of data.
    assert feed(SSEDecoder(max_event_size=16), b"data: " + b"x" * 9 + b"\n\n")
    with pytest.raises(SSEError, match="data exceeds"):
        feed(SSEDecoder(max_event_size=16), b"data: " + b"x" * 10 + b"\n\n")
    # Lines that are not data (comments here) are limited one by one, not together.
    decoder = SSEDecoder(max_event_size=16)
    for _ in range(10):
        assert feed(decoder, b": keep-alive\n") == []
    assert decoder.comments_seen == 10


def test_close_applies_nothing_more_and_starts_a_new_stream() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: 5\nretry: 300\ndata: never dispatched")
    assert decoder.retry == 300
    assert decoder.close() == []
    assert decoder.last_event_id is None
    assert decoder.feed(b"\xef\xbb\xbfdata: x\n\n") == [SSEEvent("x")]
    assert decoder.last_event_id == "5"  # the id buffer persists, as before
