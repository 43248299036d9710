"""Deduplication by content: a SendMessage whose (tenant, owner, messageId) was seen gets
the earlier outcome only when the message is the same; a message that reuses the id
with other content is a new message, and so is a resend once the task it made was
continued or canceled through its id (a push config it carries joins the task). The
same scenarios run on the in-memory and SQLite stores here and on PostgreSQL in
``test_scaleout_store`` (which imports them).

Tests the private unit `a2a_layer._store.message_key` on purpose: the key deduplication
rests on (the id and a canonical digest of the content).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from a2a_fixtures.harness import (
    STORE_KINDS,
    empty_store,
    in_process,
    make_card,
    message,
    rpc,
    rpc_stream,
)

from a2a_layer import (
    A2AServer,
    ExecutionContext,
    TaskStore,
    TaskUpdater,
)
from a2a_layer._store import message_key
from a2a_layer.types import Message, Part, Role

pytestmark = pytest.mark.anyio


@pytest.fixture(params=STORE_KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[TaskStore]:
    async with empty_store(request.param, tmp_path) as opened:
        yield opened


class CountingAgent:
    """Replies directly to "reply"; otherwise completes a task naming what it got."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        self.seen.append(context.text)
        if context.text == "reply":
            await updater.reply(f"reply number {len(self.seen)}")
            return
        await updater.add_artifact(f"got {context.text}", name="answer")
        await updater.complete()


async def send(http: Any, msg: dict[str, Any], **params: Any) -> dict[str, Any]:
    return await rpc(http, "SendMessage", {"message": msg, **params})


def task_id(answer: dict[str, Any]) -> str:
    task_id: str = answer["result"]["task"]["id"]
    return task_id


async def test_true_duplicates_get_the_first_outcome_and_never_rerun(store: TaskStore) -> None:
    agent = CountingAgent()
    server = A2AServer(make_card(), agent, store=store)
    async with in_process(server) as http:
        first = message("build", "dup-1", metadata={"a": 1, "b": [1, 2]})
        answers: list[dict[str, Any]] = []

        async def one() -> None:
            answers.append(await send(http, first))

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(one)
        # The same content with its members and metadata keys in another order.
        reordered = {"metadata": {"b": [1, 2], "a": 1}, "parts": first["parts"]}
        reordered.update(role="ROLE_USER", messageId="dup-1")
        answers.append(await send(http, reordered))
        # The request around the message is not part of it: still the same message.
        answers.append(await send(http, first, configuration={"returnImmediately": True}))
        streamed = await rpc_stream(http, "SendStreamingMessage", {"message": first})
        replies = [await send(http, message("reply", "dup-2")) for _ in range(2)]
    assert agent.seen == ["build", "reply"]
    assert len({task_id(a) for a in answers}) == 1
    assert streamed[0]["result"]["task"]["id"] == task_id(answers[0])
    assert replies[0]["result"] == replies[1]["result"]


async def test_a_reused_id_with_other_content_is_a_new_message(store: TaskStore) -> None:
    agent = CountingAgent()
    server = A2AServer(make_card(), agent, store=store)
    async with in_process(server) as http:
        first = await send(http, message("build", "reused"))
        other_text = await send(http, message("test", "reused"))
        other_metadata = await send(http, message("test", "reused", metadata={"run": 2}))
        other_context = await send(http, message("test", "reused", contextId="ctx-9"))
        retry_of_first = await send(http, message("build", "reused"))
        reply = await send(http, message("reply", "reused"))
        reply_again = await send(http, message("reply", "reused"))
    assert agent.seen == ["build", "test", "test", "test", "reply"]
    new_ids = [task_id(a) for a in (first, other_text, other_metadata, other_context)]
    assert len(set(new_ids)) == 4  # each a task of its own
    assert other_text["result"]["task"]["artifacts"][0]["parts"] == [{"text": "got test"}]
    assert other_context["result"]["task"]["contextId"] == "ctx-9"
    # Every message is remembered: the first one's retry still finds its task.
    assert task_id(retry_of_first) == task_id(first)
    assert reply["result"] == reply_again["result"]


async def test_a_reused_id_on_a_task_continues_it_again(store: TaskStore) -> None:
    """The TCK sends each follow-up of a task with the same messageId."""

    async def ask_twice(context: ExecutionContext, updater: TaskUpdater) -> None:
        if context.text == "three":
            await updater.complete(f"finally {context.text}")
        else:
            await updater.requires_input(f"more than {context.text}?")

    server = A2AServer(make_card(), ask_twice, store=store)
    async with in_process(server) as http:
        made = await send(http, message("one", "same"))
        tid = task_id(made)
        second = await send(http, message("two", "same", taskId=tid))
        third = await send(http, message("three", "same", taskId=tid))
    states = [a["result"]["task"]["status"]["state"] for a in (made, second, third)]
    assert states == ["TASK_STATE_INPUT_REQUIRED"] * 2 + ["TASK_STATE_COMPLETED"]
    history = third["result"]["task"]["history"]
    assert [m["parts"][0]["text"] for m in history if m["role"] == "ROLE_USER"] == [
        "one",
        "two",
        "three",
    ]


def test_message_key_is_the_id_and_a_canonical_digest() -> None:
    def user(mid: str, **fields: Any) -> Message:
        return Message(message_id=mid, role=Role.USER, **fields)

    text = [Part(text="hi")]
    plain = message_key(user("m", parts=text))
    assert plain.startswith("m\x1f") and len(plain) == len("m\x1f") + 22
    assert message_key(user("m", parts=text, metadata=None)) == plain
    assert message_key(user("m", parts=[Part(text="ho")])) != plain
    assert message_key(user("m", parts=text, task_id="t")) != plain
    assert message_key(user("m", parts=text, extensions=["urn:x"])) != plain
    assert message_key(Message(message_id="m", role=Role.AGENT, parts=text)) != plain
    data = [Part(data={"x": 1, "y": {"b": 2, "a": 1}})]
    swapped = [Part(data={"y": {"a": 1, "b": 2}, "x": 1})]
    assert message_key(user("m", parts=data)) == message_key(user("m", parts=swapped))
    # An id that ends like a key still gives a key of its own (the digest's length is fixed).
    assert message_key(user(plain, parts=text)) != plain


async def test_a_resend_once_its_task_moved_on_is_a_new_message(store: TaskStore) -> None:
    """A client that retries never got the task's id: a resend after the task was
    continued or canceled through its id comes from one who got the first answer."""
    seen: list[str] = []

    async def asks(context: ExecutionContext, updater: TaskUpdater) -> None:
        seen.append(context.text)
        if context.is_new_task:
            await updater.requires_input("and?")
        else:
            await updater.complete("thanks")

    server = A2AServer(make_card(), asks, store=store)
    async with in_process(server) as http:
        first = await send(http, message("ask", "again"))
        retry = await send(http, message("ask", "again"))  # still waiting: a retry
        tid = task_id(first)
        await send(http, message("answer", "other", taskId=tid))
        after_answer = await send(http, message("ask", "again"))
        to_cancel = task_id(after_answer)
        await rpc(http, "CancelTask", {"id": to_cancel})
        after_cancel = await send(http, message("ask", "again"))
        retry_after = await send(http, message("ask", "again"))
    assert task_id(retry) == tid
    assert len({tid, to_cancel, task_id(after_cancel)}) == 3
    assert after_cancel["result"]["task"]["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert task_id(retry_after) == task_id(after_cancel)
    assert seen == ["ask", "answer", "ask", "ask"]


async def test_a_resend_with_a_push_config_adds_it_to_the_task(store: TaskStore) -> None:
    server = A2AServer(
        make_card(push=True), CountingAgent(), store=store, allow_private_webhooks=True
    )
    hook = {"id": "hook-1", "url": "http://127.0.0.1:9/hook", "token": "t"}
    async with in_process(server) as http:
        first = await send(http, message("build", "pushed"))
        again = await send(
            http, message("build", "pushed"), configuration={"taskPushNotificationConfig": hook}
        )
        listed = await rpc(http, "ListTaskPushNotificationConfigs", {"taskId": task_id(first)})
    assert task_id(again) == task_id(first)
    assert [c["id"] for c in listed["result"]["configs"]] == ["hook-1"]
