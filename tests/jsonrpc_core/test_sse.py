from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jsonrpc_core.http import (
    SSEDecoder,
    SSEError,
    SSEEvent,
    encode_comment,
    encode_event,
)


def decode_all(data: bytes, *, chunk_size: int | None = None) -> list[SSEEvent]:
    decoder = SSEDecoder()
    if chunk_size is None:
        events = decoder.feed(data)
    else:
        events = []
        for start in range(0, len(data), chunk_size):
            events.extend(decoder.feed(data[start : start + chunk_size]))
    events.extend(decoder.close())
    return events


# --- encoder ---------------------------------------------------------------


def test_encode_full_event() -> None:
    event = SSEEvent(data="hello", event="message", id="42", retry=1500)
    assert encode_event(event) == b"event: message\nid: 42\nretry: 1500\ndata: hello\n\n"


def test_encode_multiline_data_any_line_ending() -> None:
    assert encode_event(SSEEvent(data="a\nb\r\nc\rd")) == (
        b"data: a\ndata: b\ndata: c\ndata: d\n\n"
    )


def test_encode_empty_data_emits_one_data_line() -> None:
    assert encode_event(SSEEvent()) == b"data: \n\n"
    # MCP's priming event.
    assert encode_event(SSEEvent(id="X")) == b"id: X\ndata: \n\n"


def test_encode_utf8() -> None:
    assert encode_event(SSEEvent(data="héllo ✓")) == "data: héllo ✓\n\n".encode()


@pytest.mark.parametrize("bad_id", ["a\nb", "a\rb", "a\r\nb", "a\0b", "\n"])
def test_encode_rejects_forged_id(bad_id: str) -> None:
    with pytest.raises(ValueError):
        encode_event(SSEEvent(data="x", id=bad_id))


@pytest.mark.parametrize("bad_event", ["a\nb", "a\rb", "x\r\ndata: forged"])
def test_encode_rejects_forged_event_type(bad_event: str) -> None:
    with pytest.raises(ValueError):
        encode_event(SSEEvent(data="x", event=bad_event))


def test_encode_rejects_negative_retry() -> None:
    with pytest.raises(ValueError):
        encode_event(SSEEvent(retry=-1))


def test_encode_comment() -> None:
    assert encode_comment("ping") == b": ping\n\n"
    assert encode_comment() == b": \n\n"
    assert encode_comment("a\nb\r\nc") == b": a\n: b\n: c\n\n"


# --- decoder: round trips and line endings -----------------------------------


def test_round_trip_simple() -> None:
    events = [
        SSEEvent(data="one"),
        SSEEvent(data="two\nlines", event="update", id="2"),
        SSEEvent(data="  leading spaces kept", retry=10),
        SSEEvent(data="", event="e", id=""),  # empty data: not dispatched
        SSEEvent(data="\n"),
        SSEEvent(data="ünïcødé 🎉", id="ü"),
    ]
    stream = b"".join(encode_event(e) for e in events)
    decoded = decode_all(stream)
    assert decoded == [e for e in events if e.data]
    assert decode_all(stream, chunk_size=1) == decoded


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    stream = eol.join(
        [b"event: greet", b"id: 7", b"data: a", b"data: b", b"", b"data: c", b"", b""]
    )
    expected = [SSEEvent(data="a\nb", event="greet", id="7"), SSEEvent(data="c")]
    assert decode_all(stream) == expected
    assert decode_all(stream, chunk_size=1) == expected
    assert decode_all(stream, chunk_size=2) == expected


def test_mixed_line_endings() -> None:
    assert decode_all(b"data: a\rdata: b\r\ndata: c\n\r\n") == [SSEEvent(data="a\nb\nc")]


def test_crlf_split_across_chunks_is_one_line_ending() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    # If the LF were a second line ending, this would dispatch "a" now.
    assert decoder.feed(b"\ndata: b\r") == []
    assert decoder.feed(b"\n\r") == [SSEEvent(data="a\nb")]
    assert decoder.feed(b"\n") == []


def test_cr_then_cr_is_blank_line() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r") == []
    assert decoder.feed(b"\r") == [SSEEvent(data="a")]


def test_cr_at_chunk_end_dispatches_without_waiting() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: a\r\r") == [SSEEvent(data="a")]


def test_multibyte_utf8_split_across_chunks() -> None:
    raw = encode_event(SSEEvent(data="€😀"))
    for cut in range(1, len(raw)):
        decoder = SSEDecoder()
        assert decoder.feed(raw[:cut]) + decoder.feed(raw[cut:]) == [SSEEvent(data="€😀")]


def test_invalid_utf8_is_replaced() -> None:
    assert decode_all(b"data: a\xffb\n\n") == [SSEEvent(data="a\ufffdb")]


# --- decoder: field rules ----------------------------------------------------


def test_comments_ignored_and_counted() -> None:
    decoder = SSEDecoder()
    stream = encode_comment("keep-alive") + b":\ndata: x\n: inside\n\n" + encode_comment("a\nb")
    assert decoder.feed(stream) == [SSEEvent(data="x")]
    assert decoder.comments_seen == 5


def test_field_without_colon_and_space_stripping() -> None:
    # "data" alone appends an empty line; only one leading space is removed.
    assert decode_all(b"data\ndata:x\ndata:  y\n\n") == [SSEEvent(data="\nx\n y")]
    assert decode_all(b"data\ndata\n\n") == [SSEEvent(data="\n")]


def test_empty_data_is_not_dispatched() -> None:
    # Deliberate deviation from WHATWG (which would fire an empty message).
    assert decode_all(b"data\n\n") == []
    assert decode_all(b"event: ping\ndata:\n\n") == []
    assert decode_all(encode_event(SSEEvent(event="ping"))) == []


def test_value_may_contain_colons() -> None:
    assert decode_all(b"data: a: b\nevent:x:y\n\n") == [SSEEvent(data="a: b", event="x:y")]


def test_unknown_fields_ignored() -> None:
    assert decode_all(b"foo: bar\nData: no\ndata: yes\n\n") == [SSEEvent(data="yes")]


def test_last_field_wins_within_block() -> None:
    assert decode_all(b"event: a\nevent: b\nid: 1\nid: 2\ndata: x\n\n") == [
        SSEEvent(data="x", event="b", id="2")
    ]


def test_priming_event_updates_last_event_id_without_dispatch() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(encode_event(SSEEvent(id="prime-1"))) == []
    assert decoder.last_event_id == "prime-1"
    assert decoder.feed(b"data: hello\n\n") == [SSEEvent(data="hello")]
    # last_event_id persists across events that have no id line.
    assert decoder.last_event_id == "prime-1"
    assert decoder.feed(b"id: 2\ndata: x\n\n") == [SSEEvent(data="x", id="2")]
    assert decoder.last_event_id == "2"


def test_last_event_id_updated_only_at_dispatch() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: 5\n")
    assert decoder.last_event_id is None
    decoder.feed(b"\n")
    assert decoder.last_event_id == "5"


def test_empty_id_resets_last_event_id() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: 1\n\n")
    assert decoder.feed(b"id\ndata: x\n\n") == [SSEEvent(data="x", id="")]
    assert decoder.last_event_id == ""


def test_id_with_nul_ignored() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: good\n\n")
    assert decoder.feed(b"id: ba\x00d\ndata: x\n\n") == [SSEEvent(data="x")]
    assert decoder.last_event_id == "good"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (b"3000", 3000),
        (b"0", 0),
        (b"007", 7),
        (b"", None),
        (b"-1", None),
        (b"1.5", None),
        (b" 10", None),  # only one space is stripped
        (b"10 ", None),
        (b"\xd9\xa3", None),  # ARABIC-INDIC DIGIT THREE: a digit, but not ASCII
        (b"9" * 5000, None),  # more digits than int() accepts
    ],
)
def test_retry_parsing(value: bytes, expected: int | None) -> None:
    decoder = SSEDecoder()
    events = decoder.feed(b"retry: " + value + b"\ndata: x\n\n")
    assert decoder.retry == expected
    assert events == [SSEEvent(data="x", retry=expected)]


def test_retry_without_data_still_sets_reconnection_time() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"retry: 250\n\n") == []
    assert decoder.retry == 250
    decoder.feed(b"retry: nope\n\n")
    assert decoder.retry == 250


@pytest.mark.parametrize("chunk_size", [None, 1, 2])
def test_leading_bom_ignored(chunk_size: int | None) -> None:
    stream = b"\xef\xbb\xbfdata: x\n\n"
    assert decode_all(stream, chunk_size=chunk_size) == [SSEEvent(data="x")]


def test_only_one_leading_bom_is_stripped() -> None:
    # A second BOM makes the first field name "\ufeffdata", which is unknown.
    assert decode_all(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [SSEEvent(data="y")]


def test_short_stream_that_is_a_bom_prefix() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"\xef") == []
    assert decoder.feed(b"") == []
    assert decoder.feed(b"\xbb\xbf") == []
    assert decoder.feed(b"data: x\n\n") == [SSEEvent(data="x")]


def test_incomplete_event_discarded_at_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"id: 9\ndata: partial\n") == []
    assert decoder.close() == []
    assert decoder.last_event_id is None
    # The decoder is reusable for a new stream after close().
    assert decoder.feed(b"\xef\xbb\xbfdata: next\n\n") == [SSEEvent(data="next")]


def test_close_keeps_last_event_id_and_retry() -> None:
    decoder = SSEDecoder()
    decoder.feed(b"id: 3\nretry: 100\ndata: x\n\ndata: unterminated")
    decoder.close()
    assert decoder.last_event_id == "3"
    assert decoder.retry == 100
    assert decoder.feed(b"\n\n") == []


# --- decoder: limits ---------------------------------------------------------


def test_oversize_pending_line_raises() -> None:
    decoder = SSEDecoder(max_event_size=64)
    decoder.feed(b"data: " + b"x" * 50)
    with pytest.raises(SSEError):
        decoder.feed(b"x" * 50)


def test_oversize_complete_line_raises() -> None:
    decoder = SSEDecoder(max_event_size=64)
    with pytest.raises(SSEError):
        decoder.feed(b": " + b"x" * 100 + b"\n")


def test_oversize_event_data_raises() -> None:
    decoder = SSEDecoder(max_event_size=64)
    with pytest.raises(SSEError):
        for _ in range(10):
            decoder.feed(b"data: 0123456789\n")


def test_size_limit_is_per_event() -> None:
    decoder = SSEDecoder(max_event_size=64)
    for _ in range(100):
        assert decoder.feed(b"data: 0123456789\n\n") == [SSEEvent(data="0123456789")]


def test_sse_error_is_value_error() -> None:
    assert issubclass(SSEError, ValueError)
    with pytest.raises(ValueError):
        SSEDecoder(max_event_size=0)


# --- property test -------------------------------------------------------------

_text = st.lists(
    st.text(st.characters(codec="utf-8"), max_size=10)
    | st.sampled_from(["\n", "\r", "\r\n", " ", ":", "\0", "\ufeff", "data: "]),
    max_size=8,
).map("".join)
_token = st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\r\n\0"), max_size=12)

_events = st.builds(
    SSEEvent,
    data=_text,
    event=st.none() | _token,
    id=st.none() | _token,
    retry=st.none() | st.integers(min_value=0, max_value=2**40),
)


def _normalise(data: str) -> str:
    return re.sub(r"\r\n|\r", "\n", data)


@settings(max_examples=300)
@given(
    events=st.lists(_events, max_size=8),
    comments=st.lists(st.integers(min_value=0, max_value=8), max_size=4),
    bom=st.booleans(),
    eol=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    draw=st.data(),
)
def test_round_trip_with_random_chunking(
    events: list[SSEEvent], comments: list[int], bom: bool, eol: bytes, draw: st.DataObject
) -> None:
    pieces = [encode_event(event) for event in events]
    for position in comments:
        pieces.insert(min(position, len(pieces)), encode_comment("keep-alive"))
    # The encoder writes LF only (CR in values is split into separate lines),
    # so every LF is a line ending and can be swapped for another one.
    stream = (b"\xef\xbb\xbf" if bom else b"") + b"".join(pieces).replace(b"\n", eol)

    splits = draw.draw(st.lists(st.integers(min_value=0, max_value=len(stream)), max_size=20))
    cuts = sorted(set(splits))
    chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    decoder = SSEDecoder()
    decoded: list[SSEEvent] = []
    for chunk in chunks:
        decoded.extend(decoder.feed(chunk))
    decoded.extend(decoder.close())

    expected = [
        SSEEvent(data=_normalise(e.data), event=e.event, id=e.id, retry=e.retry)
        for e in events
        if e.data  # empty data is never dispatched
    ]
    assert decoded == expected
    assert decoder.comments_seen == len(comments)
    ids = [e.id for e in events if e.id is not None]
    assert decoder.last_event_id == (ids[-1] if ids else None)
    retries = [e.retry for e in events if e.retry is not None]
    assert decoder.retry == (retries[-1] if retries else None)
