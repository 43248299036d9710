"""`JsonRpcHTTPApp` driven in process with raw HTTP requests: statuses, headers, bodies.

Every test talks to the app through `StreamingASGITransport` (no sockets) and decodes
SSE bodies with `SSEDecoder`. The server side is a `Peer` per connection serving the
small registry built by `Server` below; tests steer long-running handlers through
named gates (`anyio.Event`) instead of sleeping.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from _http_fixtures import BASE, PATH, SESSION, TIMEOUT, HTTPTestServer, client_for, wait_until

from jsonrpc_core import (
    BearerAuth,
    HTTPError,
    InMemoryEventStore,
    InvalidParams,
    MethodRegistry,
    OriginPolicy,
    Request,
    SessionPolicy,
)
from jsonrpc_core.http import (
    HTTPRequest,
    HTTPResponse,
    Route,
    SSEDecoder,
    SSEEvent,
    SSEResponse,
    encode_event,
)
from jsonrpc_core.testing import StreamingASGITransport

pytestmark = pytest.mark.anyio

ACCEPT_BOTH = "application/json, text/event-stream"
POST_HEADERS = {"content-type": "application/json", "accept": ACCEPT_BOTH}


class Server(HTTPTestServer):
    """`HTTPTestServer` plus ``fail`` and ``stream3``; ``stream_closed`` holds the ids
    of the ``stream3`` calls whose results were closed."""

    def __init__(self, **options: Any) -> None:
        self.stream_closed: list[Any] = []
        super().__init__(**options)

    def registry(self) -> MethodRegistry:
        registry = super().registry()
        server = self

        def fail(params: Any, ctx: Any) -> Any:
            raise RuntimeError("this handler always fails")

        async def stream3(params: Any, ctx: Any) -> AsyncIterator[Any]:
            async def results() -> AsyncGenerator[Any, None]:
                try:
                    for n in (1, 2, 3):
                        yield {"item": n}
                finally:
                    server.stream_closed.append(ctx.request_id)

            return results()

        registry.on("fail", fail)
        registry.on("stream3", stream3)
        return registry


def request(request_id: Any, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def notification(method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def headers(session: str | None = None, **extra: str) -> dict[str, str]:
    result = dict(POST_HEADERS)
    if session is not None:
        result[SESSION] = session
    result.update({k.replace("_", "-"): v for k, v in extra.items()})
    return result


async def post(
    client: httpx.AsyncClient,
    body: bytes,
    session: str | None = None,
    *,
    path: str = PATH,
    extra: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.post(path, content=body, headers={**headers(session), **(extra or {})})


def messages_of(response: httpx.Response) -> list[Any]:
    """The JSON-RPC messages in a complete SSE body, in order."""
    assert response.headers["content-type"].startswith("text/event-stream")
    return [json.loads(event.data) for event in SSEDecoder().feed(response.content)]


def blocks(raw: bytes) -> list[dict[str, list[str]]]:
    """The raw SSE blocks of a body: field name -> values (to see priming events)."""
    result = []
    for block in raw.replace(b"\r\n", b"\n").split(b"\n\n"):
        if not block.strip():
            continue
        fields: dict[str, list[str]] = {}
        for line in block.decode().split("\n"):
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value.removeprefix(" "))
        result.append(fields)
    return result


async def open_session(client: httpx.AsyncClient) -> str:
    response = await post(client, request(0, "echo", ["open"]))
    assert response.status_code == 200, response.text
    return response.headers[SESSION]


class SSEReader:
    """Reads a streamed SSE response one event at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.decoder = SSEDecoder()
        self.raw = bytearray()
        self._chunks = response.aiter_bytes()
        self._pending: deque[SSEEvent] = deque()
        self.ended = False

    async def next_event(self) -> SSEEvent | None:
        """The next event with data, or ``None`` at the end of the stream."""
        while not self._pending:
            if self.ended:
                return None
            try:
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self.ended = True
                return None
            self.raw += chunk
            self._pending.extend(self.decoder.feed(chunk))
        return self._pending.popleft()

    async def message(self) -> Any:
        event = await self.next_event()
        assert event is not None, "the stream ended"
        return json.loads(event.data)

    async def rest(self) -> list[Any]:
        """Every remaining message until the stream ends."""
        result = []
        while (event := await self.next_event()) is not None:
            result.append(json.loads(event.data))
        return result

    async def aclose(self) -> None:
        await self._chunks.aclose()  # type: ignore[attr-defined]


@asynccontextmanager
async def sse(
    client: httpx.AsyncClient,
    method: str,
    body: bytes | None = None,
    *,
    path: str = PATH,
    headers: dict[str, str],
) -> AsyncIterator[SSEReader]:
    """A streamed request; leaving the block drops the connection."""
    async with client.stream(method, path, content=body, headers=headers) as response:
        reader = SSEReader(response)
        try:
            yield reader
        finally:
            await reader.aclose()


def get_headers(session: str | None, **extra: str) -> dict[str, str]:
    result = {"accept": "text/event-stream"}
    if session is not None:
        result[SESSION] = session
    result.update({k.replace("_", "-"): v for k, v in extra.items()})
    return result


def error_code(response: httpx.Response) -> int:
    return int(response.json()["error"]["code"])


# -- malformed input ----------------------------------------------------------------


async def test_malformed_json_is_400_parse_error_with_null_id() -> None:
    server = Server()
    async with client_for(server) as client:
        response = await post(client, b'{"jsonrpc": "2.0", "method": "foobar, "params": "bar"')
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["jsonrpc"] == "2.0"
    assert body["id"] is None
    assert body["error"]["code"] == -32700


@pytest.mark.parametrize("body", [b'{"foo": "boo"}', b"42", b"[]", b"[1, 2]"])
async def test_json_that_is_not_a_request_is_400_invalid_request(body: bytes) -> None:
    server = Server()
    async with client_for(server) as client:
        response = await post(client, body)
    assert response.status_code == 400
    assert response.json()["id"] is None
    assert error_code(response) == -32600


async def test_wrong_content_type_is_415() -> None:
    server = Server()
    async with client_for(server) as client:
        response = await client.post(
            PATH,
            content=request(1, "echo", [1]),
            headers={"content-type": "text/plain", "accept": ACCEPT_BOTH},
        )
    assert response.status_code == 415


@pytest.mark.parametrize("accept", [None, "application/json", "text/event-stream", "text/html"])
async def test_post_accept_lacking_a_required_type_is_406(accept: str | None) -> None:
    server = Server()
    async with client_for(server) as client:
        hdrs = {"content-type": "application/json"}
        if accept is not None:
            hdrs["accept"] = accept
        built = client.build_request("POST", PATH, content=request(1, "echo", [1]), headers=hdrs)
        if accept is None:
            del built.headers["accept"]  # httpx sends "*/*" by default
        response = await client.send(built)
    assert response.status_code == 406


async def test_get_accept_lacking_event_stream_is_406() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        response = await client.get(PATH, headers={"accept": "application/json", SESSION: session})
    assert response.status_code == 406


async def test_body_over_limit_with_content_length_is_413() -> None:
    server = Server(max_body_size=1024)
    async with client_for(server) as client:
        body = request(1, "echo", {"x": "y" * 2048})
        response = await post(client, body)
        assert response.status_code == 413
        # a body within the limit still works
        assert (await post(client, request(2, "echo", [2]))).status_code == 200


async def test_body_over_limit_streamed_without_length_is_413() -> None:
    server = Server(max_body_size=1024)
    sent: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "echo", "params": ["'
        for _ in range(64):
            sent.append(1)
            yield b"x" * 256
        yield b'"]}'

    async with client_for(server) as client:
        response = await client.post(PATH, content=chunks(), headers=POST_HEADERS)
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    # the server stopped reading soon after the limit, not at the end of the body
    assert len(sent) < 64


# -- sessions -----------------------------------------------------------------------


async def test_unknown_session_id_is_404() -> None:
    server = Server()
    async with client_for(server) as client:
        await open_session(client)
        response = await post(client, request(1, "echo", [1]), "no-such-session")
        get = await client.get(PATH, headers=get_headers("no-such-session"))
        delete = await client.delete(PATH, headers={SESSION: "no-such-session"})
    assert response.status_code == 404
    assert get.status_code == 404
    assert delete.status_code == 404


async def test_missing_session_id_on_a_non_start_request_is_400() -> None:
    server = Server(sessions=SessionPolicy(is_start=lambda p: getattr(p, "method", "") == "open"))
    async with client_for(server) as client:
        response = await post(client, request(1, "echo", [1]))
        note = await post(client, notification("echo", [1]))
        get = await client.get(PATH, headers=get_headers(None))
    assert response.status_code == 400
    assert note.status_code == 400
    assert get.status_code == 400
    assert len(server.app.sessions) == 0


async def test_a_wrapper_set_on_serve_connection_later_serves_every_connection() -> None:
    server = Server()
    served: list[Any] = []
    serve = server.app.serve_connection

    async def wrapped(stream: Any) -> None:
        served.append(stream)
        await serve(stream)

    server.app.serve_connection = wrapped
    async with client_for(server) as client:
        first = await post(client, request(1, "echo", ["a"]))
        second = await post(client, request(2, "echo", ["b"]), first.headers[SESSION])
        other = await post(client, request(1, "echo", ["c"]))
    assert [first.status_code, second.status_code, other.status_code] == [200, 200, 200]
    assert len(served) == 2  # one per session


async def test_session_id_header_on_the_first_response_only() -> None:
    server = Server()
    async with client_for(server) as client:
        first = await post(client, request(1, "echo", ["a"]))
        session = first.headers[SESSION]
        assert session
        assert all(0x21 <= ord(c) <= 0x7E for c in session)
        second = await post(client, request(2, "echo", ["b"]), session)
        note = await post(client, notification("echo", ["c"]), session)
    assert second.status_code == 200
    assert SESSION not in second.headers
    assert SESSION not in note.headers
    assert messages_of(second)[-1] == {"jsonrpc": "2.0", "id": 2, "result": ["b"]}


async def test_session_not_registered_when_its_first_request_failed() -> None:
    server = Server()
    async with client_for(server) as client:
        response = await post(client, request(1, "fail"))
        assert response.status_code == 200
        assert messages_of(response)[-1]["error"]["code"] == -32603
        assert len(server.app.sessions) == 0
        session = response.headers.get(SESSION)
        if session is not None:
            retry = await post(client, request(2, "echo", [2]), session)
            assert retry.status_code == 404


async def test_session_not_registered_when_first_request_fails_after_a_notification() -> None:
    """The handler notifies (so the SSE response, with its headers, has started) and
    then fails: the session id already went out, so it must then be unknown (404)."""
    server = Server()
    async with client_for(server) as client:
        response = await post(client, request(1, "script", {"ops": ["note", "fail"]}))
        assert response.status_code == 200
        assert messages_of(response)[-1]["error"]["code"] == -32603
        session = response.headers.get(SESSION)
        if session is not None:
            retry = await post(client, request(2, "echo", [2]), session)
            assert retry.status_code == 404
        assert len(server.app.sessions) == 0


async def test_delete_ends_the_session() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        assert len(server.app.sessions) == 1
        deleted = await client.delete(PATH, headers={SESSION: session})
        assert deleted.status_code == 200
        assert len(server.app.sessions) == 0
        after = await post(client, request(1, "echo", [1]), session)
        assert after.status_code == 404
        await wait_until(lambda: server.peer.closed)


async def test_get_and_delete_on_a_stateless_app_are_405() -> None:
    server = Server(sessions=None)
    async with client_for(server) as client:
        get = await client.get(PATH, headers=get_headers(None))
        delete = await client.delete(PATH)
        put = await client.put(PATH, content=b"{}", headers=POST_HEADERS)
        # POST still works, with no session id
        answer = await post(client, request(1, "echo", [1]))
    assert get.status_code == 405
    assert delete.status_code == 405
    assert put.status_code == 405
    assert answer.status_code == 200
    assert SESSION not in answer.headers
    assert messages_of(answer)[-1]["result"] == [1]


async def test_max_sessions_reached_is_503_while_existing_sessions_work() -> None:
    server = Server(max_sessions=1)
    async with client_for(server) as client:
        session = await open_session(client)
        refused = await post(client, request(1, "echo", [1]))
        assert refused.status_code == 503
        assert SESSION not in refused.headers
        still = await post(client, request(2, "echo", [2]), session)
        assert still.status_code == 200
        assert messages_of(still)[-1]["result"] == [2]
        assert len(server.app.sessions) == 1


async def test_max_sessions_holds_for_concurrent_session_starts() -> None:
    """Two session-start requests in flight at once must not both get a session
    when only one is allowed (the table must never exceed ``max_sessions``)."""
    server = Server(max_sessions=1)
    statuses: list[int] = []
    async with client_for(server) as client:

        async def start(n: int) -> None:
            body = request(n, "script", {"ops": ["wait:go"]})
            statuses.append((await post(client, body)).status_code)

        async with anyio.create_task_group() as tg:
            tg.start_soon(start, 1)
            tg.start_soon(start, 2)
            await wait_until(lambda: len(server.peers) == 2 or len(statuses) == 1)
            server.gate("go").set()
        assert len(server.app.sessions) <= 1
        assert sorted(statuses) == [200, 503]


async def test_idle_session_is_closed_after_idle_timeout() -> None:
    server = Server(idle_timeout=0.2)
    async with client_for(server) as client:
        session = await open_session(client)
        assert len(server.app.sessions) == 1
        await wait_until(lambda: len(server.app.sessions) == 0)
        response = await post(client, request(1, "echo", [1]), session)
        assert response.status_code == 404
        await wait_until(lambda: server.peer.closed)


async def test_session_with_open_standalone_stream_is_not_idle() -> None:
    server = Server(idle_timeout=0.2, event_store=InMemoryEventStore())
    async with client_for(server) as client:
        session = await open_session(client)
        async with sse(client, "GET", headers=get_headers(session)) as stream:
            await wait_until(lambda: server.app.sessions.get(session).standalone.attached)  # type: ignore[union-attr]
            # Time is under test: several reaper intervals pass; the session must stay.
            for _ in range(20):
                await anyio.sleep(0.05)
                assert len(server.app.sessions) == 1
            await server.peer.notify("still/here")
            assert (await stream.message())["method"] == "still/here"


async def test_dropped_standalone_stream_is_released() -> None:
    """A client that drops its standalone GET may open it again at once (no 409), and
    the session, now without a stream or request, becomes idle and is reaped."""
    server = Server(idle_timeout=0.3)
    async with client_for(server) as client:
        session = await open_session(client)
        state = server.app.sessions.get(session)
        async with sse(client, "GET", headers=get_headers(session)) as stream:
            assert stream.response.status_code == 200
        await wait_until(lambda: server.http_calls == 0)
        async with sse(client, "GET", headers=get_headers(session)) as again:  # no Last-Event-ID
            assert again.response.status_code == 200
        await wait_until(lambda: not state.standalone.attached, timeout=2)  # type: ignore[union-attr]
        await wait_until(lambda: len(server.app.sessions) == 0, timeout=2)


# -- Host, Origin, authentication ---------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        ({"host": "evil.example"}, 403),
        ({"host": "evil.example:80"}, 403),
        ({"host": "127.0.0.1.evil.example"}, 403),
        ({"origin": "http://evil.example"}, 403),
        ({"origin": "null"}, 403),
        ({"origin": "http://127.0.0.1.evil.example"}, 403),
        ({"host": "1"}, 403),
        ({"origin": "http://1:8000"}, 403),
        ({"host": "localhost:8000"}, 200),
        ({"host": "127.0.0.1:1234", "origin": "http://localhost:3000"}, 200),
        ({"origin": "https://127.0.0.1"}, 200),
        ({"host": "[::1]:8000", "origin": "http://[::1]:8000"}, 200),
        ({}, 200),
    ],
)
async def test_host_and_origin_checks(extra: dict[str, str], status: int) -> None:
    server = Server(sessions=None)
    async with client_for(server) as client:
        response = await post(client, request(1, "echo", [1]), extra=extra)
    assert response.status_code == status
    if status == 403:
        assert response.json()["id"] is None
        assert "error" in response.json()


async def test_forbidden_origin_is_refused_before_the_body_is_read() -> None:
    server = Server(sessions=None)
    read: list[int] = []

    async def chunks() -> AsyncIterator[bytes]:
        read.append(1)
        yield request(1, "echo", [1])

    async with client_for(server) as client:
        response = await client.post(
            PATH, content=chunks(), headers={**POST_HEADERS, "origin": "http://evil.example"}
        )
    assert response.status_code == 403
    assert read == []


async def test_origin_policy_can_be_relaxed() -> None:
    server = Server(sessions=None, origin_policy=OriginPolicy.allow_all())
    async with client_for(server) as client:
        response = await post(
            client,
            request(1, "echo", [1]),
            extra={"host": "example.com", "origin": "https://example.com"},
        )
    assert response.status_code == 200


TOKENS = {"alice-token": "alice", "bob-token": "bob"}
METADATA = "https://127.0.0.1/.well-known/oauth-protected-resource"


async def verify(token: str) -> Any:
    return TOKENS.get(token)


def auth_server(**options: Any) -> Server:
    return Server(auth=BearerAuth(verify, resource_metadata_url=METADATA), **options)


async def test_missing_bearer_token_is_401_with_challenge() -> None:
    server = auth_server()
    async with client_for(server) as client:
        response = await post(client, request(1, "echo", [1]))
        get = await client.get(PATH, headers=get_headers(None))
        basic = await post(client, request(1, "echo", [1]), extra={"authorization": "Basic eDp5"})
    for answer in (response, get, basic):
        assert answer.status_code == 401
        challenge = answer.headers["www-authenticate"]
        assert challenge.startswith("Bearer")
        assert f'resource_metadata="{METADATA}"' in challenge
    assert len(server.app.sessions) == 0


async def test_invalid_bearer_token_is_401_invalid_token() -> None:
    server = auth_server()
    async with client_for(server) as client:
        response = await post(
            client, request(1, "echo", [1]), extra={"authorization": "Bearer wrong"}
        )
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="invalid_token"' in challenge
    assert f'resource_metadata="{METADATA}"' in challenge
    assert len(server.app.sessions) == 0


async def test_valid_token_principal_reaches_handler_and_owns_its_session() -> None:
    server = auth_server(json_response=True)
    alice = {"authorization": "Bearer alice-token"}
    bob = {"authorization": "Bearer bob-token"}
    async with client_for(server) as client:
        first = await post(client, request(1, "whoami"), extra=alice)
        assert first.status_code == 200
        session = first.headers[SESSION]
        assert first.json()["result"] == {"principal": "alice", "session": session}
        again = await post(client, request(2, "whoami"), session, extra=alice)
        assert again.json()["result"]["principal"] == "alice"
        # the same session id presented by another principal is unknown to them
        stolen = await post(client, request(3, "whoami"), session, extra=bob)
        assert stolen.status_code == 404
        stolen_get = await client.get(PATH, headers={**get_headers(session), **bob})
        assert stolen_get.status_code == 404
        stolen_delete = await client.delete(PATH, headers={SESSION: session, **bob})
        assert stolen_delete.status_code == 404
        assert len(server.app.sessions) == 1
        # bob's own session works
        bobs = await post(client, request(4, "whoami"), extra=bob)
        assert bobs.json()["result"]["principal"] == "bob"


# -- POST answers -------------------------------------------------------------------


async def test_notification_and_response_posts_are_202_with_empty_body() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        note = await post(client, notification("echo", [1]), session)
        answer = await post(client, b'{"jsonrpc": "2.0", "id": 99, "result": "late"}', session)
        error = await post(
            client,
            b'{"jsonrpc": "2.0", "id": 98, "error": {"code": -1, "message": "no"}}',
            session,
        )
    for response in (note, answer, error):
        assert response.status_code == 202
        assert response.content == b""


async def test_json_mode_returns_application_json() -> None:
    server = Server(json_response=True)
    async with client_for(server) as client:
        first = await post(client, request(1, "echo", {"text": "héllo"}))
        session = first.headers[SESSION]
        second = await post(client, request("b", "echo", [2]), session)
    for response in (first, second):
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
    assert first.json() == {"jsonrpc": "2.0", "id": 1, "result": {"text": "héllo"}}
    assert second.json() == {"jsonrpc": "2.0", "id": "b", "result": [2]}


async def test_sse_mode_primes_then_related_messages_then_response_then_ends() -> None:
    server = Server(event_store=InMemoryEventStore(), retry_interval_ms=250)
    async with client_for(server) as client:
        session = await open_session(client)
        body = request(7, "script", {"ops": ["note", "note", "note"]})
        response = await post(client, body, session)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["cache-control"].startswith("no-cache")
    raw = blocks(response.content)
    priming = raw[0]
    assert priming["id"][0]
    assert priming["data"] == [""]
    assert priming["retry"] == ["250"]
    decoded = messages_of(response)
    assert decoded == [
        {"jsonrpc": "2.0", "method": "progress", "params": {"n": 1}},
        {"jsonrpc": "2.0", "method": "progress", "params": {"n": 2}},
        {"jsonrpc": "2.0", "method": "progress", "params": {"n": 3}},
        {"jsonrpc": "2.0", "id": 7, "result": {"notes": 3}},
    ]
    # every event has a distinct id from the same stream
    ids = [block["id"][0] for block in raw]
    assert len(set(ids)) == len(ids) == 5
    assert len({event_id.rpartition(":")[0] for event_id in ids}) == 1


async def test_sse_mode_without_event_store_sends_no_ids() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        response = await post(client, request(7, "script", {"ops": ["note"]}), session)
    raw = blocks(response.content)
    assert all("id" not in block for block in raw)
    assert messages_of(response) == [
        {"jsonrpc": "2.0", "method": "progress", "params": {"n": 1}},
        {"jsonrpc": "2.0", "id": 7, "result": {"notes": 1}},
    ]


async def test_batch_is_answered_as_a_json_array_in_json_mode() -> None:
    server = Server(json_response=True)
    async with client_for(server) as client:
        session = await open_session(client)
        body = b"[" + b",".join([request(1, "echo", [1]), request(2, "echo", [2])]) + b"]"
        response = await post(client, body, session)
        with_note = b"[" + request(3, "echo", [3]) + b"," + notification("echo", [0]) + b"]"
        mixed = await post(client, with_note, session)
        only_notes = b"[" + notification("echo", [1]) + b"," + notification("echo", [2]) + b"]"
        notes = await post(client, only_notes, session)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    answers = response.json()
    assert isinstance(answers, list)
    assert sorted(answers, key=lambda a: a["id"]) == [
        {"jsonrpc": "2.0", "id": 1, "result": [1]},
        {"jsonrpc": "2.0", "id": 2, "result": [2]},
    ]
    assert mixed.json() == [{"jsonrpc": "2.0", "id": 3, "result": [3]}]
    assert notes.status_code == 202
    assert notes.content == b""


async def test_batch_with_an_invalid_member_answers_it_with_a_null_id_error() -> None:
    """JSON-RPC 2.0 section 6 example: a valid request plus ``{"foo": "boo"}`` is
    answered with the result and an Invalid Request error whose id is null."""
    server = Server(json_response=True)
    async with client_for(server) as client:
        session = await open_session(client)
        body = b"[" + request(1, "echo", [1]) + b', {"foo": "boo"}]'
        response = await post(client, body, session)
    assert response.status_code == 200
    answers = response.json()
    assert {"jsonrpc": "2.0", "id": 1, "result": [1]} in answers
    errors = [a for a in answers if "error" in a]
    assert len(errors) == 1
    assert errors[0]["id"] is None
    assert errors[0]["error"]["code"] == -32600


async def test_batch_in_sse_mode_streams_every_answer() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        body = b"[" + b",".join([request(1, "echo", [1]), request(2, "echo", [2])]) + b"]"
        response = await post(client, body, session)
    got = messages_of(response)
    assert sorted(got, key=lambda a: a["id"]) == [
        {"jsonrpc": "2.0", "id": 1, "result": [1]},
        {"jsonrpc": "2.0", "id": 2, "result": [2]},
    ]


async def test_batches_refused_when_not_allowed() -> None:
    server = Server(allow_batch=False, json_response=True)
    async with client_for(server) as client:
        session = await open_session(client)
        body = b"[" + request(1, "echo", [1]) + b"]"
        response = await post(client, body, session)
    assert response.status_code == 400
    assert response.json()["id"] is None
    assert error_code(response) == -32600


async def test_duplicate_request_id_in_flight_is_400() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        body = request(5, "script", {"ops": ["wait:go"]})
        async with sse(client, "POST", body, headers=headers(session)) as first:
            again = await post(client, body, session)
            assert again.status_code == 400
            assert error_code(again) == -32600
            server.gate("go").set()
            assert (await first.rest())[-1] == {"jsonrpc": "2.0", "id": 5, "result": {"notes": 0}}


# -- the standalone stream ----------------------------------------------------------


async def test_standalone_get_receives_unrelated_server_notifications() -> None:
    server = Server(event_store=InMemoryEventStore())
    async with client_for(server) as client:
        session = await open_session(client)
        async with sse(client, "GET", headers=get_headers(session)) as stream:
            assert stream.response.status_code == 200
            assert stream.response.headers["content-type"].startswith("text/event-stream")
            # the server's Peer speaks outside any request: the standalone stream carries it
            await server.peer.notify("server/announce", {"n": 1})
            assert await stream.message() == {
                "jsonrpc": "2.0",
                "method": "server/announce",
                "params": {"n": 1},
            }
            assert blocks(bytes(stream.raw))[0]["data"] == [""]  # priming first
            # a request's own notifications go on its POST stream, not here
            answer = await post(client, request(1, "script", {"ops": ["note"]}), session)
            assert [m.get("method") for m in messages_of(answer)] == ["progress", None]
            await server.peer.notify("server/announce", {"n": 2})
            assert (await stream.message())["params"] == {"n": 2}


async def test_server_notification_before_get_is_kept_for_the_stream() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        await server.peer.notify("server/early", {"n": 0})
        async with sse(client, "GET", headers=get_headers(session)) as stream:
            assert (await stream.message())["method"] == "server/early"


async def test_second_concurrent_standalone_get_is_409() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        async with sse(client, "GET", headers=get_headers(session)) as stream:
            assert stream.response.status_code == 200
            second = await client.get(PATH, headers=get_headers(session))
            assert second.status_code == 409
            # the first stream is unaffected
            await server.peer.notify("server/still-first")
            assert (await stream.message())["method"] == "server/still-first"


async def test_standalone_stream_disabled_is_405() -> None:
    server = Server(standalone_stream=False)
    async with client_for(server) as client:
        session = await open_session(client)
        response = await client.get(PATH, headers=get_headers(session))
    assert response.status_code == 405


# -- lifetime -----------------------------------------------------------------------


async def test_503_before_start_and_works_inside_running() -> None:
    server = Server(sessions=None)

    async def without_lifespan(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            return  # an ASGI server that does not run lifespan
        await server.app(scope, receive, send)

    transport = StreamingASGITransport(without_lifespan)
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        with anyio.fail_after(TIMEOUT):
            assert not server.app.started
            early = await post(client, request(1, "echo", [1]))
            assert early.status_code == 503
            async with server.app.running():
                assert server.app.started
                works = await post(client, request(2, "echo", [2]))
                assert works.status_code == 200
                assert messages_of(works)[-1]["result"] == [2]
            assert not server.app.started
            late = await post(client, request(3, "echo", [3]))
            assert late.status_code == 503


async def test_client_disconnect_mid_stream_leaves_nothing_behind() -> None:
    server = Server(event_store=InMemoryEventStore())
    async with client_for(server) as client:
        session = await open_session(client)
        state = server.app.sessions.get(session)
        body = request(9, "script", {"ops": ["note", "wait:go", "note"]})
        async with sse(client, "POST", body, headers=headers(session)) as stream:
            assert (await stream.message())["method"] == "progress"
            assert state.active_requests == 1  # type: ignore[union-attr]
        # dropped: the HTTP task ends, the request is no longer counted...
        await wait_until(lambda: server.http_calls == 0 and state.active_requests == 0)  # type: ignore[union-attr]
        assert server.completed == []
        # ...but disconnection is not cancellation: the handler still completes
        server.gate("go").set()
        await wait_until(lambda: server.completed == [9])
        assert state.active_requests == 0  # type: ignore[union-attr]
        assert server.http_calls == 0
        answer = await post(client, request(10, "echo", [10]), session)
        assert messages_of(answer)[-1]["result"] == [10]


async def test_close_ends_sessions_and_later_requests_get_503() -> None:
    server = Server()
    async with client_for(server) as client:
        session = await open_session(client)
        body = request(1, "script", {"ops": ["note", "wait:never"]})
        async with sse(client, "POST", body, headers=headers(session)) as stream:
            assert (await stream.message())["method"] == "progress"
            server.app.close()
            assert await stream.rest() == []
        assert len(server.app.sessions) == 0
        after = await post(client, request(2, "echo", [2]))
        assert after.status_code == 503


# -- routing ------------------------------------------------------------------------


async def test_trailing_slash_on_the_endpoint_is_accepted() -> None:
    server = Server(json_response=True)
    async with client_for(server) as client:
        first = await post(client, request(1, "echo", [1]), path=PATH + "/")
        session = first.headers[SESSION]
        second = await post(client, request(2, "echo", [2]), session, path=PATH + "/")
        delete = await client.delete(PATH + "/", headers={SESSION: session})
    assert first.json()["result"] == [1]
    assert second.json()["result"] == [2]
    assert delete.status_code == 200


async def test_extra_routes_match_params_and_methods() -> None:
    seen: list[tuple[str, str, dict[str, str], bytes]] = []

    async def get_task(req: HTTPRequest) -> HTTPResponse:
        seen.append((req.method, req.path, req.path_params, req.body))
        return HTTPResponse.json({"id": req.path_params["id"], "q": dict(req.query)})

    async def cancel_task(req: HTTPRequest) -> HTTPResponse:
        seen.append((req.method, req.path, req.path_params, req.body))
        return HTTPResponse.json({"cancelled": req.path_params["id"], "body": req.json()}, 202)

    routes = [  # the custom-verb route first: "/tasks/{id}" would also fit its paths
        Route("/tasks/{id}:cancel", ("POST",), cancel_task),
        Route("/tasks/{id}", ("GET",), get_task),
    ]
    server = Server(routes=routes)
    async with client_for(server) as client:
        got = await client.get("/tasks/abc?x=1")
        cancelled = await client.post("/tasks/t-9:cancel", json={"why": "test"})
        wrong_method = await client.delete("/tasks/abc")
        wrong_cancel = await client.get("/tasks/abc:cancel")
        unknown = await client.get("/tasks/abc/more")
        elsewhere = await client.get("/nothing/here")
        forbidden = await client.get("/tasks/abc", headers={"host": "evil.example"})
    assert got.status_code == 200
    assert got.json() == {"id": "abc", "q": {"x": "1"}}
    assert cancelled.status_code == 202
    assert cancelled.json() == {"cancelled": "t-9", "body": {"why": "test"}}
    assert wrong_method.status_code == 405
    assert "GET" in wrong_method.headers["allow"]
    assert wrong_cancel.status_code == 405
    assert unknown.status_code == 404
    assert elsewhere.status_code == 404
    assert forbidden.status_code == 403
    assert [s[2] for s in seen] == [{"id": "abc"}, {"id": "t-9"}]


async def test_routes_sharing_a_path_are_chosen_by_method() -> None:
    """Two routes with one path and different methods (A2A: GET and DELETE of a push
    config): each method reaches its own route; only other methods get 405."""

    async def get_config(req: HTTPRequest) -> HTTPResponse:
        return HTTPResponse.json({"got": req.path_params["id"]})

    async def delete_config(req: HTTPRequest) -> HTTPResponse:
        return HTTPResponse.json({"deleted": req.path_params["id"]})

    routes = [
        Route("/configs/{id}", ("GET",), get_config),
        Route("/configs/{id}", ("DELETE",), delete_config),
    ]
    server = Server(routes=routes)
    async with client_for(server) as client:
        got = await client.get("/configs/c1")
        deleted = await client.delete("/configs/c1")
        put = await client.put("/configs/c1", content=b"{}")
    assert got.json() == {"got": "c1"}
    assert deleted.status_code == 200
    assert deleted.json() == {"deleted": "c1"}
    assert put.status_code == 405


async def test_sse_response_from_an_extra_route_streams() -> None:
    release = anyio.Event()

    async def events() -> AsyncIterator[bytes]:
        yield encode_event(SSEEvent(json.dumps({"n": 1}), "status"))
        await release.wait()
        yield encode_event(SSEEvent(json.dumps({"n": 2}), "status", "e2"))

    async def subscribe(req: HTTPRequest) -> SSEResponse:
        return SSEResponse(events(), headers={"x-stream": req.path_params["id"]})

    server = Server(routes=[Route("/tasks/{id}:subscribe", ("GET",), subscribe)])
    async with client_for(server) as client:
        async with sse(client, "GET", path="/tasks/t1:subscribe", headers={}) as stream:
            assert stream.response.status_code == 200
            assert stream.response.headers["content-type"] == "text/event-stream"
            assert stream.response.headers["x-stream"] == "t1"
            first = await stream.next_event()
            # the first event arrives before the second is even produced
            assert first == SSEEvent('{"n": 1}', "status")
            release.set()
            second = await stream.next_event()
            assert second == SSEEvent('{"n": 2}', "status", "e2")
            assert await stream.next_event() is None


# -- resumability -------------------------------------------------------------------


async def test_resume_with_last_event_id_delivers_exactly_the_rest() -> None:
    server = Server(event_store=InMemoryEventStore())
    ops = ["note", "note", "wait:dropped", "note", "note", "wait:resumed", "note"]
    async with client_for(server) as client:
        session = await open_session(client)
        async with sse(
            client, "POST", request(3, "script", {"ops": ops}), headers=headers(session)
        ) as s:
            assert await s.message() == {"jsonrpc": "2.0", "method": "progress", "params": {"n": 1}}
            assert (await s.message())["params"] == {"n": 2}
            last_id = s.decoder.last_event_id
            assert last_id is not None
        # notes 3 and 4 are sent while nobody listens
        server.gate("dropped").set()
        state = server.app.sessions.get(session)
        await wait_until(lambda: state.active_requests == 0)  # type: ignore[union-attr]
        async with sse(client, "GET", headers=get_headers(session, last_event_id=last_id)) as r:
            assert r.response.status_code == 200
            assert (await r.message())["params"] == {"n": 3}
            assert (await r.message())["params"] == {"n": 4}
            # note 5 and the response are sent while the resumed stream listens
            server.gate("resumed").set()
            rest = await r.rest()
        assert rest == [
            {"jsonrpc": "2.0", "method": "progress", "params": {"n": 5}},
            {"jsonrpc": "2.0", "id": 3, "result": {"notes": 5}},
        ]
        # a finished stream can still be replayed from the store
        async with sse(client, "GET", headers=get_headers(session, last_event_id=last_id)) as r2:
            replayed = await r2.rest()
        assert [m.get("params", {}).get("n") for m in replayed] == [3, 4, 5, None]
        assert replayed[-1]["id"] == 3


async def test_resume_with_unknown_last_event_id_is_404() -> None:
    server = Server(event_store=InMemoryEventStore())
    async with client_for(server) as client:
        session = await open_session(client)
        response = await client.get(
            PATH, headers=get_headers(session, last_event_id="nosuchstream:3")
        )
    assert response.status_code == 404


async def test_resume_cannot_read_another_sessions_stream() -> None:
    """Event ids are per session: a stream of session A is not replayed to session B."""
    server = Server(event_store=InMemoryEventStore())
    async with client_for(server) as client:
        session_a = await open_session(client)
        body = request(1, "script", {"ops": ["note", "note"]})
        async with sse(client, "POST", body, headers=headers(session_a)) as stream:
            await stream.message()
            a_event = stream.decoder.last_event_id
            await stream.rest()
        assert a_event is not None
        session_b = await open_session(client)
        async with sse(
            client, "GET", headers=get_headers(session_b, last_event_id=a_event)
        ) as other:
            leaked = (await other.rest()) if other.response.status_code == 200 else []
        assert leaked == []


async def test_handler_closing_its_stream_ends_post_early_and_get_resumes() -> None:
    server = Server(event_store=InMemoryEventStore(), retry_interval_ms=75)
    ops = ["note", "close", "wait:go", "note", "note"]
    async with client_for(server) as client:
        session = await open_session(client)
        async with sse(
            client, "POST", request(4, "script", {"ops": ops}), headers=headers(session)
        ) as s:
            assert (await s.message())["params"] == {"n": 1}
            assert await s.rest() == []  # ended early, before the response
            assert s.decoder.retry == 75
            # the last block before the end carries the retry field
            assert blocks(bytes(s.raw))[-1].get("retry") == ["75"]
            last_id = s.decoder.last_event_id
        assert last_id is not None
        async with sse(client, "GET", headers=get_headers(session, last_event_id=last_id)) as r:
            server.gate("go").set()
            rest = await r.rest()
    assert rest == [
        {"jsonrpc": "2.0", "method": "progress", "params": {"n": 2}},
        {"jsonrpc": "2.0", "method": "progress", "params": {"n": 3}},
        {"jsonrpc": "2.0", "id": 4, "result": {"notes": 3}},
    ]


async def test_close_sse_stream_in_the_session_start_request_loses_nothing() -> None:
    """``ctx.info.close_sse_stream`` is usable by the first request of a session too,
    whose handler runs before the response has started; whatever the handler sends
    after closing must then be replayed after the id the client was given (the
    priming event's), so the priming id must precede every event of its stream."""
    server = Server(event_store=InMemoryEventStore())
    async with client_for(server) as client:
        response = await post(client, request(1, "script", {"ops": ["close", "note"]}))
        assert response.status_code == 200
        got = messages_of(response)
        # closed early: neither the note nor the answer (nor an error) is on this stream
        assert got == [], got
        session = response.headers[SESSION]
        last_id = blocks(response.content)[0]["id"][0]
        resumed = await client.get(PATH, headers=get_headers(session, last_event_id=last_id))
        assert messages_of(resumed) == [
            {"jsonrpc": "2.0", "method": "progress", "params": {"n": 1}},
            {"jsonrpc": "2.0", "id": 1, "result": {"notes": 1}},
        ]


# -- HTTP+SSE (2024-11-05) ----------------------------------------------------------


async def test_legacy_http_sse_endpoint_and_answers_on_the_stream() -> None:
    server = Server(legacy_sse_path="/sse")
    async with client_for(server) as client:
        async with sse(client, "GET", path="/sse", headers={"accept": "text/event-stream"}) as s:
            assert s.response.status_code == 200
            endpoint = await s.next_event()
            assert endpoint is not None
            assert endpoint.event == "endpoint"
            assert endpoint.data.startswith("/messages?session_id=")
            accepted = await client.post(
                endpoint.data, content=request(1, "echo", [1]), headers=POST_HEADERS
            )
            assert accepted.status_code == 202
            assert await s.message() == {"jsonrpc": "2.0", "id": 1, "result": [1]}
            note = await client.post(
                endpoint.data, content=notification("echo"), headers=POST_HEADERS
            )
            assert note.status_code == 202
            unknown = await client.post(
                "/messages?session_id=nope", content=request(2, "echo"), headers=POST_HEADERS
            )
            assert unknown.status_code == 404
            missing = await client.post(
                "/messages", content=request(3, "echo"), headers=POST_HEADERS
            )
            assert missing.status_code == 400
            malformed = await client.post(endpoint.data, content=b"{oops", headers=POST_HEADERS)
            assert malformed.status_code == 400
            assert error_code(malformed) == -32700
        # the stream is gone: so is its session
        await wait_until(lambda: len(server.app.sessions) == 0)
        gone = await client.post(endpoint.data, content=request(4, "echo"), headers=POST_HEADERS)
        assert gone.status_code == 404


async def test_legacy_validate_hook_json_rpc_error_is_answered() -> None:
    """A validate hook refusing a legacy (HTTP+SSE) POST with a `JsonRpcError` gets that
    error to the client with the request's id, as on Streamable HTTP; it must not
    escape the app (a 500)."""

    def validate(info: Any, payload: Any, session: Any) -> None:
        if getattr(payload, "method", None) == "refused":
            raise InvalidParams("unsupported protocol version")

    server = Server(legacy_sse_path="/sse", validate=validate)
    expected = {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32602, "message": "unsupported protocol version"},
    }
    async with client_for(server) as client:
        async with sse(client, "GET", path="/sse", headers={"accept": "text/event-stream"}) as s:
            endpoint = await s.next_event()
            assert endpoint is not None
            answer = await client.post(
                endpoint.data, content=request(1, "refused"), headers=POST_HEADERS
            )
            assert answer.status_code < 500
            if answer.status_code == 202:
                assert await s.message() == expected
            else:
                assert answer.json() == expected


# -- hooks --------------------------------------------------------------------------


async def test_validate_hook_http_error_and_json_rpc_error() -> None:
    def validate(info: Any, payload: Any, session: Any) -> None:
        method = getattr(payload, "method", None)
        if method == "forbidden":
            raise HTTPError(403, "Forbidden by policy", headers={"x-why": "policy"})
        if method == "bad/version":
            raise InvalidParams("unsupported protocol version")
        if info.header("mcp-protocol-version") == "1999-01-01":
            raise HTTPError(400, "Bad protocol version")

    server = Server(validate=validate, json_response=True)
    async with client_for(server) as client:
        session = await open_session(client)
        forbidden = await post(client, request(1, "forbidden"), session)
        refused = await post(client, request(2, "bad/version"), session)
        version = await post(
            client, request(3, "echo"), session, extra={"mcp-protocol-version": "1999-01-01"}
        )
        fresh = await post(client, request(4, "forbidden"))
        sessions_after = len(server.app.sessions)
        ok = await post(client, request(5, "echo", [5]), session)
    assert forbidden.status_code == 403
    assert forbidden.headers["x-why"] == "policy"
    assert refused.status_code == 200
    assert refused.json() == {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {"code": -32602, "message": "unsupported protocol version"},
    }
    assert version.status_code == 400
    # a refused session start leaves no session behind
    assert fresh.status_code == 403
    assert SESSION not in fresh.headers
    assert sessions_after == 1
    assert ok.json()["result"] == [5]


async def test_async_validate_hook() -> None:
    async def validate(info: Any, payload: Any, session: Any) -> None:
        await anyio.lowlevel.checkpoint()
        if getattr(payload, "method", None) == "nope":
            raise HTTPError(422, "no")

    server = Server(validate=validate, sessions=None)
    async with client_for(server) as client:
        assert (await post(client, request(1, "nope"))).status_code == 422
        assert (await post(client, request(2, "echo", [2]))).status_code == 200


async def test_response_mode_hook_chooses_per_method() -> None:
    def mode(req: Request, info: Any) -> Any:
        return {"echo": "json", "script": "sse"}.get(req.method)

    server = Server(response_mode=mode, json_response=True, sessions=None)
    async with client_for(server) as client:
        as_json = await post(client, request(1, "echo", [1]))
        as_sse = await post(client, request(2, "script", {"ops": ["note"]}))
        default = await post(client, request(3, "whoami"))
    assert as_json.headers["content-type"] == "application/json"
    assert as_json.json()["result"] == [1]
    assert as_sse.headers["content-type"].startswith("text/event-stream")
    assert messages_of(as_sse)[-1] == {"jsonrpc": "2.0", "id": 2, "result": {"notes": 1}}
    assert default.headers["content-type"] == "application/json"


# -- streamed results ---------------------------------------------------------------


async def test_streamed_results_are_responses_with_the_same_id_then_the_end() -> None:
    server = Server(streaming_methods=frozenset({"stream3"}), event_store=InMemoryEventStore())
    async with client_for(server) as client:
        session = await open_session(client)
        response = await post(client, request("s", "stream3"), session)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert messages_of(response) == [
        {"jsonrpc": "2.0", "id": "s", "result": {"item": 1}},
        {"jsonrpc": "2.0", "id": "s", "result": {"item": 2}},
        {"jsonrpc": "2.0", "id": "s", "result": {"item": 3}},
    ]
    assert server.stream_closed == ["s"]


async def test_streamed_results_stateless() -> None:
    server = Server(streaming_methods=frozenset({"stream3"}), sessions=None)
    async with client_for(server) as client:
        first = await post(client, request(1, "stream3"))
        second = await post(client, request(1, "stream3"))
    for response in (first, second):
        assert [m["result"]["item"] for m in messages_of(response)] == [1, 2, 3]
        assert {m["id"] for m in messages_of(response)} == {1}
