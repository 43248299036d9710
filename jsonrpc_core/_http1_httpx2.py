"""A user's `httpx2.AsyncClient` where rpcweave takes an `httpx.AsyncClient`.

httpx2 (Pydantic's continuation of httpx, with httpcore2) has httpx's API under another
module, so its classes are not httpx's: its client rejects an `httpx.URL`, its errors are
not `httpx.HTTPError`. Rather than spelling every request and every ``except`` twice,
the stack keeps speaking httpx and `as_httpx_client` puts a thin `httpx.AsyncClient` in
front of the user's httpx2 client, whose transport (`Httpx2Transport`) sends each request
through that client.

Rules:

1. The user's client does the sending: its auth, headers, cookies, event hooks, redirect
   policy and pool apply, as they are at each request. The front client adds no default
   header of its own and takes the user client's timeouts and base URL when it is made;
   a timeout a request names wins, as in httpx.
2. Bodies go through untouched: the request body streams as it is, the response's raw
   (still encoded) bytes come back for the front client to decode once.
3. httpx2's request errors come back as the httpx errors of the same name
   (`httpx2.ReadTimeout` -> `httpx.ReadTimeout`), the original as ``__cause__``.
4. The user's client stays the user's: closing the front client never closes it.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Union

import httpx

if TYPE_CHECKING:
    import httpx2

__all__ = ["AnyAsyncClient", "Httpx2Transport", "as_httpx_client"]

AnyAsyncClient = Union[httpx.AsyncClient, "httpx2.AsyncClient"]
"""A client rpcweave accepts from a user: httpx's, or httpx2's (see `as_httpx_client`)."""


def as_httpx_client(client: AnyAsyncClient) -> httpx.AsyncClient:
    """``client`` as an `httpx.AsyncClient`: itself if it is one, else (an
    `httpx2.AsyncClient`) a front client sending through it (module rules 1-4)."""
    if isinstance(client, httpx.AsyncClient):
        return client
    httpx2_module = sys.modules.get("httpx2")
    if httpx2_module is None or not isinstance(client, httpx2_module.AsyncClient):
        raise TypeError(
            f"expected an httpx.AsyncClient or an httpx2.AsyncClient, got {type(client).__name__}"
        )
    timeout = client.timeout
    front = httpx.AsyncClient(
        transport=Httpx2Transport(client),
        timeout=httpx.Timeout(
            connect=timeout.connect, read=timeout.read, write=timeout.write, pool=timeout.pool
        ),
        base_url=str(client.base_url),
        trust_env=False,  # the user's client applies its own proxies
    )
    for name in list(front.headers):  # httpx's defaults: the user's client adds its own
        del front.headers[name]
    return front


def _httpx_error(exc: Exception) -> httpx.RequestError:
    """The httpx error of the same name as httpx2's ``exc`` (`httpx.RequestError` if none)."""
    kind = getattr(httpx, type(exc).__name__, None)
    if not (isinstance(kind, type) and issubclass(kind, httpx.RequestError)):
        kind = httpx.RequestError
    error: httpx.RequestError = kind(str(exc))
    return error


class Httpx2Transport(httpx.AsyncBaseTransport):
    """An httpx transport that sends each request with an `httpx2.AsyncClient`."""

    def __init__(self, client: httpx2.AsyncClient) -> None:
        import httpx2

        self._client = client
        self._errors = httpx2.RequestError

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through the httpx2 client; return once its head arrived."""
        try:
            content: Any = request.content
        except httpx.RequestNotRead:
            content = request.stream
        inner = self._client.build_request(
            request.method,
            str(request.url),
            headers=request.headers.multi_items(),
            content=content,
            extensions=dict(request.extensions),
        )
        try:
            response = await self._client.send(inner, stream=True)
        except self._errors as exc:
            raise _httpx_error(exc) from exc
        extensions: dict[str, Any] = {
            key: response.extensions[key]
            for key in ("http_version", "reason_phrase")
            if key in response.extensions
        }
        return httpx.Response(
            response.status_code,
            headers=response.headers.multi_items(),
            stream=_Httpx2Body(response, self._errors),
            extensions=extensions,
        )

    async def aclose(self) -> None:
        """Nothing to close: the httpx2 client is its owner's (module rule 4)."""


class _Httpx2Body(httpx.AsyncByteStream):
    """An httpx2 response's raw body, with its errors as httpx's."""

    def __init__(self, response: httpx2.Response, errors: type[Exception]) -> None:
        self._response = response
        self._errors = errors

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except self._errors as exc:
            raise _httpx_error(exc) from exc

    async def aclose(self) -> None:
        await self._response.aclose()
