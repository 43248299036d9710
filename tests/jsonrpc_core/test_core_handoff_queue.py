"""`HandoffQueue`, the one queue the core keeps (the Peer's work queue, see `_handoff`).

It has a memory object stream pair's semantics; these tests pin them, on both backends,
and check that an item is taken without a scheduling point and that a cancelled receiver
never loses one.

Tests the private unit `jsonrpc_core._handoff.HandoffQueue` on purpose: no public API hands
it out.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import pytest

from jsonrpc_core._handoff import HandoffQueue

pytestmark = pytest.mark.anyio

TIMEOUT = 10


async def test_handoff_queue_is_fifo_and_bounded() -> None:
    queue: HandoffQueue[int] = HandoffQueue(2)
    with pytest.raises(anyio.WouldBlock):
        queue.receive_nowait()
    queue.send_nowait(1)
    await queue.send(2)
    with pytest.raises(anyio.WouldBlock):
        queue.send_nowait(3)
    assert len(queue) == 2
    assert queue.receive_nowait() == 1
    assert await queue.receive() == 2


async def test_handoff_queue_close_drains_then_ends() -> None:
    queue: HandoffQueue[str] = HandoffQueue(4)
    queue.send_nowait("a")
    queue.close()
    with pytest.raises(anyio.ClosedResourceError):
        queue.send_nowait("b")
    assert queue.receive_nowait() == "a"
    with pytest.raises(anyio.EndOfStream):
        await queue.receive()


async def test_handoff_queue_closed_receiver_breaks_senders() -> None:
    queue: HandoffQueue[str] = HandoffQueue(1)
    queue.send_nowait("a")
    blocked: list[BaseException] = []

    async def sender() -> None:
        try:
            await queue.send("b")
        except anyio.BrokenResourceError as exc:
            blocked.append(exc)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(sender)
        await anyio.wait_all_tasks_blocked()
        queue.close_receiver()
    assert len(blocked) == 1
    with pytest.raises(anyio.BrokenResourceError):
        queue.send_nowait("c")


async def test_handoff_queue_send_waits_for_room() -> None:
    queue: HandoffQueue[int] = HandoffQueue(1)
    queue.send_nowait(1)
    sent = anyio.Event()

    async def sender() -> None:
        await queue.send(2)
        sent.set()

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(sender)
        await anyio.wait_all_tasks_blocked()
        assert not sent.is_set()
        assert queue.receive_nowait() == 1
        await sent.wait()
    assert queue.receive_nowait() == 2


Ends = tuple[Callable[[str], None], Callable[[], Awaitable[str]], Callable[[], None]]


def queue_ends(kind: str) -> Ends:
    """(send_nowait, receive, close) of a fresh queue of four items."""
    if kind == "handoff":
        queue: HandoffQueue[str] = HandoffQueue(4)
        return queue.send_nowait, queue.receive, queue.close
    send, receive = anyio.create_memory_object_stream[str](4)
    return send.send_nowait, receive.receive, send.close


# The core's other queues are anyio memory object streams: a worker or an SSE writer
# cancelled right after being handed an item must not lose it either.
@pytest.mark.parametrize("kind", ["handoff", "memory stream"])
async def test_an_item_survives_a_receiver_cancelled_after_its_wake_up(kind: str) -> None:
    """A receiver cancelled right after being woken never loses the item: the next
    receiver gets it."""
    send_nowait, receive, close = queue_ends(kind)
    got: list[str] = []
    first = anyio.CancelScope()

    async def take(scope: anyio.CancelScope) -> None:
        try:
            with scope:
                got.append(await receive())
        except anyio.EndOfStream:
            pass

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(take, first)
            await anyio.wait_all_tasks_blocked()
            task_group.start_soon(take, anyio.CancelScope())
            await anyio.wait_all_tasks_blocked()
            send_nowait("x")
            first.cancel()
            await anyio.wait_all_tasks_blocked()
            assert got == ["x"]  # passed on, not left for the close to find
            close()
    assert got == ["x"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # Task.cancel is asyncio's
async def test_a_receiver_cancelled_by_task_cancel_after_its_wake_up_passes_the_item_on(
    anyio_backend: str,
) -> None:
    """anyio never cancels a task whose wake-up is already delivered, but asyncio's own
    ``Task.cancel`` (``asyncio.wait_for``, a user's ``task.cancel()``) does: the woken
    receiver then leaves without its item, and the queue wakes the next receiver for it.
    (An anyio memory object stream loses the item in this case.)"""
    import asyncio

    queue: HandoffQueue[str] = HandoffQueue(4)
    got: list[str] = []

    async def take() -> None:
        try:
            got.append(await queue.receive())
        except anyio.EndOfStream:
            pass

    first = asyncio.ensure_future(take())
    await anyio.wait_all_tasks_blocked()
    second = asyncio.ensure_future(take())
    await anyio.wait_all_tasks_blocked()
    queue.send_nowait("x")  # wakes the first receiver...
    first.cancel()  # ...which is cancelled before it runs again
    with anyio.fail_after(TIMEOUT):
        await asyncio.gather(first, return_exceptions=True)
        await anyio.wait_all_tasks_blocked()
        assert got == ["x"]  # the second receiver has it, not the close below
        queue.close()
        await second
    assert first.cancelled()
    assert got == ["x"]


async def test_a_queued_item_is_taken_without_a_scheduling_point() -> None:
    queue: HandoffQueue[int] = HandoffQueue(4)
    queue.send_nowait(1)
    others_ran: list[bool] = []

    async def other() -> None:
        others_ran.append(True)

    async with anyio.create_task_group() as task_group:
        task_group.start_soon(other)
        assert await queue.receive() == 1
        assert others_ran == []  # the receive did not give the event loop up
        await queue.send(2)
        assert others_ran == []
    assert others_ran == [True]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # callbacks outside tasks: asyncio's
async def test_a_receiver_woken_from_an_event_loop_callback_gets_its_item(
    anyio_backend: str,
) -> None:
    """On asyncio the stdio read callback hands requests over outside any task."""
    import asyncio

    queue: HandoffQueue[str] = HandoffQueue(4)
    got: list[str] = []

    async def receiver() -> None:
        got.append(await queue.receive())

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(receiver)
            await anyio.wait_all_tasks_blocked()
            asyncio.get_running_loop().call_soon(queue.send_nowait, "from a callback")
    assert got == ["from a callback"]
