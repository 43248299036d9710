"""The interop scenarios run against each official ACP SDK (test_acp_interop_node, _python).

Each SDK brings a client script and an agent script; the scenarios are the same:

- `serve_demo_agent`: its client, spawned here, drives our demo agent served on the
  script's stdio (our side schema-checked);
- `run_spawning_client`: its client spawns our demo agent itself;
- `drive_sdk_agent`: our client (`spawn_agent` + `LocalClient`) drives its agent.

The SDK client scripts write a JSON report, checked by `check_demo_report`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from acp_fixtures.wire import DEMO_AGENT, SchemaCheck, check_demo_report, load_demo_agent

from acp_layer import LocalClient, serve_agent, spawn_agent
from acp_layer import schema as s
from jsonrpc_core import spawn_stdio

demo = load_demo_agent()


async def serve_demo_agent(
    command: list[str], report_path: Path, workspace: Path
) -> tuple[dict[str, Any], SchemaCheck]:
    """Serve our demo agent to the client ``command`` started on its stdio; the
    client's checked report and the check of what our side sent (not yet asserted)."""
    (workspace / "notes.txt").write_text("notes\n")
    check = SchemaCheck()
    with anyio.fail_after(60):
        async with spawn_stdio(command) as stream:
            await serve_agent(demo.DemoAgent(), stream, tap=check.tap())
            code = await stream.process.wait()
    assert code == 0, list(stream.stderr_tail)
    report: dict[str, Any] = json.loads(await anyio.Path(report_path).read_text())
    check_demo_report(report, workspace)
    return report, check


def run_spawning_client(command: list[str], report_path: Path, workspace: Path) -> dict[str, Any]:
    """Run the client ``command``, which spawns our demo agent (``sys.executable`` and
    its script are appended); its checked report."""
    (workspace / "notes.txt").write_text("notes\n")
    done = subprocess.run(
        [*command, sys.executable, str(DEMO_AGENT)],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report: dict[str, Any] = json.loads(report_path.read_text())
    check_demo_report(report, workspace)
    return report


async def drive_sdk_agent(
    command: list[str], workspace: Path, *, agent_name: str, terminal_said: str
) -> None:
    """Drive the SDK's agent ``command`` through file access, a terminal, a 6 MB image
    and a cancelled prompt; ``terminal_said`` is how that agent reports the terminal."""
    (workspace / "a.txt").write_text("abc")
    check = SchemaCheck()
    got_update = anyio.Event()
    client = LocalClient(
        permission="allow", commands="allow", on_update=lambda note: got_update.set()
    )
    with anyio.fail_after(60):
        async with spawn_agent(command, client, tap=check.tap()) as conn:
            assert conn.agent_info is not None and conn.agent_info.name == agent_name
            sid = (await conn.new_session(str(workspace))).session_id
            assert (await conn.prompt(sid, f"fs {workspace}/a.txt")).stop_reason == "end_turn"
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
    assert (workspace / "a.txt.copy").read_text() == "ABC"
    said = [
        u.content.text
        for u in client.updates[sid]
        if isinstance(u, s.AgentMessageChunk) and isinstance(u.content, s.TextContent)
    ]
    assert said[:3] == [
        "read 'abc', allowed=True",
        terminal_said,
        "image of 6000000 chars",
    ]
    assert said[3] == "working"
    assert len(client.permission_requests) == 1
    check.assert_valid()
