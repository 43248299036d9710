"""Interop with the official SDKs, both directions, over real HTTP (uvicorn on 127.0.0.1).

* PyPI ``a2a-sdk``: its client (JSON-RPC 1.0, HTTP+JSON 1.0, JSON-RPC 0.3) against the
  rpcweave TCK agent, and rpcweave's client against an agent built with it.
* npm ``@a2a-js/sdk``: its client (JSON-RPC and HTTP+JSON) against the TCK agent,
  installed at test time into the git-ignored ``tests/a2a_fixtures/node_modules``.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import _required
import anyio
import httpx
import pytest
from a2a_fixtures.sdk_server import build_app, set_base_url

from a2a_layer import A2AClient, TaskNotCancelable, TaskNotFound
from a2a_layer.types import Task, TaskState
from jsonrpc_core import running_server
from rpcweave.examples.a2a.tck_agent import build_server

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "a2a_fixtures"

pytestmark = pytest.mark.anyio

STREAM_KINDS = ["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"]


# -- the a2a-sdk client against rpcweave -------------------------------------------------
# The a2a-sdk client is written for asyncio (it uses asyncio primitives), so these tests
# run on asyncio only.


async def _sdk_scenario(url: str, binding: str, streaming: bool, legacy: bool) -> dict[str, Any]:
    import httpx
    from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
    from a2a.types.a2a_pb2 import (
        CancelTaskRequest,
        GetTaskRequest,
        ListTasksRequest,
        Message,
        Part,
        Role,
        SendMessageRequest,
    )
    from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError
    from google.protobuf.json_format import MessageToDict

    out: dict[str, Any] = {}
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, url).get_agent_card()
        if legacy:  # only the 0.3 interface: the SDK's compat transport
            kept = [i for i in card.supported_interfaces if i.protocol_version == "0.3"]
            del card.supported_interfaces[:]
            card.supported_interfaces.extend(kept)
        config = ClientConfig(
            streaming=streaming, supported_protocol_bindings=[binding], httpx_client=http
        )
        client = ClientFactory(config).create(card)
        out["transport"] = type(client._transport).__name__  # type: ignore[attr-defined]

        async def send(mid: str) -> list[dict[str, Any]]:
            request = SendMessageRequest(
                message=Message(message_id=mid, role=Role.ROLE_USER, parts=[Part(text="hi")])
            )
            return [MessageToDict(e) async for e in client.send_message(request)]

        suffix = f"-{binding}-{streaming}-{legacy}"
        out["complete"] = await send("tck-complete-task" + suffix)
        out["reply"] = await send("tck-message-response" + suffix)
        out["chunked"] = await send("tck-stream-artifact-chunked" + suffix)
        out["file"] = await send("tck-artifact-file" + suffix)
        task_id = out["complete"][0]["task"]["id"]
        out["get"] = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
        try:
            await client.get_task(GetTaskRequest(id="no-such-task"))
        except TaskNotFoundError:
            out["not_found"] = True
        try:
            await client.cancel_task(CancelTaskRequest(id=task_id))
        except TaskNotCancelableError:
            out["not_cancelable"] = True
        if not legacy:
            listed = await client.list_tasks(ListTasksRequest(page_size=2))
            out["list"] = (len(listed.tasks), bool(listed.next_page_token), listed.total_size)
        await client.close()
    return out


SDK_CASES = [
    (binding, legacy, streaming)
    for binding, legacy in [("JSONRPC", False), ("HTTP+JSON", False), ("JSONRPC", True)]
    for streaming in (False, True)
]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a2a_sdk_client_against_rpcweave(anyio_backend: str) -> None:
    async with running_server(build_server().asgi_app()) as url:
        for binding, legacy, streaming in SDK_CASES:
            with anyio.fail_after(30):
                out = await _sdk_scenario(url, binding, streaming, legacy)
            _check_sdk_scenario(out, binding, legacy, streaming)


def _check_sdk_scenario(out: dict[str, Any], binding: str, legacy: bool, streaming: bool) -> None:
    expected_transport = {
        ("JSONRPC", False): "JsonRpcTransport",
        ("HTTP+JSON", False): "RestTransport",
        ("JSONRPC", True): "CompatJsonRpcTransport",
    }[(binding, legacy)]
    assert out["transport"] == expected_transport
    complete = out["complete"][-1]
    state = (complete.get("task") or complete["statusUpdate"])["status"]
    assert state["state"] == "TASK_STATE_COMPLETED"
    assert state["message"]["parts"] == [{"text": "Hello from TCK"}]
    assert out["reply"] == [
        {"message": {**out["reply"][0]["message"], "parts": [{"text": "Direct message response"}]}}
    ]
    if streaming:
        assert [next(iter(e)) for e in out["chunked"]] == [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate",
        ]
        assert out["chunked"][3]["artifactUpdate"]["append"] is True
        assert out["chunked"][3]["artifactUpdate"]["lastChunk"] is True
    else:
        artifact = out["chunked"][0]["task"]["artifacts"][0]
        assert [p["text"] for p in artifact["parts"]] == ["chunk-1 ", "chunk-2"]
    file_task = out["file"][-1]
    artifacts = (
        file_task["task"]["artifacts"]
        if "task" in file_task
        else [e["artifactUpdate"]["artifact"] for e in out["file"] if "artifactUpdate" in e]
    )
    part = artifacts[0]["parts"][0]
    assert (part["filename"], part["mediaType"]) == ("output.txt", "text/plain")
    assert out["get"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert out["not_found"] and out["not_cancelable"]
    if not legacy:
        assert out["list"][0] == 2 and out["list"][1]


# -- rpcweave's client against an a2a-sdk server -----------------------------------------


async def test_rpcweave_client_against_a2a_sdk_server() -> None:
    app, card = build_app()
    async with running_server(app) as url:
        set_base_url(card, url)
        for binding, version in [("JSONRPC", "1.0"), ("HTTP+JSON", "1.0"), ("JSONRPC", "0.3")]:
            await _rpcweave_scenario(url, binding, version)


async def test_rpcweave_client_reads_an_a2a_sdk_card_without_protocol_versions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, card = build_app(interface_versions=False)
    caplog.set_level(logging.INFO, logger="a2a_layer.card")
    async with running_server(app) as url:
        set_base_url(card, url)
        async with httpx.AsyncClient() as http:
            served = (await http.get(url + "/.well-known/agent-card.json")).json()
        assert all("protocolVersion" not in i for i in served["supportedInterfaces"])
        for binding in ("JSONRPC", "HTTP+JSON"):
            with anyio.fail_after(30):
                async with A2AClient.connect(url, bindings=(binding,)) as client:
                    assert client.protocol_version == "1.0"
                    done = await client.send("do it")
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    notes = [r.getMessage() for r in caplog.records if r.name == "a2a_layer.card"]
    assert f"agent card: the JSONRPC interface at {url} names no protocolVersion; read as 1.0" in (
        notes
    )


async def _rpcweave_scenario(url: str, binding: str, version: str) -> None:
    with anyio.fail_after(30):
        async with A2AClient.connect(url, bindings=(binding,), versions=(version,)) as client:
            assert client.protocol_version == version
            reply = await client.send("hello")
            done = await client.send("do it")
            asked = await client.send("ask me")
            assert isinstance(asked, Task)
            answered = await client.send("Python", task_id=asked.id)
            events = [e async for e in client.stream("stream it")]
            got = await client.get_task(asked.id, history_length=1)
            with pytest.raises(TaskNotFound):
                await client.get_task("no-such-task")
            with pytest.raises(TaskNotCancelable):
                await client.cancel_task(asked.id)
            polled = await client.send("poll me", return_immediately=True)
            assert isinstance(polled, Task)
            waited = await client.wait(polled.id, timeout=10, interval=0.02)
            listed = await client.list_tasks(page_size=2) if version == "1.0" else None
    assert not isinstance(reply, Task) and reply.parts[0].text == "hello back"
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    assert done.artifacts and done.artifacts[0].parts[0].text == "echo: do it"
    assert asked.status.state is TaskState.INPUT_REQUIRED
    assert isinstance(answered, Task) and answered.id == asked.id
    assert answered.artifacts and answered.artifacts[0].parts[0].text == "answer: Python"
    assert [next(iter(e.model_dump(exclude_none=True))) for e in events] == [
        "task",
        "statusUpdate",
        "artifactUpdate",
        "statusUpdate",
    ]
    assert got.history is not None and len(got.history) == 1
    assert waited.status.state is TaskState.COMPLETED
    if listed is not None:
        assert len(listed.tasks) == 2 and listed.next_page_token


# -- the @a2a-js/sdk client against rpcweave ---------------------------------------------

JS_SDK = FIXTURES / "node_modules" / "@a2a-js" / "sdk" / "package.json"


@pytest.fixture(scope="module")
def js_client() -> Path:
    """The fixture script, with @a2a-js/sdk installed next to it (git-ignored)."""
    _, npm = _required.node_and_npm("the @a2a-js/sdk interop test")
    wanted = json.loads((FIXTURES / "package.json").read_text())["dependencies"]["@a2a-js/sdk"]
    if not JS_SDK.exists() or json.loads(JS_SDK.read_text())["version"] != wanted:
        import subprocess

        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"],
            cwd=FIXTURES,
            check=True,
            timeout=300,
            env={**os.environ, "npm_config_update_notifier": "false"},
        )
    return FIXTURES / "js_client.mjs"


async def test_a2a_js_client_against_rpcweave(js_client: Path) -> None:
    async with running_server(build_server().asgi_app()) as url:
        for binding in ("JSONRPC", "HTTP+JSON"):
            with anyio.fail_after(60):
                result = await anyio.run_process(
                    ["node", str(js_client), url, binding], cwd=FIXTURES, check=False
                )
            _check_js_run(result)


def _check_js_run(result: Any) -> None:
    lines = [json.loads(line) for line in result.stdout.decode().splitlines() if line.strip()]
    steps = {line["step"]: line for line in lines}
    assert result.returncode == 0, (steps.get("fatal"), result.stderr.decode()[-2000:])
    assert steps["card"]["protocol"] == "1.0"
    task = steps["send"]["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"] == [{"text": "Hello from TCK"}]
    assert steps["reply"]["result"]["message"]["parts"] == [{"text": "Direct message response"}]
    assert [next(iter(e)) for e in steps["stream"]["events"]] == STREAM_KINDS
    assert steps["get"]["task"]["id"] == task["id"] and len(steps["get"]["task"]["history"]) == 1
    assert "TaskNotCancelable" in steps["cancel-terminal"]["error"]
    assert "TaskNotFound" in steps["get-unknown"]["error"]
    assert steps["list"]["count"] == 2 and steps["list"]["total"] >= 2
    assert steps["multi-turn"] == {
        "step": "multi-turn",
        "first": "TASK_STATE_INPUT_REQUIRED",
        "then": "TASK_STATE_COMPLETED",
        "same": True,
    }
