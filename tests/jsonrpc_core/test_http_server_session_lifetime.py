"""`JsonRpcHTTPApp` sessions: what ends with them and what keeps them alive.

* A request counts as in flight from the moment its session is looked up, so an async
  ``validate`` hook cannot let the idle reaper take the session under the request; a
  GET whose session was reaped during its ``validate`` gets 404 (it used to hang).
* An ended session's streams leave a shared event store once (``forget_session``),
  whether the session was reaped or deleted.
* A served HTTP request leaves no reference cycles on the server side (the cycle
  collector's passes would otherwise cost every request under load).
* `NdjsonStream` writes lines whole and in order, also when a queued sender is
  cancelled (its turns are anyio's ``Lock(fast_acquire=True)``).
* A descriptor of a model class validates with the model's own validator: the same
  results and errors as a TypeAdapter's, also for a model completed later.
* uvicorn (`running_server`) keeps idle connections longer than client pools do, and
  takes further uvicorn options.

Reads the private `jsonrpc_core._http_serve.KEEP_ALIVE_TIMEOUT` and `_config` on purpose:
the uvicorn keep-alive they set is under test.
"""

from __future__ import annotations

import asyncio
import json
import types
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import httpx
import pydantic
import pytest
from _garbage import cyclic_garbage
from _http_fixtures import HTTPTestServer, client_for, wait_until
from test_http_server import open_session, post, request

from jsonrpc_core import (
    InMemoryEventStore,
    InvalidParams,
    MethodRegistry,
    NdjsonStream,
    Notification,
    NotificationType,
    RequestType,
    format_validation_error,
    running_server,
)
from jsonrpc_core.http import SharedEventStore

pytestmark = pytest.mark.anyio

IDLE = 0.05


async def test_a_session_is_not_reaped_while_an_async_validate_runs() -> None:
    async def validate(info: Any, payload: Any, session: Any) -> None:
        if session is None or getattr(payload, "method", None) != "whoami":
            return
        # Time is under test: outlast the idle timeout and several reaper rounds (50 ms).
        await anyio.sleep(IDLE * 6)

    server = HTTPTestServer(validate=validate, idle_timeout=IDLE)
    async with client_for(server) as client:
        session = await open_session(client)
        response = await post(client, request(1, "whoami"), session)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    assert session in response.text


class FakeSharedStore(InMemoryEventStore):
    """An in-memory store that passes for a shared one and records forgotten sessions."""

    def __init__(self) -> None:
        super().__init__()
        self.registered: list[str] = []
        self.forgotten: list[str] = []

    async def register_session(self, session_id: str, principal: Any) -> None:
        self.registered.append(session_id)

    async def forget_session(self, session_id: str) -> None:
        self.forgotten.append(session_id)

    async def session_known(self, session_id: str, principal: Any) -> bool:
        return session_id in self.registered and session_id not in self.forgotten

    async def end(self, stream_id: str) -> None:
        pass

    def follow(self, last_event_id: str) -> Any:
        raise NotImplementedError


async def test_a_shared_store_forgets_a_reaped_session_once() -> None:
    store = FakeSharedStore()
    assert isinstance(store, SharedEventStore)
    server = HTTPTestServer(event_store=store, idle_timeout=IDLE)
    async with client_for(server) as client:
        session = await open_session(client)
        assert store.registered == [session]
        await wait_until(lambda: store.forgotten == [session])
        assert len(server.app.sessions) == 0
        # the standalone stream and the request's stream are left to the store's retention
        assert len(store) >= 1


async def test_a_shared_store_forgets_a_deleted_session_once() -> None:
    store = FakeSharedStore()
    server = HTTPTestServer(event_store=store, idle_timeout=600)
    async with client_for(server) as client:
        session = await open_session(client)
        response = await client.delete("/rpc", headers={"session-id": session})
        assert response.status_code == 200
        assert store.forgotten == [session]
        # the session's own task ends after the response: it must not forget again
        await anyio.wait_all_tasks_blocked()
    assert store.forgotten == [session]


async def test_an_in_memory_store_forgets_an_ended_sessions_streams() -> None:
    store = InMemoryEventStore()
    server = HTTPTestServer(event_store=store, idle_timeout=600)
    async with client_for(server) as client:
        first = await open_session(client)
        second = await open_session(client)
        assert (await post(client, request(1, "echo", [1]), first)).status_code == 200
        kept = len(store)
        assert kept >= 3
        assert (await client.delete("/rpc", headers={"session-id": first})).status_code == 200
        assert 0 < len(store) < kept
        remaining = [key for key in store._streams if key.startswith(second + ".")]
        assert len(remaining) == len(store)


def test_uvicorn_keeps_idle_connections_longer_than_client_pools() -> None:
    from jsonrpc_core._http_serve import KEEP_ALIVE_TIMEOUT, _config

    app = HTTPTestServer().app
    assert KEEP_ALIVE_TIMEOUT > httpx.Limits().keepalive_expiry  # type: ignore[operator]
    assert _config(app, "127.0.0.1", 0, "warning").timeout_keep_alive == KEEP_ALIVE_TIMEOUT
    chosen = _config(app, "127.0.0.1", 0, "warning", timeout_keep_alive=9, ws="none")
    assert chosen.timeout_keep_alive == 9


async def test_running_server_passes_uvicorn_options() -> None:
    server = HTTPTestServer(sessions=None)
    async with running_server(server.app, headers=[("x-served-by", "round2")]) as url:
        async with httpx.AsyncClient(base_url=url, timeout=10) as client:
            response = await post(client, request(1, "echo", [1]))
    assert response.status_code == 200
    assert response.headers["x-served-by"] == "round2"


class DeferredServer(HTTPTestServer):
    """Adds ``later``: answers after a few event-loop turns, so its SSE response starts
    before the answer (the disconnect watcher runs)."""

    def registry(self) -> MethodRegistry:
        registry = super().registry()

        async def later(params: Any, ctx: Any) -> Any:
            for _ in range(3):
                await anyio.lowlevel.checkpoint()
            return params

        registry.on("later", later)
        return registry


def server_side(garbage: list[Any]) -> list[str]:
    """The server's objects and frames among ``garbage`` (the in-process transport and
    httpx make cycles of their own, on the client side)."""
    names = []
    for thing in garbage:
        if isinstance(thing, types.FrameType):
            where = thing.f_code.co_filename
            if "jsonrpc_core" in where and "testing" not in where:
                names.append(f"frame {thing.f_code.co_name}")
        elif type(thing).__module__.startswith("jsonrpc_core") and not type(
            thing
        ).__module__.startswith("jsonrpc_core.testing"):
            names.append(type(thing).__qualname__)
    return sorted(set(names))


@pytest.mark.parametrize("method", ["echo", "later"])
@pytest.mark.parametrize("mode", ["sse", "json", "auto"])
@pytest.mark.parametrize("with_session", [False, True])
async def test_http_requests_leave_no_reference_cycles(
    method: str, mode: str, with_session: bool
) -> None:
    options: dict[str, Any] = {
        "event_store": InMemoryEventStore(),
        "response_mode": lambda request, info: mode,
    }
    if not with_session:
        options["sessions"] = None
    server = DeferredServer(**options)
    async with client_for(server) as client:
        session = await open_session(client) if with_session else None
        for n in range(3):  # warm up
            assert (await post(client, request(n, method, [n]), session)).status_code == 200
        with cyclic_garbage() as garbage:
            for n in range(10):
                response = await post(client, request(n, method, [n]), session)
                assert response.status_code == 200
                assert str(n) in response.text
            del response
    assert server_side(garbage) == []


class GatedSend(anyio.abc.ByteSendStream):
    """A byte stream whose every write waits for ``open`` (no ``write_nowait``)."""

    def __init__(self) -> None:
        self.open = anyio.Event()
        self.written: list[bytes] = []

    async def send(self, item: bytes) -> None:
        await self.open.wait()
        self.written.append(item)

    async def aclose(self) -> None:
        pass


class NeverReceive(anyio.abc.ByteReceiveStream):
    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.sleep_forever()
        raise AssertionError

    async def aclose(self) -> None:
        pass


async def test_ndjson_sends_keep_their_order_and_survive_a_cancelled_waiter() -> None:
    sink = GatedSend()
    stream = NdjsonStream(NeverReceive(), sink)
    async with anyio.create_task_group() as tg:
        for n in range(4):
            scope = anyio.CancelScope()
            if n == 1:
                cancelled = scope

            async def send(n: int = n, scope: anyio.CancelScope = scope) -> None:
                with scope:
                    await stream.send(Notification("n", [n]))

            tg.start_soon(send)
            for _ in range(3):
                await anyio.lowlevel.checkpoint()
        cancelled.cancel()  # a waiter leaves the queue
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        sink.open.set()
    assert [json.loads(line)["params"] for line in sink.written] == [[0], [2], [3]]


# asyncio only: the waiter is cancelled between its wake-up (or the release) and its next
# run, which needs asyncio's Task.cancel; anyio's cancel scopes cannot place it there.
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("released_first", [True, False], ids=["woken", "not-yet-woken"])
async def test_a_turn_freed_around_a_waiters_cancellation_goes_to_the_next(
    released_first: bool,
) -> None:
    """The lock released just before a waiter's cancellation (handed to it) or just after
    (before it runs again): either way the next waiter gets the turn (it used to be handed
    to the cancelled one and stay taken)."""
    turns = NdjsonStream(NeverReceive(), GatedSend())._turns  # the writer's turns
    turns.acquire_nowait()
    order: list[str] = []

    async def wait_turn(name: str) -> None:
        await turns.acquire()
        order.append(name)
        turns.release()

    first = asyncio.create_task(wait_turn("a"))
    second = asyncio.create_task(wait_turn("b"))
    await asyncio.sleep(0)
    assert turns.locked()
    if released_first:
        turns.release()  # handed to "a" ...
        first.cancel()  # ... which is cancelled before it runs
    else:
        first.cancel()  # "a" is cancelled ...
        turns.release()  # ... and the lock released before "a" runs again
    await asyncio.wait([first, second], timeout=10)
    assert first.cancelled()
    assert second.done() and second.exception() is None
    assert order == ["b"]
    assert not turns.locked()
    assert not turns.locked()


class Point(pydantic.BaseModel):
    x: int
    y: int = 0


class Later(pydantic.BaseModel):
    child: Child | None = None


def test_a_model_descriptor_validates_as_its_type_adapter_does() -> None:
    descriptor = RequestType("move", Point, Point)
    adapter = pydantic.TypeAdapter(Point)
    assert descriptor.validate_params({"x": "3"}) == Point(x=3)
    assert descriptor.validate_params({"x": 1}).y == 0
    for bad in ({"x": "three"}, {}, [1, 2], "nope"):
        with pytest.raises(pydantic.ValidationError) as expected:
            adapter.validate_python(bad)
        with pytest.raises(InvalidParams) as raised:
            descriptor.validate_params(bad)
        assert raised.value.message == format_validation_error(expected.value)
        with pytest.raises(pydantic.ValidationError) as direct:
            descriptor.validate_result(bad)
        assert direct.value.errors() == expected.value.errors()
        assert direct.value.title == expected.value.title


def test_a_model_completed_after_its_descriptor_was_made_validates() -> None:
    descriptor = NotificationType("later", Later)
    assert descriptor.validate_params({"child": {"name": "c"}}) == Later(child=Child(name="c"))
    with pytest.raises(InvalidParams, match=r"params\.child\.name"):
        descriptor.validate_params({"child": {}})


class Child(pydantic.BaseModel):
    name: str


class Deferred(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(defer_build=True)
    n: int


def test_a_deferred_model_is_built_at_first_use_and_its_own_validator_kept() -> None:
    descriptor = RequestType("count", Deferred, Deferred)
    assert not Deferred.__pydantic_complete__
    assert descriptor.validate_params({"n": "2"}) == Deferred(n=2)
    assert descriptor.validate_result({"n": 3}) == Deferred(n=3)
    own = Deferred.__pydantic_validator__.validate_python
    assert descriptor._params_validate == own  # not a TypeAdapter wrapped around the model
    assert descriptor._result_validate == own
    with pytest.raises(InvalidParams, match=r"params\.n"):
        descriptor.validate_params({"n": "two"})


async def test_a_get_for_a_session_reaped_during_validate_is_not_found() -> None:
    async def validate(info: Any, payload: Any, session: Any) -> None:
        if payload is None and session is not None:
            # the idle session (this GET is not in flight yet) is reaped meanwhile
            await wait_until(lambda: server.app.sessions.get(session.id) is None)

    server = HTTPTestServer(validate=validate, idle_timeout=IDLE)
    async with client_for(server) as client:
        session = await open_session(client)
        response = await client.get(
            "/rpc", headers={"accept": "text/event-stream", "session-id": session}
        )
    assert response.status_code == 404
