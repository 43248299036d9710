"""A2A push webhooks are safe at the network edge (issue #18).

A webhook URL is chosen by a remote caller and then contacted by the server, so:

* a non-public target (loopback, private, link-local, carrier-grade NAT, unique-local,
  unspecified, IPv4-mapped forms, a name resolving to one) is refused when registered,
  over JSON-RPC 1.0, inline in SendMessage, over HTTP+JSON and over the 0.3 bridge;
* the address is checked again on the address each delivery connects to: the pool
  resolves once and connects to the checked IP (Host and TLS name stay the name), so
  DNS rebinding cannot switch it; a refused delivery is logged and never sent;
* ``allow_private_webhooks`` (``rpcweave a2a serve --allow-private-webhooks``) is the
  explicit opt-in;
* push configs are bounded per task and per server, with a clear error.

No traffic leaves 127.0.0.0/8: "public" names and addresses come from a patched
resolver, and the connections the pool makes are captured in process and redirected
to a loopback receiver.

Patches the private connect and resolve units of `jsonrpc_core._http1_*` on purpose (so no
traffic leaves 127.0.0.0/8), and tests `a2a_layer._push.check_webhook_url` and the CLI's
`build_server` on purpose.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from a2a_fixtures.harness import in_process, make_card, message, rpc
from test_a2a_push import WORKING_EVENT, Flaky

import jsonrpc_core._http1_asyncio as http1_asyncio
import jsonrpc_core._http1_conn as http1_conn
import jsonrpc_core._http1_resolve as http1_resolve
from a2a_layer import (
    A2AClient,
    A2AServer,
    ExecutionContext,
    PushReceiver,
    SQLiteTaskStore,
    TaskStore,
    TaskUpdater,
)
from a2a_layer.types import StreamResponse, TaskPushNotificationConfig
from jsonrpc_core import InvalidParams, running_server
from jsonrpc_core.http import (
    AddressRefused,
    HTTP1Transport,
    new_async_client,
    public_addresses_only,
)
from jsonrpc_core.testing import StreamingASGITransport

pytestmark = pytest.mark.anyio

BASE = "http://127.0.0.1"
V10 = {"A2A-Version": "1.0"}
PUBLIC_IP = "93.184.216.34"  # answered by the patched resolver only; never connected to

# name -> what the patched resolver answers (other names: the system resolver)
NAMES: dict[str, list[str]] = {
    "private.example.test": ["10.0.0.7"],
    "mixed.example.test": [PUBLIC_IP, "127.0.0.1"],
    "public.example.test": [PUBLIC_IP],
}

REFUSED = [
    ("http://127.0.0.1:9/hook", "127.0.0.1"),
    ("http://localhost:9/hook", "127.0.0.1"),
    ("http://0.0.0.0/hook", "0.0.0.0"),
    ("http://10.0.0.5/hook", "10.0.0.5"),
    ("http://172.16.3.4/hook", "172.16.3.4"),
    ("http://192.168.1.1/hook", "192.168.1.1"),
    ("http://169.254.169.254/latest/meta-data", "169.254.169.254"),
    ("http://100.64.0.1/hook", "100.64.0.1"),
    ("http://[fd00::1]/hook", "fd00::1"),
    ("http://[::1]:9/hook", "::1"),
    ("http://[::ffff:169.254.1.1]/hook", "::ffff:169.254.1.1"),
    ("http://[::ffff:127.0.0.1]/hook", "::ffff:127.0.0.1"),
    ("http://[2002:7f00:1::1]/hook", "2002:7f00:1::1"),  # 6to4 of 127.0.0.1
    ("http://[64:ff9b::a00:5]/hook", "64:ff9b::a00:5"),  # NAT64 of 10.0.0.5
    ("ftp://example.com/hook", "not an http(s) URL"),
    ("http://private.example.test/hook", "10.0.0.7 (of private.example.test)"),
    ("http://mixed.example.test/hook", "127.0.0.1 (of mixed.example.test)"),
]


@pytest.fixture(autouse=True)
def patched_resolver(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The resolver the address policy calls, answering `NAMES`; the names asked, in order."""
    asked: list[str] = []
    real = http1_resolve.system_resolve

    async def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        if host in NAMES:
            return list(NAMES[host])
        if host.endswith(".test"):
            raise OSError(f"unknown test name {host}")
        return await real(host, port)

    monkeypatch.setattr(http1_resolve, "system_resolve", resolve)
    return asked


class Connects:
    """The pool's low-level connects (both backends), recorded and redirected to loopback.

    Every connection the pool makes in this module goes through it: refused unless a
    test points ``to`` at its loopback receiver, so nothing leaves 127.0.0.0/8 even when
    a config names a "public" address.
    """

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[tuple[str, int, str | None]] = []
        self.to: tuple[str, int] | None = None  # where to connect instead; None: refuse
        real_asyncio = http1_asyncio.create_connection
        real_stream = http1_conn.connect_tcp

        async def create_connection(
            loop: Any, conn: Any, host: str, port: int, context: Any, server_hostname: Any
        ) -> Any:
            self.seen.append((host, port, server_hostname))
            if self.to is None:
                raise OSError("connection refused by the test")
            return await real_asyncio(loop, conn, *self.to, context, server_hostname)

        async def connect_tcp(host: str, port: int, **kwargs: Any) -> Any:
            self.seen.append((host, port, kwargs.get("tls_hostname")))
            if self.to is None:
                raise OSError("connection refused by the test")
            return await real_stream(*self.to, **kwargs)

        monkeypatch.setattr(http1_asyncio, "create_connection", create_connection)
        monkeypatch.setattr(http1_conn, "connect_tcp", connect_tcp)


@pytest.fixture(autouse=True)
def connects(monkeypatch: pytest.MonkeyPatch) -> Connects:
    return Connects(monkeypatch)


async def agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    """``ask``: input-required (the task stays open); else a short run."""
    if context.text == "ask":
        await updater.requires_input("which?")
        return
    await updater.start_work()
    await updater.complete("done")


def push_server(**options: Any) -> A2AServer:
    return A2AServer(make_card(push=True), agent, push_backoff=0.01, **options)


async def open_task(http: httpx.AsyncClient, mid: str = "m-open") -> str:
    answer = await rpc(http, "SendMessage", {"message": message("ask", mid)})
    return str(answer["result"]["task"]["id"])


def assert_refused(error: dict[str, Any], why: str, url: str) -> None:
    assert error["code"] == -32602, (url, error)
    assert why in error["message"], (url, error["message"])
    if why != "not an http(s) URL":
        assert "is not public" in error["message"], (url, error["message"])


@asynccontextmanager
async def loopback_receiver(**flaky: int) -> AsyncIterator[tuple[str, PushReceiver, Flaky]]:
    """A webhook receiver on 127.0.0.1 (uvicorn): its URL, the receiver, the recorder."""
    receiver = PushReceiver(token="tok")
    hook = Flaky(receiver.asgi_app(), **flaky)
    async with running_server(hook) as url:
        yield url, receiver, hook


async def first_terminal(receiver: PushReceiver) -> list[StreamResponse]:
    events: list[StreamResponse] = []
    with anyio.fail_after(10):
        async for event in receiver.events():
            events.append(event)
            update = event.status_update
            if update is not None and update.status.state.is_terminal:
                return events
    raise AssertionError("unreachable")


# -- refused at registration -------------------------------------------------------------


async def test_every_private_target_is_refused_by_create_push_config_over_json_rpc() -> None:
    async with in_process(push_server()) as http:
        task_id = await open_task(http)
        for url, why in REFUSED:
            answer = await rpc(
                http, "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": url}
            )
            assert_refused(answer["error"], why, url)
        listed = await rpc(http, "ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert listed["result"].get("configs", []) == []


async def test_every_private_target_is_refused_inline_in_send_message() -> None:
    async with in_process(push_server()) as http:
        for n, (url, why) in enumerate(REFUSED):
            config = {"taskPushNotificationConfig": {"url": url}}
            params = {"message": message("go", f"m-{n}"), "configuration": config}
            answer = await rpc(http, "SendMessage", params)
            assert_refused(answer["error"], why, url)
        tasks = await rpc(http, "ListTasks", {})
    assert tasks["result"]["tasks"] == []  # no task was started for a refused config


async def test_every_private_target_is_refused_over_rest_and_the_03_bridge() -> None:
    async with in_process(push_server()) as http:
        task_id = await open_task(http)
        base = f"/rest/tasks/{task_id}/pushNotificationConfigs"
        for n, (url, why) in enumerate(REFUSED):
            created = await http.post(base, json={"url": url}, headers=V10)
            assert created.status_code == 400, (url, created.text)
            assert why in created.json()["error"]["message"], url
            body = {
                "message": message("go", f"r-{n}"),
                "configuration": {"taskPushNotificationConfig": {"url": url}},
            }
            sent = await http.post("/rest/message:send", json=body, headers=V10)
            assert sent.status_code == 400 and why in sent.json()["error"]["message"], url
            params = {"taskId": task_id, "pushNotificationConfig": {"url": url}}
            old = await rpc(http, "tasks/pushNotificationConfig/set", params, version=None)
            assert_refused(old["error"], why, url)
            msg03 = {
                "kind": "message",
                "messageId": f"o-{n}",
                "role": "user",
                "parts": [{"kind": "text", "text": "go"}],
            }
            params = {"message": msg03, "configuration": {"pushNotificationConfig": {"url": url}}}
            old_send = await rpc(http, "message/send", params, version=None)
            assert_refused(old_send["error"], why, url)
        listed = await http.get(base, headers=V10)
    assert listed.json().get("configs", []) == []


async def test_a_public_target_is_accepted_and_the_check_has_no_twin() -> None:
    async with in_process(push_server()) as http:
        task_id = await open_task(http)
        for url in (
            "http://public.example.test/hook",
            f"https://{PUBLIC_IP}:8443/hook",
            "http://[2606:4700::1]/hook",
            "http://[2002:5db8:d822::1]/hook",  # 6to4 of a public address
        ):
            params = {"taskId": task_id, "url": url}
            answer = await rpc(http, "CreateTaskPushNotificationConfig", params)
            assert answer["result"]["url"] == url
    with pytest.raises(TypeError):
        A2AServer(make_card(push=True), agent, block_private_webhooks=True)  # type: ignore[call-arg]


# -- checked on the address connected to ---------------------------------------------------


async def test_a_rebound_name_is_refused_at_delivery_and_never_reaches_loopback(
    monkeypatch: pytest.MonkeyPatch, connects: Connects
) -> None:
    """The name answers a public address when registered, 127.0.0.1 ever after."""
    answers: list[list[str]] = []

    async def rebinding(host: str, port: int) -> list[str]:
        answers.append([PUBLIC_IP] if not answers else ["127.0.0.1"])
        return answers[-1]

    monkeypatch.setattr(http1_resolve, "system_resolve", rebinding)
    refused = anyio.Event()
    records: list[str] = []

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())
            if "refused" in record.getMessage():
                refused.set()

    watch = Watch(logging.WARNING)
    logging.getLogger("a2a_layer.push").addHandler(watch)
    try:
        async with loopback_receiver() as (url, _receiver, hook):
            port = int(url.rsplit(":", 1)[1])
            connects.to = ("127.0.0.1", port)  # were the pool to connect, it would land here
            async with in_process(push_server()) as http:
                async with A2AClient.connect(BASE, http=http) as client:
                    push = TaskPushNotificationConfig(
                        url=f"http://rebind.example.test:{port}/hook", token="tok"
                    )
                    await client.send("go", push=push)
                    with anyio.fail_after(10):
                        await refused.wait()
    finally:
        logging.getLogger("a2a_layer.push").removeHandler(watch)
    assert answers[0] == [PUBLIC_IP] and answers[1] == ["127.0.0.1"]  # registered, rebound
    assert hook.calls == 0
    assert connects.seen == []
    expected = "address 127.0.0.1 (of rebind.example.test) is not public"
    assert any(expected in line for line in records), records


async def test_delivery_connects_to_exactly_the_checked_address(connects: Connects) -> None:
    async with loopback_receiver() as (url, receiver, hook):
        port = int(url.rsplit(":", 1)[1])
        connects.to = ("127.0.0.1", port)
        async with in_process(push_server()) as http:
            async with A2AClient.connect(BASE, http=http) as client:
                push = TaskPushNotificationConfig(
                    url=f"http://public.example.test:{port}/hook", token="tok"
                )
                await client.send("go", push=push)
                events = await first_terminal(receiver)
    assert events[0].task is not None
    assert connects.seen and all(seen == (PUBLIC_IP, port, None) for seen in connects.seen)
    assert {h["host"] for h in hook.headers} == {f"public.example.test:{port}"}


async def test_the_pool_connects_to_the_policy_address_and_keeps_the_name_for_tls(
    connects: Connects,
) -> None:
    """The core hook alone (no protocol): IP to the socket, the name to SNI and Host."""
    transport = HTTP1Transport(resolve=public_addresses_only())
    async with httpx.AsyncClient(transport=transport, trust_env=False) as http:
        with pytest.raises(httpx.ConnectError):
            await http.get("https://public.example.test:8443/")
        with pytest.raises(httpx.ConnectError) as refused:
            await http.get("http://private.example.test/")
    assert connects.seen == [(PUBLIC_IP, 8443, "public.example.test")]
    assert isinstance(refused.value.__cause__, AddressRefused)
    assert "10.0.0.7 (of private.example.test) is not public" in str(refused.value)


async def test_the_pool_sends_the_name_as_host_to_the_resolved_address(
    connects: Connects,
) -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        seen.append(dict(scope["headers"])[b"host"].decode())
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def to_loopback(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    async with running_server(app) as url:
        port = int(url.rsplit(":", 1)[1])
        connects.to = ("127.0.0.1", port)
        async with new_async_client(resolve=to_loopback, trust_env=False) as http:
            answer = await http.get(f"http://service.example.test:{port}/")
    assert answer.text == "ok"
    assert seen == [f"service.example.test:{port}"]
    assert connects.seen == [("127.0.0.1", port, None)]


def test_an_address_policy_refuses_environment_proxies() -> None:
    with pytest.raises(ValueError, match="trust_env=False"):
        new_async_client(resolve=public_addresses_only())
    with pytest.raises(ValueError, match="proxy"):
        new_async_client(resolve=public_addresses_only(), trust_env=False, proxy="http://p:1")


# -- the opt-in --------------------------------------------------------------------------


async def test_allow_private_webhooks_delivers_to_a_loopback_receiver(
    connects: Connects,
) -> None:
    async with loopback_receiver() as (url, receiver, _hook):
        port = int(url.rsplit(":", 1)[1])
        connects.to = ("127.0.0.1", port)
        server = push_server(allow_private_webhooks=True)
        async with in_process(server) as http:
            async with A2AClient.connect(BASE, http=http) as client:
                push = TaskPushNotificationConfig(url=f"{url}/hook", token="tok")
                await client.send("go", push=push)
                events = await first_terminal(receiver)
    assert events[0].task is not None and len(events) >= 2
    assert {seen[:2] for seen in connects.seen} == {("127.0.0.1", port)}


async def test_a_private_config_stored_earlier_is_not_delivered_without_the_opt_in(
    connects: Connects,
) -> None:
    """A config the registration check never saw (stored by an older, permissive server)
    is refused at delivery, on the address, and never sent."""
    async with loopback_receiver() as (url, _receiver, hook):
        connects.to = ("127.0.0.1", int(url.rsplit(":", 1)[1]))
        server = push_server()
        async with in_process(server):
            config = TaskPushNotificationConfig(url=f"{url}/hook", token="tok", id="old")
            assert server.push is not None
            delivered = await server.push.deliver(config, b"{}")
    assert delivered is False
    assert hook.calls == 0 and connects.seen == []


async def test_a_callers_own_push_client_is_still_checked_before_each_delivery() -> None:
    """With ``push_client`` the address is checked before each attempt (best effort)."""
    receiver = PushReceiver(token="tok")
    hook = Flaky(receiver.asgi_app())
    async with httpx.AsyncClient(transport=StreamingASGITransport(hook)) as own:
        server = push_server(push_client=own)
        async with in_process(server):
            assert server.push is not None
            config = TaskPushNotificationConfig(url="http://127.0.0.1:9/hook", token="tok")
            refused = await server.push.deliver(config, b"{}")
            public = TaskPushNotificationConfig(url="http://public.example.test/hook", token="tok")
            sent = await server.push.deliver(public, WORKING_EVENT.encode())
    assert refused is False and sent is True
    assert [h["host"] for h in hook.headers] == ["public.example.test"]


# -- bounds --------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store_factory(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], TaskStore | None]:
    if request.param == "memory":
        return lambda: None
    return lambda: SQLiteTaskStore(tmp_path / "tasks.db")


async def eleventh_config_is_refused(store: TaskStore | None) -> None:
    server = push_server(store=store)
    async with in_process(server) as http:
        task_id = await open_task(http)
        for n in range(10):
            params = {"taskId": task_id, "id": f"c{n}", "url": f"http://{PUBLIC_IP}/h{n}"}
            answer = await rpc(http, "CreateTaskPushNotificationConfig", params)
            assert answer["result"]["id"] == f"c{n}"
        params = {"taskId": task_id, "url": f"http://{PUBLIC_IP}/h10"}
        eleventh = await rpc(http, "CreateTaskPushNotificationConfig", params)
        replaced = await rpc(
            http,
            "CreateTaskPushNotificationConfig",
            {"taskId": task_id, "id": "c3", "url": f"http://{PUBLIC_IP}/again"},
        )
        inline = await rpc(
            http,
            "SendMessage",
            {
                "message": message("more", "m-more", taskId=task_id),
                "configuration": {"taskPushNotificationConfig": {"url": f"http://{PUBLIC_IP}/i"}},
            },
        )
        listed = await rpc(http, "ListTaskPushNotificationConfigs", {"taskId": task_id})
    assert eleventh["error"]["code"] == -32602
    assert "already has 10 push notification configs" in eleventh["error"]["message"]
    assert replaced["result"]["url"] == f"http://{PUBLIC_IP}/again"  # a replacement fits
    assert inline["error"]["code"] == -32602
    assert "already has 10" in inline["error"]["message"]
    assert len(listed["result"]["configs"]) == 10


async def server_wide_bound_is_refused(store: TaskStore | None) -> None:
    server = push_server(store=store, max_push_configs=3)
    async with in_process(server) as http:
        first, second = await open_task(http, "m-a"), await open_task(http, "m-b")
        for n, task_id in enumerate([first, first, second]):
            params = {"taskId": task_id, "url": f"http://{PUBLIC_IP}/h{n}"}
            assert "result" in await rpc(http, "CreateTaskPushNotificationConfig", params)
        params = {"taskId": second, "url": f"http://{PUBLIC_IP}/h3"}
        fourth = await rpc(http, "CreateTaskPushNotificationConfig", params)
        config = {"taskPushNotificationConfig": {"url": f"http://{PUBLIC_IP}/new"}}
        new_task = await rpc(
            http, "SendMessage", {"message": message("go", "m-c"), "configuration": config}
        )
    for error in (fourth["error"], new_task["error"]):
        assert error["code"] == -32602
        assert "already holds 3 push notification configs" in error["message"]


async def test_the_eleventh_config_of_a_task_is_refused(
    store_factory: Callable[[], TaskStore | None],
) -> None:
    await eleventh_config_is_refused(store_factory())


async def test_the_server_wide_bound_is_refused_with_a_clear_error(
    store_factory: Callable[[], TaskStore | None],
) -> None:
    await server_wide_bound_is_refused(store_factory())


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # psycopg 3 has no trio support
async def test_postgres_store_refuses_the_eleventh_config(anyio_backend: str, pg_dsn: str) -> None:
    from a2a_layer import PostgresTaskStore

    await eleventh_config_is_refused(PostgresTaskStore(pg_dsn, pool_size=2))


@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # psycopg 3 has no trio support
async def test_postgres_store_counts_for_the_server_bound(anyio_backend: str, pg_dsn: str) -> None:
    from a2a_layer import PostgresTaskStore

    await server_wide_bound_is_refused(PostgresTaskStore(pg_dsn, pool_size=2))


async def test_the_default_bounds_are_documented_values() -> None:
    server = push_server()
    assert server.push is not None
    assert (server.push.max_configs_per_task, server.push.max_configs) == (10, 10_000)


# -- the CLI flag --------------------------------------------------------------------------


def test_cli_serve_refuses_private_webhooks_unless_allowed() -> None:
    from fixtures.cli_helpers import EXAMPLES, CLIServer, serving

    from rpcweave._cli_a2a import build_server

    target = f"{EXAMPLES / 'a2a' / 'coding_agent.py'}:CodingAgent"
    got = threading.Event()

    async def on_event(event: StreamResponse) -> None:
        got.set()

    receiver = PushReceiver(token="tok", on_event=on_event)
    hook_config = {"taskPushNotificationConfig": {"url": "", "token": "tok"}}

    def send(agent_url: str, hook: str, mid: str) -> dict[str, Any]:
        hook_config["taskPushNotificationConfig"]["url"] = hook
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendMessage",
            "params": {"message": message("reverse a string", mid), "configuration": hook_config},
        }
        answer = httpx.post(agent_url, json=body, headers=V10, timeout=10, trust_env=False)
        result: dict[str, Any] = answer.json()
        return result

    with serving(receiver.asgi_app()) as hook_url:
        with serving(build_server(target, None).asgi_app()) as plain:
            refused = send(plain, f"{hook_url}/hook", "m-plain")
        assert refused["error"]["code"] == -32602
        assert "127.0.0.1 is not public" in refused["error"]["message"]

        server = CLIServer("a2a", "serve", target, "--port", "0", "--allow-private-webhooks")
        try:
            lines: list[str] = []
            stdout = server.process.stdout
            assert stdout is not None
            reader = threading.Thread(target=lambda: lines.append(stdout.readline()))
            reader.start()
            reader.join(30)
            assert lines == ["push: private webhook targets allowed\n"]
            accepted = send(server.url, f"{hook_url}/hook", "m-allowed")
            assert "result" in accepted, accepted
            assert got.wait(30)
        finally:
            status, err = server.stop()
    assert status == 0, err


def test_the_tck_agent_opts_in_with_push() -> None:
    from rpcweave.examples.a2a import tck_agent

    pushing = tck_agent.build_server(push=True)
    assert pushing.push is not None and pushing.push.allow_private_webhooks
    assert tck_agent.PRIVATE_PUSH_NOTICE == (
        "push: private webhook targets allowed (loopback receivers)"
    )


def test_check_webhook_url_names_the_host_and_why() -> None:
    from a2a_layer._push import check_webhook_url

    with pytest.raises(InvalidParams, match=r"webhook address 10\.0\.0\.5 is not public"):
        anyio.run(check_webhook_url, "http://10.0.0.5/hook")
