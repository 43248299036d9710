"""Interop with the official TypeScript SDK (npm ``@agentclientprotocol/sdk``), both directions.

- its client (tests/acp_fixtures/node_client.mjs) drives our demo agent, served in this
  process on the script's stdio (our side schema-checked), and spawned by Node itself;
- our client (`spawn_agent` + `LocalClient`) drives an agent written with it
  (tests/acp_fixtures/node_agent.mjs).

The package is installed at test time into tests/acp_fixtures/node_modules (git-ignored) from
tests/acp_fixtures/package.json and its lock file. The tests are skipped only when npm is not
available; a failing install fails them.
"""

from __future__ import annotations

import json
import shutil
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

pytestmark = pytest.mark.skipif(
    not (SPEC_DIR / "schema.json").is_file(), reason="ACP schema missing"
)

NODE_CLIENT = FIXTURES / "node_client.mjs"
NODE_AGENT = FIXTURES / "node_agent.mjs"
SDK_PACKAGE = FIXTURES / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
demo = load_demo_agent()


@pytest.fixture(scope="module")
def node() -> str:
    """The ``node`` executable, with the SDK installed next to the fixture scripts."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not available: the TypeScript SDK interop tests need it")
    node = shutil.which("node")
    assert node is not None, "npm is installed but node is not"
    wanted = json.loads((FIXTURES / "package.json").read_text())["dependencies"]
    installed = json.loads(SDK_PACKAGE.read_text())["version"] if SDK_PACKAGE.exists() else None
    if installed != wanted["@agentclientprotocol/sdk"]:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=FIXTURES,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    return node


def check_node_extras(report: dict[str, object]) -> None:
    assert report["unknownSession"] == -32002
    assert report["afterError"] == "end_turn"


@pytest.mark.anyio
async def test_node_client_drives_our_demo_agent(node: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("notes\n")
    report_path = tmp_path / "report.json"
    check = SchemaCheck()
    with anyio.fail_after(60):
        async with spawn_stdio([node, str(NODE_CLIENT), str(report_path), str(tmp_path)]) as stream:
            await serve_agent(demo.DemoAgent(), stream, tap=check.tap())
            code = await stream.process.wait()
    assert code == 0, list(stream.stderr_tail)
    report = json.loads(report_path.read_text())
    check_demo_report(report, tmp_path)
    check_node_extras(report)
    check.assert_valid()


def test_node_client_spawns_our_demo_agent(node: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("notes\n")
    report_path = tmp_path / "report.json"
    command = [node, str(NODE_CLIENT), str(report_path), str(tmp_path), "--spawn"]
    done = subprocess.run(
        [*command, sys.executable, str(DEMO_AGENT)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(report_path.read_text())
    check_demo_report(report, tmp_path)
    check_node_extras(report)


@pytest.mark.anyio
async def test_our_client_drives_a_node_agent(node: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("abc")
    check = SchemaCheck()
    got_update = anyio.Event()
    client = LocalClient(permission="allow", on_update=lambda note: got_update.set())
    with anyio.fail_after(60):
        async with spawn_agent([node, str(NODE_AGENT)], client, tap=check.tap()) as conn:
            assert conn.agent_info is not None and conn.agent_info.name == "node-agent"
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
        'exit=0 output="from-terminal\\n"',
        "image of 6000000 chars",
    ]
    assert said[3] == "working"
    assert len(client.permission_requests) == 1
    check.assert_valid()
