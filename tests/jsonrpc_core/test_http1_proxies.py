"""The environment's proxies on a `new_async_client`, read without httpx's private helpers.

`jsonrpc_core._http1_proxies.environment_proxies` turns ``HTTP_PROXY``/``HTTPS_PROXY``/
``ALL_PROXY``/``NO_PROXY`` into httpx mount patterns; `new_async_client` mounts httpx's
proxy transport for them ahead of `HTTP1Transport`. Against raw servers on 127.0.0.1: a
"proxy" that records the absolute-form request line, and an "origin".

Tests the private unit `jsonrpc_core._http1_proxies.environment_proxies` on purpose: its
mount patterns are the point.
"""

from __future__ import annotations

import sys

import anyio
import httpx
import pytest
from test_http1_transport import LIMIT, ServerConn, ok, raw_server

from jsonrpc_core._http1 import environment_proxies
from jsonrpc_core.http import new_async_client

pytestmark = pytest.mark.anyio

PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "request_method")


@pytest.fixture(autouse=True)
def no_proxy_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Start each test from an environment that names no proxy."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def test_proxy_variables_become_httpx_mount_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    monkeypatch.setenv("HTTPS_PROXY", "proxy.invalid:3129")  # no scheme: an http:// proxy
    monkeypatch.setenv("NO_PROXY", "direct.invalid, 10.1.2.3,::1,localhost,https://x.invalid")
    assert environment_proxies() == {
        "http://": "http://proxy.invalid:3128",
        "https://": "http://proxy.invalid:3129",
        "all://*direct.invalid": None,
        "all://10.1.2.3": None,
        "all://[::1]": None,
        "all://localhost": None,
        "https://x.invalid": None,
    }


def test_no_proxy_star_means_no_proxy_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "http://proxy.invalid:3128")
    assert environment_proxies() == {"all://": "http://proxy.invalid:3128"}
    monkeypatch.setenv("NO_PROXY", "*")
    assert environment_proxies() == {}


class Recorder:
    """A raw server's handler that records each request line and answers ``name``."""

    def __init__(self, name: bytes) -> None:
        self.name = name
        self.lines: list[bytes] = []

    async def __call__(self, conn: ServerConn) -> None:
        while (request := await conn.read_request()) is not None:
            self.lines.append(request[0])
            await conn.send(ok(self.name))


async def fetch(url: str, **options: object) -> bytes:
    with anyio.fail_after(LIMIT):
        async with new_async_client(**options) as client:  # type: ignore[arg-type]
            return (await client.get(url)).content


async def test_a_request_goes_through_the_proxy_the_environment_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    proxy, origin = Recorder(b"proxy"), Recorder(b"origin")
    async with raw_server(proxy) as proxy_server, raw_server(origin) as origin_server:
        monkeypatch.setenv("HTTP_PROXY", proxy_server.url)
        assert await fetch(origin_server.url + "/a") == b"proxy"
        assert await fetch(origin_server.url + "/b", trust_env=False) == b"origin"
        monkeypatch.setenv("NO_PROXY", "127.0.0.1")
        assert await fetch(origin_server.url + "/c") == b"origin"
    assert proxy.lines == [f"GET {origin_server.url}/a HTTP/1.1".encode()]
    assert origin.lines == [b"GET /b HTTP/1.1", b"GET /c HTTP/1.1"]


async def test_the_environment_proxies_do_not_depend_on_httpx_private_helpers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # httpx keeps its own reader of these variables in a private module; rpcweave must
    # not go quiet (connect directly) when that module is gone or moved.
    monkeypatch.setitem(sys.modules, "httpx._utils", None)
    proxy, origin = Recorder(b"proxy"), Recorder(b"origin")
    async with raw_server(proxy) as proxy_server, raw_server(origin) as origin_server:
        monkeypatch.setenv("HTTP_PROXY", proxy_server.url)
        assert await fetch(origin_server.url + "/") == b"proxy"
    assert origin.lines == []


async def test_a_given_transport_is_used_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # would refuse: not used
    seen: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(204)

    async with new_async_client(transport=httpx.MockTransport(answer), timeout=3.0) as client:
        assert client.timeout.read == 3.0
        assert (await client.get("http://example.invalid/x")).status_code == 204
    assert seen == ["http://example.invalid/x"]
