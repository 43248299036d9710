"""HTTP/1.1 framing for `HTTP1Transport`: the request head out, the response in (httptools).

Rules:

1. `ResponseReader` parses one response, skipping interim 1xx ones. It is ``done`` once
   the final response is complete (or at its head, for ``HEAD``, 101, 204 and 304); a
   body read until close ends only at `ResponseReader.eof`.
2. Its ``keep_alive`` is true only if the server allows keep-alive and nothing followed
   the response: a byte after it, or a parse error after it, makes the connection
   unusable for another request.
3. A malformed response, a head larger than `MAX_HEAD` and a close before the response
   is complete raise `httpx.RemoteProtocolError`; so do, as with h11, ``chunked``
   applied more than once (in one ``Transfer-Encoding`` header or across several) and a
   status below 100 (llhttp takes any three digits). Trailers are parsed and dropped.
   Heads llhttp refuses but h11 took (obsolete line folding, bare LF line ends, a
   Content-Length repeated with one value) are parsed again repaired (each obs-fold
   replaced by SP, as RFC 9112 5.2 asks of a user agent); such a connection is not reused.
4. `request_head` refuses a CR or LF inside the request line or a header, and
   `send_body_stream` a streamed body longer or shorter than its ``Content-Length`` (its
   surplus would be read as the next request), both with `httpx.LocalProtocolError`.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import AsyncIterable, Awaitable, Callable, Mapping
from typing import Any

import httpx
from httptools import HttpParserError, HttpParserUpgrade, HttpResponseParser

__all__ = ["MAX_HEAD", "ResponseReader", "post_head", "request_head", "send_body_stream"]

MAX_HEAD = 64 * 1024
"""The largest response head (status line and headers) accepted, in bytes."""

_REPAIRABLE = re.compile(rb"\n[ \t]|[^\r]\n")  # an obs-fold or a bare LF
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_LINE_END = re.compile(rb"\r?\n")


def _repaired(head: bytes) -> bytes:
    """``head`` (without its blank line) unfolded, with CRLF ends and one Content-Length."""
    lines: list[bytes] = []
    length: bytes | None = None
    for line in _LINE_END.split(head):
        if lines and line[:1] in (b" ", b"\t"):
            lines[-1] = lines[-1].rstrip(b" \t") + b" " + line.strip(b" \t")
            continue
        if line[:15].lower() == b"content-length:":
            values = {value.strip() for value in line[15:].split(b",")}
            if len(values) == 1:
                value = values.pop()
                if value == length:
                    continue
                length = value if length is None else length
                line = b"Content-Length: " + value
        lines.append(line)
    return b"\r\n".join(lines) + b"\r\n\r\n"


class ResponseReader:
    """One response being parsed (after any interim 1xx ones), as bytes arrive."""

    __slots__ = (
        "body",
        "buffered",
        "done",
        "fed",
        "got",
        "head_bytes",
        "head_done",
        "headers",
        "interim",
        "keep_alive",
        "no_body",
        "parser",
        "reason",
        "refusal",
        "repairing",
        "status",
    )

    def __init__(self, no_body: bool) -> None:
        self.parser = HttpResponseParser(self)
        self.no_body = no_body
        self.status = 0
        self.reason = b""
        self.headers: list[tuple[bytes, bytes]] = []
        self.head_done = False
        self.interim = False
        self.done = False
        self.keep_alive = False
        self.body: deque[bytes] = deque()
        self.buffered = 0
        self.fed = 0
        self.got = False  # any byte of a response arrived
        self.head_bytes: list[bytes] = []  # all fed until the head is done, to parse again
        self.repairing: bytearray | None = None  # once repairing: a head not yet whole
        self.refusal: str | None = None  # why a head llhttp took is refused (rule 3)

    # httptools callbacks

    def on_message_begin(self) -> None:
        if self.done:  # a second response nobody asked for
            self.keep_alive = False

    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        if not self.head_done:
            self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self.done:
            return
        status = self.parser.get_status_code()
        refusal = _refusal(status, self.headers)
        if refusal is not None:
            self.refusal = refusal
            raise httpx.RemoteProtocolError(refusal)  # llhttp stops: `_parse` raises it
        if 100 <= status < 200 and status != 101:
            self.interim = True
            self.headers = []
            self.reason = b""
            return
        self.status = status
        self.head_done = True
        self.keep_alive = status != 101 and self.parser.should_keep_alive()
        if self.no_body or status == 101:
            self.done = True

    def on_body(self, data: bytes) -> None:
        if self.done:
            self.keep_alive = False
            return
        self.body.append(data)
        self.buffered += len(data)

    def on_message_complete(self) -> None:
        if self.interim:
            self.interim = False
        else:
            self.done = True

    # driven by the connection

    def feed(self, data: bytes) -> None:
        """Parse ``data``; raises `httpx.RemoteProtocolError` on a malformed response."""
        self.got = True
        if self.head_done:
            self._parse(data)
            return
        if self.repairing is not None:
            self._feed_repaired(data)
        else:
            self.head_bytes.append(data)
            try:
                self._parse(data)
            except httpx.RemoteProtocolError:
                received = b"".join(self.head_bytes)
                if (
                    self.head_done
                    or self.refusal is not None
                    or not (
                        _REPAIRABLE.search(received)
                        or received.lower().count(b"content-length:") > 1
                    )
                ):
                    raise
                # Start again on all received so far, each head repaired before it is parsed.
                self.parser = HttpResponseParser(self)
                self.headers = []
                self.reason = b""
                self.interim = False
                self.repairing = bytearray()
                self._feed_repaired(received)
        if self.head_done:
            self.head_bytes.clear()
        else:
            self.fed += len(data)
            if self.fed > MAX_HEAD:
                raise httpx.RemoteProtocolError(f"response head larger than {MAX_HEAD} bytes")

    def _parse(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except HttpParserUpgrade:
            self.keep_alive = False
        except HttpParserError as exc:
            if self.refusal is not None:
                raise httpx.RemoteProtocolError(self.refusal) from None
            if not self.done:
                raise httpx.RemoteProtocolError(f"malformed HTTP response: {exc}") from None
            self.keep_alive = False

    def _feed_repaired(self, data: bytes) -> None:
        received = self.repairing
        assert received is not None
        start = max(len(received) - 3, 0)  # where a head end may begin: bytes dribbled in
        received += data  # are scanned once, not again at each arrival
        while not self.head_done:
            end = _HEAD_END.search(received, start)
            if end is None:
                return
            self._parse(_repaired(bytes(received[: end.start()])))
            del received[: end.end()]
            start = 0
        self.repairing = None
        self.keep_alive = False
        if received:
            self._parse(bytes(received))

    def eof(self) -> None:
        """The server closed the connection: the end of a read-until-close body, else an error."""
        if self.done:
            return
        if self.head_done and self._until_close():
            self.done = True
            self.keep_alive = False
            return
        if not self.got:
            raise httpx.RemoteProtocolError("server closed the connection without a response")
        raise httpx.RemoteProtocolError("server closed the connection mid-response")

    def _until_close(self) -> bool:
        length = False
        for name, value in self.headers:
            lower = name.lower()
            if lower == b"transfer-encoding":
                return not value.lower().rstrip().endswith(b"chunked")
            if lower == b"content-length":
                length = True
        return not length

    def take(self) -> bytes:
        """The body bytes received and not yet taken."""
        body = self.body
        chunk = body.popleft() if len(body) == 1 else b"".join(body)
        body.clear()
        self.buffered = 0
        return chunk

    def http_version(self) -> bytes:
        """The response's HTTP version, as httpx's ``http_version`` extension spells it."""
        version = self.parser.get_http_version()
        return b"HTTP/1.1" if version == "1.1" else b"HTTP/" + version.encode()


def _refusal(status: int, headers: list[tuple[bytes, bytes]]) -> str | None:
    """Why a response head llhttp parsed is refused anyway (rule 3), or ``None``."""
    if status < 100:
        return f"invalid HTTP status code {status:03d}"
    chunked = 0
    for name, value in headers:
        if name.lower() == b"transfer-encoding":
            chunked += sum(c.strip().lower() == b"chunked" for c in value.split(b","))
    if chunked > 1:
        return "Transfer-Encoding: chunked applied more than once"
    return None


def request_head(request: httpx.Request, streaming: bool) -> tuple[bytes, bool, int | None]:
    """The request line and headers as sent, whether a streamed body goes chunked, and
    its declared ``Content-Length`` if it does not.

    A streamed body without ``Content-Length`` or ``Transfer-Encoding`` goes chunked.
    """
    raw = request.headers.raw
    lines = [request.method.encode("ascii") + b" " + request.url.raw_path + b" HTTP/1.1"]
    lines += [name + b": " + value for name, value in raw]
    chunked = False
    length: int | None = None
    if streaming:
        framed = False
        for name, value in raw:
            lower = name.lower()
            if lower == b"transfer-encoding":
                framed = True
                chunked = value.lower().rstrip().endswith(b"chunked")
            elif lower == b"content-length":
                framed = True
                try:
                    length = int(value)
                except ValueError:
                    raise httpx.LocalProtocolError("invalid Content-Length") from None
        if not framed:
            lines.append(b"Transfer-Encoding: chunked")
            chunked = True
    return _joined(lines), chunked, None if chunked else length


def post_head(
    url: httpx.URL, defaults: list[tuple[bytes, bytes]], headers: Mapping[str, str], length: int
) -> bytes:
    """The head `httpx.AsyncClient` sends for a POST of ``length`` bytes to ``url`` with
    ``defaults`` as the client's headers and ``headers`` as the request's: ``Host``, the
    client's headers that the request does not name, the request's, ``Content-Length``.
    `UnicodeEncodeError` for a value that is not ASCII (the caller then lets httpx encode
    it)."""
    own = {name.lower() for name in headers}
    lines = [b"POST " + url.raw_path + b" HTTP/1.1"]
    if "host" not in own and all(raw.lower() != b"host" for raw, _ in defaults):
        lines.append(b"Host: " + url.netloc)
    for raw_name, raw_value in defaults:
        if raw_name.decode("ascii").lower() not in own:
            lines.append(raw_name + b": " + raw_value)
    for name, value in headers.items():
        if name.lower() != "content-length":
            lines.append(name.encode("ascii") + b": " + value.encode("ascii"))
    lines.append(b"Content-Length: " + str(length).encode("ascii"))
    return _joined(lines)


def _joined(lines: list[bytes]) -> bytes:
    """``lines`` as a request head; `httpx.LocalProtocolError` for a CR or LF in one."""
    lines += (b"", b"")
    head = b"\r\n".join(lines)
    breaks = len(lines) - 1
    if head.count(b"\n") != breaks or head.count(b"\r") != breaks:
        raise httpx.LocalProtocolError("CR or LF in the request line or a header")
    return head


async def send_body_stream(
    write: Callable[[bytes, float | None], Awaitable[None]],
    stream: Any,
    chunked: bool,
    timeout: float | None,
    length: int | None = None,
) -> None:
    """Send a streamed request body with ``write``, in chunked framing if ``chunked``;
    else exactly ``length`` bytes when it is given."""
    assert isinstance(stream, AsyncIterable), "an httpx.AsyncClient request has an async body"
    sent = 0
    async for chunk in stream:
        if not chunk:
            continue
        if chunked:
            await write(b"%x\r\n%b\r\n" % (len(chunk), chunk), timeout)
            continue
        sent += len(chunk)
        if length is not None and sent > length:
            raise httpx.LocalProtocolError("request body longer than its Content-Length")
        await write(chunk, timeout)
    if chunked:
        await write(b"0\r\n\r\n", timeout)
    elif length is not None and sent < length:
        raise httpx.LocalProtocolError("request body shorter than its Content-Length")
