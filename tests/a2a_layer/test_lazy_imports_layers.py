"""`a2a_layer` loads the parts a server does not use only when it uses them.

An `A2AServer` without push notifications, without the HTTP+JSON binding and without
A2A 0.3 compatibility does not import the push dispatcher, the REST routes or the 0.3
bridge; each of them loads as soon as the server is configured to need it. Each check
runs in a fresh interpreter, so what this process imported does not count.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _loaded_after(code: str) -> set[str]:
    """The modules ``sys.modules`` holds after running ``code`` in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _server_code(*, push: bool, rest: bool, compat: bool) -> str:
    rest_path = "'/rest'" if rest else "None"
    return (
        "from a2a_layer import A2AServer\n"
        "from a2a_layer.types import AgentCapabilities, AgentCard\n"
        "card = AgentCard(name='a', description='d', version='1',\n"
        f"    capabilities=AgentCapabilities(streaming=True, push_notifications={push}),\n"
        "    default_input_modes=['text/plain'], default_output_modes=['text/plain'])\n"
        "async def agent(context, updater):\n"
        "    await updater.complete()\n"
        f"server = A2AServer(card, agent, url='http://127.0.0.1:1', rest_path={rest_path},\n"
        f"    compat_v03={compat})\n"
        "server.asgi_app()\n"
    )


OPTIONAL_PARTS = {"a2a_layer._push", "a2a_layer._rest", "a2a_layer._http_binding"}
COMPAT = "a2a_layer._compat03"


def test_a_plain_server_skips_push_rest_and_the_03_bridge() -> None:
    loaded = _loaded_after(_server_code(push=False, rest=False, compat=False))
    assert {"a2a_layer._server", "a2a_layer._rpc", "a2a_layer._card"} <= loaded
    assert not loaded & (OPTIONAL_PARTS | {COMPAT, "a2a_layer._client", "httpx"})


@pytest.mark.parametrize(
    ("options", "needed"),
    [
        ({"push": True, "rest": False, "compat": False}, {"a2a_layer._push"}),
        ({"push": False, "rest": True, "compat": False}, {"a2a_layer._rest"}),
        ({"push": False, "rest": False, "compat": True}, {COMPAT}),
    ],
)
def test_each_optional_part_loads_when_configured(
    options: dict[str, bool], needed: set[str]
) -> None:
    loaded = _loaded_after(_server_code(**options))
    assert needed <= loaded


def test_the_card_resolver_still_reads_03_cards() -> None:
    code = (
        "import asyncio, httpx\n"
        "from a2a_layer import resolve_card\n"
        "card = {'name': 'a', 'description': 'd', 'version': '1', 'url': 'http://x/',\n"
        "    'protocolVersion': '0.3.0', 'capabilities': {}, 'skills': [],\n"
        "    'defaultInputModes': [], 'defaultOutputModes': []}\n"
        "def reply(request):\n"
        "    return httpx.Response(200, json=card)\n"
        "async def main():\n"
        "    async with httpx.AsyncClient(transport=httpx.MockTransport(reply)) as http:\n"
        "        got = await resolve_card(http, 'http://x')\n"
        "    assert got.name == 'a' and got.supported_interfaces, got\n"
        "asyncio.run(main())\n"
    )
    assert COMPAT in _loaded_after(code)


@pytest.mark.parametrize("package", ["a2a_layer", "acp_layer"])
def test_every_exported_name_resolves(package: str) -> None:
    optional = {"PostgresTaskStore"}  # needs the postgres extra
    code = (
        f"import {package}\n"
        f"missing = [n for n in {package}.__all__ if n not in {optional!r}\n"
        f"    and getattr({package}, n, None) is None]\n"
        "assert not missing, missing\n"
    )
    _loaded_after(code)


_SERVE_ONE_SEND = """
import asyncio, json

async def serve_one_send():
    app = server.asgi_app()
    lifespan_in: asyncio.Queue = asyncio.Queue()
    lifespan_out: asyncio.Queue = asyncio.Queue()
    await lifespan_in.put({"type": "lifespan.startup"})
    lifespan = asyncio.ensure_future(
        app({"type": "lifespan", "asgi": {"version": "3.0"}}, lifespan_in.get, lifespan_out.put)
    )
    assert (await lifespan_out.get())["type"] == "lifespan.startup.complete"
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    ).encode()
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/", "raw_path": b"/", "query_string": b"", "root_path": "",
        "server": ("127.0.0.1", 1), "client": ("127.0.0.1", 2),
        "headers": [(b"host", b"127.0.0.1:1"), (b"content-type", b"application/json"),
                    (b"accept", b"application/json, text/event-stream"),
                    (b"a2a-version", b"1.0"), (b"content-length", str(len(body)).encode())],
    }
    requests = [{"type": "http.request", "body": body, "more_body": False}]
    sent = []

    async def receive():
        if requests:
            return requests.pop()
        await asyncio.Event().wait()  # no disconnect while the answer is written

    async def send(event):
        sent.append(event)

    await app(scope, receive, send)
    chunks = [e.get("body", b"") for e in sent if e["type"] == "http.response.body"]
    answer = json.loads(b"".join(chunks))
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED", answer
    await lifespan_in.put({"type": "lifespan.shutdown"})
    await lifespan

asyncio.run(serve_one_send())
"""

NOT_FOR_A_PLAIN_SEND = {
    "a2a_layer._grpc",
    "grpc",
    "a2a_layer._postgres",
    "a2a_layer._sqlite",
    "sqlite3",
    "a2a_layer._shared",
    "a2a_layer._fanout",
    "jsonschema",
    "opentelemetry",
    "httpx",
}
"""Modules (and packages) that serving a blocking SendMessage over JSON-RPC never needs."""


def test_serving_a_send_loads_no_optional_part() -> None:
    """A plain JSON-RPC server (the bench's) that answered a blocking SendMessage has not loaded the
    gRPC binding, the SQL and shared stores, JSON Schema, OpenTelemetry, the client, nor
    any part `test_a_plain_server_skips_push_rest_and_the_03_bridge` names."""
    code = _server_code(push=False, rest=False, compat=False).replace(
        "await updater.complete()", "await updater.add_artifact('x')\n    await updater.complete()"
    )
    loaded = _loaded_after(code + _SERVE_ONE_SEND)
    assert {"a2a_layer._runtime", "a2a_layer._agent_runs"} <= loaded
    roots = {name.split(".")[0] for name in loaded}
    unwanted = {
        name
        for name in NOT_FOR_A_PLAIN_SEND
        if name in loaded or ("." not in name and name in roots)
    }
    assert not unwanted
    assert not loaded & (OPTIONAL_PARTS | {COMPAT, "a2a_layer._client"})
    assert not {name for name in loaded if name.startswith("jsonrpc_core._pg")}
