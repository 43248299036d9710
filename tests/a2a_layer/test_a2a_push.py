"""Push notifications end to end, in process: the server POSTs each task event to the
webhook with the configured Authorization and token, retries with backoff (at least
once, bounded), and the receiver helper checks tokens and drops duplicates.

Tests the private unit `a2a_layer._push.check_webhook_url` on purpose: every webhook URL
shape it refuses, without a server per case.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import anyio
import httpx
import pytest
from a2a_fixtures.harness import BASE, in_process, make_card

from a2a_layer import (
    TOKEN_HEADER,
    A2AClient,
    A2AServer,
    ExecutionContext,
    PushReceiver,
    TaskUpdater,
)
from a2a_layer._push import check_webhook_url
from a2a_layer.types import AuthenticationInfo, StreamResponse, TaskPushNotificationConfig
from jsonrpc_core import InvalidParams
from jsonrpc_core.testing import StreamingASGITransport

pytestmark = pytest.mark.anyio

HOOK = "http://127.0.0.1:8765/hook"
WORKING_EVENT = StreamResponse.model_validate(
    {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}
).model_dump_json(by_alias=True, exclude_none=True)
"""A status update's JSON, as a webhook receives it."""


async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    await updater.start_work()
    await updater.add_artifact("report", name="report")
    await updater.complete("done")


class Flaky:
    """ASGI wrapper: answers 503 to the first ``fail_before`` deliveries without reading
    them, then to ``fail_after`` deliveries after the receiver accepted them."""

    def __init__(self, app: Any, fail_before: int = 0, fail_after: int = 0) -> None:
        self.app = app
        self.fail_before = fail_before
        self.fail_after = fail_after
        self.calls = 0
        self.headers: list[dict[str, str]] = []

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        self.calls += 1
        self.headers.append({k.decode(): v.decode() for k, v in scope["headers"]})
        if self.fail_before > 0:
            self.fail_before -= 1
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if self.fail_after > 0:
            self.fail_after -= 1

            async def swallow(message: MutableMapping[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    message = {**message, "status": 500}
                await send(message)

            await self.app(scope, receive, swallow)
            return
        await self.app(scope, receive, send)


async def run_with_push(webhook: Any, **server_options: Any) -> tuple[list[StreamResponse], str]:
    receiver_http = httpx.AsyncClient(transport=StreamingASGITransport(webhook))
    async with receiver_http:
        server = A2AServer(
            make_card(push=True),
            agent,
            push_client=receiver_http,
            push_backoff=0.01,
            allow_private_webhooks=True,  # the receiver is HOOK, on loopback
            **server_options,
        )
        push = TaskPushNotificationConfig(
            url=HOOK,
            token="tok-123",
            authentication=AuthenticationInfo(scheme="Bearer", credentials="cred-456"),
        )
        async with in_process(server) as http:
            async with A2AClient.connect(BASE, http=http) as client:
                task = await client.send("go", push=push)
                events: list[StreamResponse] = []
                with anyio.fail_after(5):
                    async for event in RECEIVERS[webhook].events():
                        events.append(event)
                        update = event.status_update
                        if update is not None and update.status.state.is_terminal:
                            break
    return events, task.id  # type: ignore[union-attr]


RECEIVERS: dict[Any, PushReceiver] = {}


def webhook_for(receiver: PushReceiver, **flaky: int) -> Flaky:
    wrapper = Flaky(receiver.asgi_app(), **flaky)
    RECEIVERS[wrapper] = receiver
    return wrapper


def kinds(events: list[StreamResponse]) -> list[str]:
    return [next(iter(e.model_dump(exclude_none=True))) for e in events]


async def test_events_are_pushed_in_order_with_credentials() -> None:
    receiver = PushReceiver(token="tok-123", authorization="Bearer cred-456")
    hook = webhook_for(receiver)
    events, task_id = await run_with_push(hook)
    assert kinds(events) == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert events[0].task is not None and events[0].task.id == task_id
    assert all(h[TOKEN_HEADER.lower()] == "tok-123" for h in hook.headers)
    assert all(h["authorization"] == "Bearer cred-456" for h in hook.headers)
    assert all(h["content-type"] == "application/a2a+json" for h in hook.headers)
    assert receiver.duplicates == 0


async def test_failed_deliveries_are_retried_and_duplicates_ignored() -> None:
    receiver = PushReceiver(token="tok-123")
    hook = webhook_for(receiver, fail_before=2, fail_after=1)
    events, _ = await run_with_push(hook)
    assert kinds(events) == ["task", "statusUpdate", "artifactUpdate", "statusUpdate"]
    assert receiver.duplicates == 1  # accepted, answered 500, delivered again
    assert hook.calls == 4 + 2 + 1


async def test_delivery_gives_up_after_the_retry_budget() -> None:
    receiver = PushReceiver(token="tok-123")
    hook = webhook_for(receiver, fail_before=3)
    events, _ = await run_with_push(hook, push_retries=3)
    # The first event (the task) was tried three times and dropped; the rest arrived.
    assert kinds(events) == ["statusUpdate", "artifactUpdate", "statusUpdate"]


async def test_receiver_refuses_forged_tokens_and_keeps_going() -> None:
    receiver = PushReceiver(token="right")
    body = WORKING_EVENT
    transport = StreamingASGITransport(receiver.asgi_app())
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as http:
        forged = await http.post("/hook", content=body, headers={TOKEN_HEADER: "wrong"})
        missing = await http.post("/hook", content=body)
        garbage = await http.post("/hook", content=b"{}", headers={TOKEN_HEADER: "right"})
        good = await http.post("/hook", content=body, headers={TOKEN_HEADER: "right"})
        again = await http.post("/hook", content=body, headers={TOKEN_HEADER: "right"})
    assert (forged.status_code, missing.status_code, garbage.status_code) == (401, 401, 400)
    assert good.status_code == again.status_code == 200
    assert receiver.duplicates == 1
    with anyio.fail_after(5):
        async for event in receiver.events():
            assert event.status_update is not None
            break


async def test_receiver_drops_a_body_cut_off_by_a_disconnect_and_answers_nothing() -> None:
    receiver = PushReceiver(token="right")
    body = WORKING_EVENT
    # The whole event but for its last byte, then the client goes away.
    messages: list[dict[str, Any]] = [
        {"type": "http.request", "body": body[:-1].encode(), "more_body": True},
        {"type": "http.disconnect"},
    ]
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/hook",
        "headers": [(TOKEN_HEADER.lower().encode(), b"right")],
    }
    with anyio.fail_after(5):
        await receiver(scope, receive, send)
    assert sent == [] and receiver.duplicates == 0
    with anyio.move_on_after(0):
        async for _ in receiver.events():
            pytest.fail("a cut-off body was taken as an event")


async def test_private_webhooks_are_refused_unless_allowed() -> None:
    for url in (
        "http://127.0.0.1:9/h",
        "http://10.1.2.3/h",
        "http://[::1]/h",
        "http://localhost/h",
    ):
        with pytest.raises(InvalidParams):
            await check_webhook_url(url)  # refused by default
        await check_webhook_url(url, allow_private=True)
    await check_webhook_url("http://93.184.216.34/hook")
    with pytest.raises(InvalidParams):
        await check_webhook_url("file:///etc/passwd", allow_private=True)
    server = A2AServer(make_card(push=True), agent)
    async with in_process(server) as http:
        async with A2AClient.connect(BASE, http=http) as client:
            task = await client.send("go")
            with pytest.raises(InvalidParams):
                await client.create_push_config(task.id, "http://127.0.0.1:9/hook")  # type: ignore[union-attr]
