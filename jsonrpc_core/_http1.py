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
"""

from __future__ import annotations

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
    "system_resolve",
]


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
    return _Client(timeout=timeout, auth=auth, transport=transport, **kwargs)


class _Cookies(httpx.Cookies):
    """httpx's cookie jar, without the extraction pass over a response that sets none."""

    def extract_cookies(self, response: httpx.Response) -> None:
        for name, _ in response.headers.raw:
            if name.lower().startswith(b"set-cookie"):
                super().extract_cookies(response)
                return


class _Client(httpx.AsyncClient):
    """`httpx.AsyncClient` whose cookie jar is a `_Cookies` (module rule 2)."""

    def __init__(self, *, cookies: Any = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._jar = _Cookies(cookies)

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
