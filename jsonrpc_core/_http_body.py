"""Reading an HTTP response body with a cap, counted on the decoded bytes.

Every body an HTTP client of rpcweave reads (JSON answers, error bodies, agent cards,
OAuth documents) goes through `read_response_body`.

Rules:

1. The cap counts decoded bytes. A ``gzip`` or ``deflate`` body (or a chain of them) is
   inflated here from the raw bytes, at most ``_STEP`` bytes out of each stage per step,
   so a compression bomb stops at the cap however far it would expand: memory stays
   within about twice the cap. Other codings (``br``, ``zstd``, only decoded when their
   optional packages are installed) go through httpx's decoders, counted per chunk.
2. Past the cap the response is closed unread (no draining: its connection is not
   reused) and `ResponseTooLarge` is raised. A ``Content-Length`` over the cap on an
   unencoded body fails before anything is read.
3. The response must be unread (``client.send(..., stream=True)`` or
   ``client.stream(...)``): a body already in memory (a mock transport's) is only
   checked. The body read is kept as the response's content, so ``.json()``, ``.text``
   and httpx's own ``aread`` (in an auth flow) work afterwards.
4. A transport failure propagates as the `httpx.HTTPError` it is; a corrupt compressed
   body raises `httpx.DecodingError`, as httpx would.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncGenerator, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, cast

from ._errors import TransportError
from ._framing import DEFAULT_MAX_MESSAGE_SIZE

if TYPE_CHECKING:  # httpx is imported by whoever has a response: not by importing this
    import httpx

__all__ = ["DEFAULT_MAX_BODY_SIZE", "ResponseTooLarge", "fetch_body", "read_response_body"]

DEFAULT_MAX_BODY_SIZE = DEFAULT_MAX_MESSAGE_SIZE
"""The default cap, in decoded bytes, on a response body a client reads (16 MiB)."""

_STEP = 1 << 20  # the most bytes one inflation step gives out
_INFLATED = frozenset({"gzip", "deflate"})
_Chunks = AsyncGenerator[bytes, None]


def describe_size(size: int) -> str:
    """``size`` bytes for a message: "16 MiB", "64 KiB", "1000 bytes"."""
    if size >= 1 << 20 and not size % (1 << 20):
        return f"{size >> 20} MiB"
    if size >= 1 << 10 and not size % (1 << 10):
        return f"{size >> 10} KiB"
    return f"{size} bytes"


class ResponseTooLarge(TransportError):
    """A response body was larger than the client's cap (``limit``, decoded bytes)."""

    def __init__(self, url: str, limit: int) -> None:
        super().__init__(f"answer from {url} exceeds the {describe_size(limit)} limit")
        self.url = url
        self.limit = limit


async def read_response_body(response: httpx.Response, limit: int = DEFAULT_MAX_BODY_SIZE) -> bytes:
    """The body of an unread ``response``, at most ``limit`` decoded bytes (module rules);
    `ResponseTooLarge` past it, with the response closed."""
    if response.is_stream_consumed:  # already in memory (rule 3): only checked
        content = response.content
        if len(content) > limit:
            await _refuse(response, limit)
        return content
    headers = response.headers
    coding = headers.get("content-encoding")
    if coding is None or coding == "identity":
        length = headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > limit:
            await _refuse(response, limit)
        parts: list[bytes] = []
        total = 0
        chunks = cast(_Chunks, response.aiter_raw())  # aclose: an async generator
        async for chunk in chunks:
            total += len(chunk)
            if total > limit:
                await chunks.aclose()
                await _refuse(response, limit)
            parts.append(chunk)
    else:
        parts, total = await _decoded(response, coding, limit)
    body = parts[0] if len(parts) == 1 else b"".join(parts)
    response._content = body  # rule 3: what httpx's own read would have kept
    return body


async def fetch_body(
    client: httpx.AsyncClient,
    request: httpx.Request,
    limit: int = DEFAULT_MAX_BODY_SIZE,
    **send_options: Any,
) -> tuple[httpx.Response, bytes]:
    """Send ``request`` (``send_options`` are ``client.send``'s: ``auth``,
    ``follow_redirects``) and read its answer with `read_response_body`: the response (closed)
    and its body. ``client.get``/``post`` would read the whole body first, unbounded."""
    response = await client.send(request, stream=True, **send_options)
    try:
        return response, await read_response_body(response, limit)
    finally:
        await response.aclose()


async def _decoded(response: httpx.Response, coding: str, limit: int) -> tuple[list[bytes], int]:
    """The decoded parts of a ``Content-Encoding: coding`` body and their length."""
    codings = [c for c in (v.strip().lower() for v in coding.split(",")) if c and c != "identity"]
    parts: list[bytes] = []
    total = 0
    if not _INFLATED.issuperset(codings):
        # httpx's decoders (br, zstd, unknown codings passed through): counted per chunk.
        decoded = cast(_Chunks, response.aiter_bytes())
        async for chunk in decoded:
            total += len(chunk)
            if total > limit:
                await decoded.aclose()
                await _refuse(response, limit)
            parts.append(chunk)
        return parts, total
    # Applied in order, so undone last to first.
    stages = [_Inflater(name) for name in reversed(codings)]
    raw = cast(_Chunks, response.aiter_raw())
    try:
        async for chunk in raw:
            for part in _through(stages, chunk):
                total += len(part)
                if total > limit:
                    await raw.aclose()
                    await _refuse(response, limit)
                parts.append(part)
        for index, stage in enumerate(stages):
            for flushed in stage.flush():
                for part in _through(stages[index + 1 :], flushed):
                    total += len(part)
                    if total > limit:
                        await _refuse(response, limit)
                    parts.append(part)
    except zlib.error as exc:
        import httpx

        await response.aclose()
        raise httpx.DecodingError(f"corrupt {coding} body: {exc}") from None
    return parts, total


def _through(stages: list[_Inflater], data: bytes) -> Iterator[bytes]:
    """``data`` through each stage in turn, in pieces of at most ``_STEP`` bytes."""
    if not stages:
        if data:
            yield data
        return
    first, rest = stages[0], stages[1:]
    for piece in first.feed(data):
        yield from _through(rest, piece)


class _Inflater:
    """One ``gzip`` or ``deflate`` decoding stage, bounded per step (httpx's framing:
    gzip's first member; deflate zlib-wrapped, else raw)."""

    __slots__ = ("_guess", "_obj")

    def __init__(self, coding: str) -> None:
        gzip = coding == "gzip"
        self._obj = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)
        self._guess = not gzip  # deflate: the first bytes tell zlib-wrapped from raw

    def feed(self, data: bytes) -> Iterator[bytes]:
        while data and not self._obj.eof:
            try:
                out = self._obj.decompress(data, _STEP)
            except zlib.error:
                if not self._guess:
                    raise
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
                out = self._obj.decompress(data, _STEP)
            self._guess = False
            # Output stops at _STEP with the rest of the input left unconsumed.
            data = self._obj.unconsumed_tail
            if out:
                yield out

    def flush(self) -> Iterator[bytes]:
        # All input is consumed by now: zlib holds at most a window's worth.
        out = self._obj.flush()
        if out:
            yield out


async def _refuse(response: httpx.Response, limit: int) -> NoReturn:
    """Close ``response`` unread and raise `ResponseTooLarge` (rule 2)."""
    await response.aclose()
    try:
        url = str(response.request.url)
    except RuntimeError:  # a response built without a request
        url = "the server"
    raise ResponseTooLarge(url, limit)
