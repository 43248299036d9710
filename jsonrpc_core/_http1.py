"""rpcweave's HTTP/1.1 client: the one piece of HTTP it owns, and its public surface.

httpx stays the API (auth, timeouts, event hooks, cookies, env proxies); `HTTP1Transport`
replaces httpcore + h11 under it with a keep-alive pool whose responses are parsed by
httptools (llhttp). It is kept because it measured faster than every maintained
alternative plugged in under the same stack (``python -m bench --only http-clients``).

This module is the boundary: the rest of the repository imports the client from here
only. Behind it: `_http1_parse` (framing), `_http1_conn` and `_http1_asyncio` (the
connections), `_http1_pool` (the pool and the exchange), `_http1_resolve` (address
policies), `_http1_proxies` (the environment's proxies), `_http1_httpx2` (a user's httpx2
client). It uses httpx's public API only (``tests/jsonrpc_core/test_http1_boundary.py`` checks).

Rules:

1. `new_async_client` behaves as `httpx.AsyncClient` with the same arguments, on
   `HTTP1Transport` unless a transport, a proxy or HTTP/2 is asked for; the proxies named
   by the environment are mounted ahead of it as httpx does for its own transport.
2. Its cookie jar skips the (costly) cookie extraction of a response without a
   ``Set-Cookie`` or ``Set-Cookie2`` header: there is nothing to extract from it. The jar
   lives behind httpx's public ``cookies`` property, which httpx itself reads it through.
3. `StreamableHTTPTransport` and `HTTPSSETransport` (so MCP's `connect`) and
   `A2AClient` take a user's `httpx.AsyncClient` or `httpx2.AsyncClient`
   (`AnyAsyncClient`), made an httpx one by `as_httpx_client`.
4. `send_post` sends a JSON-RPC POST. On a client of `new_async_client` with nothing
   mounted, when none of httpx's client layer applies (no auth, cookies, event hooks,
   default query parameters, redirects to follow, credentials in the URL, or httpx's
   INFO log), it goes straight to `HTTP1Transport.post`: the same bytes on the wire
   without building httpx's request objects, a third of the client's CPU per call.
   Otherwise, and for any other client, it is httpx's ``build_request`` and ``send``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import httpx

from ._http1_httpx2 import AnyAsyncClient, Httpx2Transport, as_httpx_client
from ._http1_parse import MAX_HEAD
from ._http1_pool import DEFAULT_LIMITS, HTTP1Transport
from ._http1_proxies import environment_proxies
from ._http1_resolve import (
    AddressRefused,
    AddressResolver,
    is_public_address,
    public_addresses_only,
    system_resolve,
)

__all__ = [
    "MAX_HEAD",
    "AddressRefused",
    "AddressResolver",
    "AnyAsyncClient",
    "HTTP1Transport",
    "Httpx2Transport",
    "as_httpx_client",
    "environment_proxies",
    "is_public_address",
    "new_async_client",
    "public_addresses_only",
    "send_post",
    "system_resolve",
]

_HTTPX_LOG = logging.getLogger("httpx")  # httpx logs each request it sends at INFO


def new_async_client(
    *, timeout: httpx.Timeout | float = 30.0, auth: httpx.Auth | None = None, **kwargs: Any
) -> httpx.AsyncClient:
    """An `httpx.AsyncClient` for rpcweave's own requests, on `HTTP1Transport`.

    Keyword arguments are `httpx.AsyncClient`'s. ``verify``, ``cert``, ``limits`` and
    ``trust_env`` configure the transport too; the proxies named by the environment
    (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) are mounted ahead of it,
    as httpx does for its own default transport. With ``transport``, ``proxy`` or
    ``http2=True`` the transport is httpx's own choice.

    ``resolve`` is an address policy for `HTTP1Transport` (e.g. `public_addresses_only()`):
    every connection then goes to an address it checked. A proxy would make the
    connection instead, so ``resolve`` needs ``trust_env=False`` and no ``proxy``,
    ``transport``, ``mounts`` or ``http2`` (`ValueError` otherwise).
    """
    resolve: AddressResolver | None = kwargs.pop("resolve", None)
    if resolve is not None and (
        kwargs.get("trust_env", True)
        or any(name in kwargs for name in ("transport", "proxy", "mounts"))
        or kwargs.get("http2")
    ):
        raise ValueError(
            "an address policy (resolve) needs trust_env=False and no proxy, transport, "
            "mounts or http2: the checked address must be the one connected to"
        )
    if "transport" in kwargs or "proxy" in kwargs or kwargs.get("http2"):
        return _Client(timeout=timeout, auth=auth, **kwargs)
    verify = kwargs.get("verify", True)
    cert = kwargs.get("cert")
    limits = kwargs.get("limits", DEFAULT_LIMITS)
    trust_env = kwargs.get("trust_env", True)
    transport = HTTP1Transport(
        verify=verify, cert=cert, trust_env=trust_env, limits=limits, resolve=resolve
    )
    if trust_env:
        mounts = _environment_proxy_mounts(verify, cert, limits)
        if mounts:
            mounts.update(kwargs.pop("mounts", None) or {})
            kwargs["mounts"] = mounts
    # Every URL goes to the transport unless something is mounted (rule 4).
    direct = None if kwargs.get("mounts") else transport
    return _Client(timeout=timeout, auth=auth, transport=transport, direct=direct, **kwargs)


async def send_post(
    client: httpx.AsyncClient,
    url: httpx.URL | str,
    headers: Mapping[str, str],
    content: bytes,
    *,
    auth: Any = httpx.USE_CLIENT_DEFAULT,
) -> httpx.Response:
    """``client.send(client.build_request("POST", url, content=content, headers=headers),
    stream=True, auth=auth)``, taking the shortest way where that means the same (rule 4)."""
    if isinstance(client, _Client) and isinstance(url, httpx.URL):
        transport = client.direct_transport(url, auth)
        if transport is not None:
            try:
                response = await transport.post(
                    url, client.headers, headers, content, client.timeout
                )
            except UnicodeEncodeError:
                pass  # a header httpx encodes otherwise: its own way, below
            else:
                client.cookies.extract_cookies(response)
                return response
    request = client.build_request("POST", url, content=content, headers=headers)
    return await client.send(request, stream=True, auth=auth)


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, without the extraction pass over a response that sets none."""

    def extract_cookies(self, response: httpx.Response) -> None:
        for name, _ in response.headers.raw:
            if name.lower().startswith(b"set-cookie"):
                super().extract_cookies(response)
                return


class _Client(httpx.AsyncClient):
    """`httpx.AsyncClient` whose cookie jar is a `_Cookies` (module rule 2), and which
    knows its transport when every URL goes to it (``direct``, rule 4)."""

    def __init__(
        self, *, cookies: Any = None, direct: HTTP1Transport | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self._jar = _Cookies(cookies)
        self._direct = direct

    def direct_transport(self, url: httpx.URL, auth: Any) -> HTTP1Transport | None:
        """The transport a POST to ``url`` may go to straight (rule 4), or None."""
        if (
            self._direct is None
            or auth is not httpx.USE_CLIENT_DEFAULT
            or self.auth is not None
            or self.is_closed
            or self.follow_redirects
            or self.params
            or self._jar
            or self.event_hooks["request"]
            or self.event_hooks["response"]
            or not url.is_absolute_url
            or url.userinfo
            or _HTTPX_LOG.isEnabledFor(logging.INFO)
        ):
            return None
        return self._direct

    @property
    def cookies(self) -> httpx.Cookies:
        """Cookie values to include when sending requests (httpx's property)."""
        return self._jar

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        self._jar = _Cookies(cookies)


def _environment_proxy_mounts(
    verify: Any, cert: Any, limits: httpx.Limits
) -> dict[str, httpx.AsyncBaseTransport | None]:
    """httpx's proxy transports for the environment's proxies (`environment_proxies`)."""
    return {
        pattern: None
        if proxy is None
        else httpx.AsyncHTTPTransport(verify=verify, cert=cert, limits=limits, proxy=proxy)
        for pattern, proxy in environment_proxies().items()
    }
