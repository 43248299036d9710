"""Interop with the official Python SDK (PyPI ``agent-client-protocol``), both directions.

- its client (tests/acp_fixtures/py_sdk_client.py) drives our demo agent: served in this
  process on the script's stdio (so our side is schema-checked), and spawned by the SDK;
- our client (`spawn_agent` + `LocalClient`) drives an agent written with it
  (tests/acp_fixtures/py_sdk_agent.py).

The SDK scripts run in their own processes (the SDK needs asyncio); our side runs on both
anyio backends.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from acp_fixtures.wire import (
    DEMO_AGENT,
    FIXTURES,
    SPEC_DIR,
    SchemaCheck,
    check_demo_report,
    load_demo_agent,
)

from acp_layer import LocalClient, serve_agent, spawn_agent
from acp_layer import schema as s
from jsonrpc_core import spawn_stdio

pytest.importorskip("acp", reason="the official Python SDK (agent-client-protocol) is missing")
pytestmark = pytest.mark.skipif(
    not (SPEC_DIR / "schema.json").is_file(), reason="ACP schema missing"
)

SDK_CLIENT = FIXTURES / "py_sdk_client.py"
SDK_AGENT = FIXTURES / "py_sdk_agent.py"
demo = load_demo_agent()


@pytest.mark.anyio
async def test_sdk_client_drives_our_demo_agent(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("notes\n")
    report_path = tmp_path / "report.json"
    check = SchemaCheck()
    command = [
        sys.executable,
        str(SDK_CLIENT),
        "--report",
        str(report_path),
        "--workspace",
        str(tmp_path),
    ]
    with anyio.fail_after(60):
        async with spawn_stdio(command) as stream:
            await serve_agent(demo.DemoAgent(), stream, tap=check.tap())
            code = await stream.process.wait()
    assert code == 0, list(stream.stderr_tail)
    check_demo_report(json.loads(report_path.read_text()), tmp_path)
    check.assert_valid()
    # The SDK answered our $/cancel_request notifications (for the abandoned wait) as unknown.
    assert check.sent("$/cancel_request")


def test_sdk_client_spawns_our_demo_agent(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("notes\n")
    report_path = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable,
            str(SDK_CLIENT),
            "--report",
            str(report_path),
            "--workspace",
            str(tmp_path),
            "--spawn",
            sys.executable,
            str(DEMO_AGENT),
        ],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    check_demo_report(json.loads(report_path.read_text()), tmp_path)


@pytest.mark.anyio
async def test_our_client_drives_an_sdk_agent(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc")
    check = SchemaCheck()
    got_update = anyio.Event()
    client = LocalClient(permission="allow", on_update=lambda note: got_update.set())
    with anyio.fail_after(60):
        async with spawn_agent([sys.executable, str(SDK_AGENT)], client, tap=check.tap()) as conn:
            assert conn.agent_info is not None and conn.agent_info.name == "py-sdk-agent"
            sid = (await conn.new_session(str(tmp_path))).session_id
            assert (await conn.prompt(sid, f"fs {tmp_path}/a.txt")).stop_reason == "end_turn"
            assert (await conn.prompt(sid, "term")).stop_reason == "end_turn"
            image = s.ImageContent(data="QUJD" * 1_500_000, mime_type="image/png")  # 6 MB
            assert (await conn.prompt(sid, [image])).stop_reason == "end_turn"
            results: list[s.PromptResponse] = []

            async def sleep() -> None:
                results.append(await conn.prompt(sid, "sleep"))

            async with anyio.create_task_group() as tg:
                got_update = anyio.Event()
                tg.start_soon(sleep)
                await got_update.wait()
                await conn.cancel(sid)
            assert results[0].stop_reason == "cancelled"
    assert (tmp_path / "a.txt.copy").read_text() == "ABC"
    said = [
        u.content.text
        for u in client.updates[sid]
        if isinstance(u, s.AgentMessageChunk) and isinstance(u.content, s.TextContent)
    ]
    assert said[:3] == [
        "read 'abc', allowed=True",
        "exit=0 output='from-terminal\\n'",
        "image of 6000000 chars",
    ]
    assert said[3] == "working"
    assert len(client.permission_requests) == 1
    check.assert_valid()
