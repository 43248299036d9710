"""NDJSON over pipes: messages taken straight from the read callback (asyncio), in order."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from jsonrpc_core import (
    FdReceiveStream,
    FdSendStream,
    MethodRegistry,
    NdjsonStream,
    Notification,
    Peer,
    Received,
    Request,
    _bytestream,
)

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def pipe_peer(registry: MethodRegistry) -> AsyncIterator[tuple[Peer, int, NdjsonStream]]:
    """A Peer on a pipe pair; yields it, the raw fd that writes to it, and a stream
    that reads what it sends."""
    to_peer_r, to_peer_w = os.pipe()
    from_peer_r, from_peer_w = os.pipe()
    peer_stream = NdjsonStream(
        FdReceiveStream(to_peer_r, close_fd=True), FdSendStream(from_peer_w, close_fd=True)
    )
    replies = NdjsonStream(
        FdReceiveStream(from_peer_r, close_fd=True), FdSendStream(to_peer_w, close_fd=True)
    )
    peer = Peer(peer_stream, registry)
    async with anyio.create_task_group() as tg:
        tg.start_soon(peer.run)
        try:
            yield peer, to_peer_w, replies
        finally:
            await replies.aclose()
            with anyio.fail_after(5):
                await peer.wait_closed()


def _line(message: dict[str, Any]) -> bytes:
    import json

    return json.dumps(message).encode() + b"\n"


def _is_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def test_a_request_is_handed_to_a_worker_from_the_read_callback() -> None:
    registry = MethodRegistry()
    registry.on("add", lambda params, ctx: params["a"] + params["b"])
    dispatched: list[Any] = []
    async with pipe_peer(registry) as (peer, write_fd, replies):
        original = peer._dispatch

        async def recording(payload: Any, info: Any) -> None:
            dispatched.append(payload)
            await original(payload, info)

        peer._dispatch = recording  # type: ignore[method-assign]
        with anyio.fail_after(5):
            for n in range(3):
                os.write(
                    write_fd,
                    _line({"jsonrpc": "2.0", "id": n, "method": "add", "params": {"a": n, "b": 1}}),
                )
                answer = (await replies.receive()).payload
                assert answer.id == n and answer.result == n + 1  # type: ignore[union-attr]
    if _is_asyncio():
        # Only the first request went through the read loop (it started the worker).
        assert len(dispatched) == 1
    else:
        assert len(dispatched) == 3


async def test_a_request_read_with_a_notification_waits_for_its_handler() -> None:
    events: list[str] = []
    registry = MethodRegistry()

    async def slow_note(params: Any, ctx: Any) -> None:
        events.append("note start")
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        events.append("note end")

    def call(params: Any, ctx: Any) -> str:
        events.append("request")
        return "ok"

    registry.on(_note_type("note"), slow_note)
    registry.on("call", call)
    async with pipe_peer(registry) as (_, write_fd, replies):
        chunk = _line({"jsonrpc": "2.0", "method": "note"}) + _line(
            {"jsonrpc": "2.0", "id": 1, "method": "call"}
        )
        os.write(write_fd, chunk)
        with anyio.fail_after(5):
            answer = (await replies.receive()).payload
    assert answer.result == "ok"  # type: ignore[union-attr]
    assert events == ["note start", "note end", "request"]


async def test_a_response_read_after_a_notification_resolves_after_its_handler() -> None:
    # The peer calls out; the answer comes in the same chunk as a notification sent
    # before it: the caller resumes only once that notification has been handled.
    events: list[str] = []
    registry = MethodRegistry()

    async def note(params: Any, ctx: Any) -> None:
        await anyio.lowlevel.checkpoint()
        events.append("note")

    registry.on(_note_type("note"), note)
    async with pipe_peer(registry) as (peer, write_fd, replies):
        async with anyio.create_task_group() as tg:

            async def answer() -> None:
                request = (await replies.receive()).payload
                os.write(
                    write_fd,
                    _line({"jsonrpc": "2.0", "method": "note"})
                    + _line({"jsonrpc": "2.0", "id": request.id, "result": 7}),  # type: ignore[union-attr]
                )

            tg.start_soon(answer)
            with anyio.fail_after(5):
                result = await peer.request("ask")
            events.append(f"result {result}")
    assert events == ["note", "result 7"]


async def test_a_flood_of_notifications_is_queued_in_bounded_memory_and_in_order() -> None:
    seen: list[int] = []
    release = anyio.Event()
    done = anyio.Event()
    total = 4000
    registry = MethodRegistry()

    async def note(params: Any, ctx: Any) -> None:
        if not release.is_set():
            await release.wait()
        seen.append(params["n"])
        if len(seen) == total:
            done.set()

    registry.on(_note_type("note"), note)
    async with pipe_peer(registry) as (peer, _, replies):
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                flooded = anyio.Event()

                async def flood() -> None:
                    for n in range(total):
                        await replies.send(Notification("note", {"n": n}))
                    flooded.set()

                tg.start_soon(flood)
                ready = 0
                if _is_asyncio():
                    # The read callback keeps reading while the handler is stuck.
                    await flooded.wait()
                    ready = len(peer.stream._ready)  # type: ignore[attr-defined]
                release.set()
                await done.wait()
    assert seen == list(range(total))
    # Parsed ahead at most up to the limit plus one read's worth of lines; the rest
    # waits as bytes.
    assert ready <= _bytestream._READY_LIMIT + 65536 // 40


def test_direct_dispatch_works_under_plain_asyncio_run() -> None:
    # Not under anyio.run: the read callback has no task and no async-library marker.
    registry = MethodRegistry()
    registry.on("echo", lambda params, ctx: params)

    async def main() -> Any:
        async with pipe_peer(registry) as (_, write_fd, replies):
            os.write(write_fd, _line({"jsonrpc": "2.0", "id": 1, "method": "echo", "params": [1]}))
            return (await asyncio.wait_for(replies.receive(), 5)).payload

    answer = asyncio.run(main())
    assert answer.result == [1]


def _note_type(name: str) -> Any:
    from jsonrpc_core import NotificationType

    return NotificationType(name)


async def test_a_subclass_that_rewrites_receive_sees_every_message() -> None:
    # Messages read ahead must not bypass an overriding receive (nor go to the Peer
    # from the read callback).
    class Renaming(NdjsonStream):
        async def receive(self) -> Received:
            received = await super().receive()
            payload = received.payload
            if isinstance(payload, Request):
                payload = Request(payload.id, "renamed", payload.params)
            return Received(payload, received.info)

    registry = MethodRegistry()
    registry.on("renamed", lambda params, ctx: "seen by receive")
    to_peer_r, to_peer_w = os.pipe()
    from_peer_r, from_peer_w = os.pipe()
    stream = Renaming(FdReceiveStream(to_peer_r, close_fd=True), FdSendStream(from_peer_w))
    replies = NdjsonStream(FdReceiveStream(from_peer_r, close_fd=True), FdSendStream(to_peer_w))
    async with Peer(stream, registry):
        with anyio.fail_after(5):
            chunk = b"".join(
                _line({"jsonrpc": "2.0", "id": n, "method": "original"}) for n in range(3)
            )
            os.write(to_peer_w, chunk)
            answers = [(await replies.receive()).payload for _ in range(3)]
    assert [a.result for a in answers] == ["seen by receive"] * 3  # type: ignore[union-attr]
    await replies.aclose()
