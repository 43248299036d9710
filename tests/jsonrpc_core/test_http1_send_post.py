"""`jsonrpc_core.http.send_post`: a JSON-RPC POST on rpcweave's own client goes straight
to `HTTP1Transport` with the very bytes httpx would send, and takes httpx's way whenever
its client layer has something to do (cookies, auth, event hooks, its INFO log, a client
that is not ours).

The servers are raw TCP listeners on 127.0.0.1 (`test_http1_transport.raw_server`) that
record each request head byte for byte.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest
from test_http1_transport import LIMIT, ServerConn, raw_server

from jsonrpc_core.http import HTTP1Transport, new_async_client, send_post

pytestmark = pytest.mark.anyio

BODY = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
HEADERS = {"content-type": "application/json", "accept": "application/json", "x-trace": "7"}


def answering_json(heads: list[bytes], extra: bytes = b"") -> Callable[[ServerConn], Any]:
    """Record each request head as sent, answer each with a small JSON body."""

    async def handler(conn: ServerConn) -> None:
        while True:
            while b"\r\n\r\n" not in conn.buf:
                if not await conn._more():
                    return
            head, conn.buf = conn.buf.split(b"\r\n\r\n", 1)
            heads.append(head)
            length = next(
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            await conn._exactly(length)
            answer = b'{"jsonrpc":"2.0","id":1,"result":{}}'
            head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%bContent-Length: %d"
            await conn.send(head % (extra, len(answer)) + b"\r\n\r\n" + answer)

    return handler


class BuildCounter:
    """Counts ``build_request`` calls on one client (httpx's way of sending)."""

    def __init__(self, client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        real = client.build_request

        def counted(*args: Any, **kwargs: Any) -> httpx.Request:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(client, "build_request", counted)


async def post(client: httpx.AsyncClient, url: httpx.URL, **kwargs: Any) -> httpx.Response:
    with anyio.fail_after(LIMIT):
        response = await send_post(client, url, HEADERS, BODY, **kwargs)
        await response.aread()
    assert response.status_code == 200 and response.json()["result"] == {}
    return response


async def test_our_client_sends_the_head_httpx_would_without_building_a_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    heads: list[bytes] = []
    async with raw_server(answering_json(heads)) as server, new_async_client() as client:
        url = httpx.URL(server.url + "/rpc?x=1")
        built = BuildCounter(client, monkeypatch)
        response = await post(client, url)
        assert built.calls == 0
        assert response.request.method == "POST" and response.request.url == url
        client.event_hooks["request"] = [lambda request: _nothing()]  # httpx's way now
        await post(client, url)
        assert built.calls == 1
    assert len(heads) == 2 and heads[0] == heads[1]
    assert heads[0].startswith(b"POST /rpc?x=1 HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b"\r\naccept: application/json\r\n" in heads[0]
    assert heads[0].endswith(b"\r\nContent-Length: %d" % len(BODY))


async def _nothing() -> None:
    return None


async def test_a_cookie_the_server_sets_is_sent_back(monkeypatch: pytest.MonkeyPatch) -> None:
    heads: list[bytes] = []
    handler = answering_json(heads, extra=b"Set-Cookie: route=a1; Path=/\r\n")
    async with raw_server(handler) as server, new_async_client() as client:
        url = httpx.URL(server.url + "/rpc")
        await post(client, url)
        assert client.cookies.get("route") == "a1"
        built = BuildCounter(client, monkeypatch)
        await post(client, url)
        assert built.calls == 1  # a cookie to send: httpx's way
    assert b"\r\nCookie: route=a1" not in heads[0]
    assert b"\r\nCookie: route=a1" in heads[1]


async def test_auth_of_the_client_of_the_call_and_of_the_url_is_applied() -> None:
    heads: list[bytes] = []
    async with raw_server(answering_json(heads)) as server:
        url = httpx.URL(server.url + "/rpc")
        async with new_async_client(auth=httpx.BasicAuth("a", "b")) as client:
            await post(client, url)
        async with new_async_client() as client:
            await post(client, url, auth=httpx.BasicAuth("c", "d"))
            await post(client, url.copy_with(username="e", password="f"))
    assert [b"Authorization: Basic" in head for head in heads] == [True, True, True]
    assert len({head.split(b"Authorization: ")[1].split(b"\r\n")[0] for head in heads}) == 3


async def test_event_hooks_see_each_post() -> None:
    seen: list[str] = []

    async def on_request(request: httpx.Request) -> None:
        seen.append(f"request {request.method}")

    async def on_response(response: httpx.Response) -> None:
        seen.append(f"response {response.status_code}")

    heads: list[bytes] = []
    hooks = {"request": [on_request], "response": [on_response]}
    async with raw_server(answering_json(heads)) as server:
        async with new_async_client(event_hooks=hooks) as client:
            await post(client, httpx.URL(server.url))
    assert seen == ["request POST", "response 200"]


async def test_httpx_info_log_still_records_each_post(caplog: pytest.LogCaptureFixture) -> None:
    heads: list[bytes] = []
    async with raw_server(answering_json(heads)) as server, new_async_client() as client:
        with caplog.at_level(logging.INFO, logger="httpx"):
            await post(client, httpx.URL(server.url + "/rpc"))
    assert any("HTTP Request: POST" in record.getMessage() for record in caplog.records)


async def test_a_client_that_is_not_ours_is_used_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    heads: list[bytes] = []
    async with raw_server(answering_json(heads)) as server:
        async with httpx.AsyncClient(transport=HTTP1Transport()) as client:
            built = BuildCounter(client, monkeypatch)
            await post(client, httpx.URL(server.url + "/rpc"))
            assert built.calls == 1
    assert heads[0].startswith(b"POST /rpc HTTP/1.1\r\n")
