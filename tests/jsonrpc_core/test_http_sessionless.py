"""jsonrpc_core's generic pieces for a sessionless protocol beside a session-based one.

Nothing here is MCP: a `JsonRpcHTTPApp` with sessions whose `SessionPolicy` also names
the POSTs served without a session (`is_sessionless`); the ``"auto"`` response mode
(JSON when the answer comes first, SSE once anything else does); `error_status`;
the request id in errors raised by ``validate``; `HTTPRequestInfo.request_id` and
``disconnected``; and, on the client, per-message headers and `abandon`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from jsonrpc_core import (
    HTTPError,
    HTTPServerOptions,
    InvalidParams,
    JsonRpcError,
    JsonRpcHTTPApp,
    MessageStream,
    MethodRegistry,
    NotificationType,
    Peer,
    Request,
    RequestContext,
    SessionPolicy,
    StreamableHTTPTransport,
)
from jsonrpc_core.http import HTTPRequestInfo, SSEDecoder
from jsonrpc_core.testing import StreamingASGITransport

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1"
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


class App:
    """Sessions for requests with ``"session": true`` params, none for the rest."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any, Any]] = []
        self.gate = anyio.Event()
        self.cancelled = anyio.Event()
        self.peers = 0
        registry = MethodRegistry()
        registry.on("echo", self.echo)
        registry.on("chatty", self.chatty)
        registry.on("refuse", self.refuse)
        registry.on("wait", self.wait)
        self.registry = registry

        def sessionless(info: HTTPRequestInfo, payload: Any) -> bool:
            if payload is None:
                return info.headers.get("x-era") == "new"
            return isinstance(payload, Request) and not (payload.params or {}).get("session")

        def validate(info: HTTPRequestInfo, payload: Any, session: Any) -> None:
            if info.headers.get("x-bad") == "header":
                raise HTTPError(400, "bad header", error=JsonRpcError("bad header", code=-32020))

        def status(error: JsonRpcError, info: HTTPRequestInfo) -> int | None:
            return {-32602: 400, -32601: 404}.get(error.code)

        policy = SessionPolicy(
            is_start=lambda p: isinstance(p, Request) and p.method == "echo",
            is_sessionless=sessionless,
        )
        options = HTTPServerOptions(
            path="/rpc",
            sessions=policy,
            validate=validate,
            response_mode=lambda request, info: "auto" if info.session_id is None else None,
            error_status=status,
            sse_defer_timeout=5,
        )
        self.app = JsonRpcHTTPApp(self.serve, options)

    async def serve(self, stream: MessageStream) -> None:
        self.peers += 1
        await Peer(stream, self.registry).run()

    def echo(self, params: Any, ctx: RequestContext) -> Any:
        self.seen.append(("echo", ctx.request_id, getattr(ctx.info, "request_id", None)))
        return {"params": params, "session": getattr(ctx.info, "session_id", None)}

    async def chatty(self, params: Any, ctx: RequestContext) -> str:
        await ctx.peer.notify("note", {"n": 1})
        return "talked"

    def refuse(self, params: Any, ctx: RequestContext) -> None:
        raise InvalidParams("no")

    async def wait(self, params: Any, ctx: RequestContext) -> str:
        disconnected = getattr(ctx.info, "disconnected", None)
        assert disconnected is not None
        await ctx.peer.notify("note", {"n": 0})
        await disconnected.wait()
        self.cancelled.set()
        return "gone"


@asynccontextmanager
async def client(app: App) -> AsyncIterator[httpx.AsyncClient]:
    transport = StreamingASGITransport(app.app)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        with anyio.fail_after(10):
            yield http


async def post(http: httpx.AsyncClient, message: dict[str, Any], **headers: str) -> Any:
    response = await http.post("/rpc", content=json.dumps(message), headers={**HEADERS, **headers})
    return response


def sse_messages(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(e.data) for e in SSEDecoder().feed(body) if e.data]


async def test_sessionless_posts_share_one_connection_beside_sessions() -> None:
    app = App()
    async with client(app) as http:
        one = await post(http, {"jsonrpc": "2.0", "id": "a", "method": "echo", "params": {}})
        two = await post(
            http,
            {"jsonrpc": "2.0", "id": "a", "method": "echo", "params": {}},
            **{"session-id": "ignored"},
        )
        opened = await post(
            http, {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {"session": True}}
        )
    assert one.json()["result"]["session"] is None and two.status_code == 200
    assert "session-id" not in one.headers
    assert opened.headers.get("session-id")
    assert app.peers == 2  # the shared connection (made on first use) and the session
    # The same client id twice: remapped inside, restored outside, both answered.
    assert [two.json()["id"], one.json()["id"]] == ["a", "a"]
    assert [seen[2] for seen in app.seen[:2]] == ["a", "a"]  # info.request_id: the client's
    assert app.seen[0][1] != app.seen[1][1]  # the peer saw distinct internal ids


async def test_auto_mode_answers_json_first_and_sse_when_something_comes_first() -> None:
    app = App()
    async with client(app) as http:
        quick = await post(http, {"jsonrpc": "2.0", "id": 1, "method": "echo", "params": {}})
        talked = await post(http, {"jsonrpc": "2.0", "id": 2, "method": "chatty", "params": {}})
        refused = await post(http, {"jsonrpc": "2.0", "id": 3, "method": "refuse", "params": {}})
        unknown = await post(http, {"jsonrpc": "2.0", "id": 4, "method": "nope", "params": {}})
    assert quick.headers["content-type"] == "application/json"
    assert talked.headers["content-type"] == "text/event-stream"
    assert [m.get("method") for m in sse_messages(talked.content)] == ["note", None]
    assert (refused.status_code, refused.json()["error"]["code"]) == (400, -32602)
    assert (unknown.status_code, unknown.json()["error"]["code"]) == (404, -32601)


async def test_validate_errors_carry_the_request_id() -> None:
    app = App()
    async with client(app) as http:
        answer = await post(
            http,
            {"jsonrpc": "2.0", "id": 77, "method": "echo", "params": {}},
            **{"x-bad": "header"},
        )
    assert answer.status_code == 400
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": 77,
        "error": {"code": -32020, "message": "bad header"},
    }


async def test_get_and_delete_of_the_sessionless_protocol_are_405() -> None:
    app = App()
    async with client(app) as http:
        got = await http.get("/rpc", headers={"accept": "text/event-stream", "x-era": "new"})
        deleted = await http.delete("/rpc", headers={"x-era": "new"})
        old = await http.get("/rpc", headers={"accept": "text/event-stream"})
    assert (got.status_code, got.headers["allow"]) == (405, "POST")
    assert deleted.status_code == 405
    assert old.status_code == 400  # the session protocol: a missing session id


async def test_a_client_leaving_sets_disconnected() -> None:
    app = App()
    async with client(app) as http:
        message = {"jsonrpc": "2.0", "id": 1, "method": "wait", "params": {}}
        async with http.stream("POST", "/rpc", content=json.dumps(message), headers=HEADERS) as r:
            assert r.headers["content-type"] == "text/event-stream"
        await app.cancelled.wait()


async def test_client_message_headers_and_abandon() -> None:
    app = App()
    sent: list[httpx.Request] = []

    async def record(request: httpx.Request) -> None:
        sent.append(request)

    transport = StreamingASGITransport(app.app)
    async with httpx.AsyncClient(
        transport=transport, base_url=BASE, event_hooks={"request": [record]}
    ) as http:
        with anyio.fail_after(10):
            async with StreamableHTTPTransport(
                f"{BASE}/rpc",
                client=http,
                standalone_stream=False,
                message_headers=lambda m: {"x-method": getattr(m, "method", "")},
            ) as stream:
                notes: list[Any] = []
                noted = anyio.Event()
                registry = MethodRegistry()

                def note(params: Any, ctx: RequestContext) -> None:
                    notes.append(params)
                    if len(notes) == 2:  # the one "wait" sends: its stream is open
                        noted.set()

                registry.on(NotificationType("note"), note)
                async with Peer(stream, registry) as peer:
                    assert await peer.request("chatty", {}) == "talked"
                    request_id = peer.new_request_id()

                    async def wait() -> None:
                        await peer.request("wait", {}, request_id=request_id)

                    async with anyio.create_task_group() as task_group:
                        task_group.start_soon(wait)
                        await noted.wait()
                        assert stream.abandon(request_id)
                        await app.cancelled.wait()
                        task_group.cancel_scope.cancel()
                    assert not stream.abandon(request_id)  # nothing left to close
    assert [r.headers["x-method"] for r in sent] == ["chatty", "wait"]
