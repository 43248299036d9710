"""2025-11-25 tasks against npm ``@modelcontextprotocol/server-everything`` (stdio), the
official TypeScript SDK's client (a dependency of that package) against our server, and
``rpcweave mcp call`` running task tools.

The package is installed at test time into the git-ignored
``tests/mcp_layer/mcp_tasks_fixtures/node_modules`` from
``tests/mcp_layer/mcp_tasks_fixtures/package.json``; the tests are skipped only when npm or
node is missing. Its ``simulate-research-query`` tool (``execution.taskSupport:
"required"``) walks four one-second stages; with ``ambiguous=true`` it asks for a
clarification (``elicitation/create`` delivered through ``tasks/result``) in the third.
What our client sends is checked against the 2025-11-25 schema.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import _required
import anyio
import pytest
from fixtures.cli_helpers import PY, run_cli
from mcp_schema import WireChecker, requires_schema

from jsonrpc_core import spawn_stdio
from mcp_layer import ClientSession
from mcp_layer.types import RELATED_TASK_META_KEY, ElicitResult, Task

pytestmark = requires_schema

FIXTURES = Path(__file__).resolve().parent / "mcp_tasks_fixtures"
PACKAGE = FIXTURES / "node_modules" / "@modelcontextprotocol" / "server-everything"
TASK_SERVER = str(FIXTURES / "task_server.py")
RESEARCH = "simulate-research-query"

Capture = pytest.CaptureFixture[str]


@pytest.fixture(scope="module")
def everything() -> list[str]:
    """The command that starts the everything server over stdio (installed on first use)."""
    node, npm = _required.node_and_npm("the server-everything tests")
    wanted = json.loads((FIXTURES / "package.json").read_text())["dependencies"]
    manifest = PACKAGE / "package.json"
    installed = json.loads(manifest.read_text())["version"] if manifest.exists() else None
    if installed != wanted["@modelcontextprotocol/server-everything"]:
        subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--no-package-lock", "--loglevel=error"],
            cwd=FIXTURES,
            check=True,
            timeout=300,
            env={**os.environ, "npm_config_update_notifier": "false"},
        )
    return [node, str(PACKAGE / "dist" / "index.js"), "stdio"]


@pytest.mark.anyio
async def test_a_required_task_tool_with_a_question_runs_to_its_result(
    everything: list[str],
) -> None:
    wire = WireChecker(["client"])
    statuses: list[tuple[str, str | None]] = []
    asked: list[Any] = []

    def clarify(params: Any) -> ElicitResult:
        asked.append(params.meta)
        return ElicitResult(action="accept", content={"interpretation": "historical"})

    with anyio.fail_after(60):
        async with spawn_stdio(everything) as process:
            stream = wire.wrap(process, role="client")
            async with ClientSession(stream, elicitation=clarify) as client:
                result = await client.call_tool(
                    RESEARCH,
                    {"topic": "tides", "ambiguous": True},
                    on_task_status=lambda t: statuses.append((t.status, t.status_message)),
                )
    text = result.content[0].text  # type: ignore[union-attr]
    assert "# Research Report: tides (historical)" in text
    [status_seen] = [s for s in statuses if s[0] == "input_required"]
    assert "multiple interpretations" in (status_seen[1] or "")
    assert statuses[-1][0] == "completed"
    assert ("working", "Gathering sources...") in statuses
    [meta] = asked
    task_id = meta[RELATED_TASK_META_KEY]["taskId"]
    [call] = wire.sent_by("client", "tools/call")
    assert "task" in call["params"]
    assert {m["params"]["taskId"] for m in wire.sent_by("client", "tasks/result")} == {task_id}
    wire.assert_clean()


@pytest.mark.anyio
async def test_cancelling_the_call_cancels_the_servers_task(everything: list[str]) -> None:
    wire = WireChecker(["client"])
    created: list[Task] = []
    have_task = anyio.Event()

    def on_status(task: Task) -> None:
        created.append(task)
        have_task.set()

    with anyio.fail_after(60):
        async with spawn_stdio(everything) as process:
            stream = wire.wrap(process, role="client")
            async with ClientSession(stream) as client:
                async with anyio.create_task_group() as group:

                    async def call() -> None:
                        await client.call_tool(RESEARCH, {"topic": "x"}, on_task_status=on_status)

                    group.start_soon(call)
                    await have_task.wait()
                    group.cancel_scope.cancel()
                task = await client.get_task(created[0].task_id)
    assert task.status == "cancelled"
    [cancel] = wire.sent_by("client", "tasks/cancel")
    assert cancel["params"] == {"taskId": created[0].task_id}
    wire.assert_clean()


def test_mcp_call_runs_a_required_task_tool_and_shows_its_status(
    everything: list[str], capsys: Capture
) -> None:
    code, out, err = run_cli(capsys, "mcp", "call", RESEARCH, "topic=tides", "--", *everything)
    assert code == 0, err
    assert out.startswith("# Research Report: tides")
    lines = err.splitlines()
    assert lines[0].startswith("task ") and lines[0].endswith(" created")
    assert "task working: Gathering sources..." in lines
    assert lines[-1].startswith("task completed")


def test_mcp_call_task_runs_an_optional_tool_as_a_task(capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "mcp", "call", "double", "x=21", "--", PY, TASK_SERVER)
    assert (code, out, err) == (0, "42\n", "")
    code, out, err = run_cli(
        capsys, "mcp", "call", "double", "x=21", "--task", "--", PY, TASK_SERVER
    )
    assert (code, out) == (0, "42\n"), err
    lines = err.splitlines()
    assert lines[0].endswith(" created") and lines[-1] == "task completed"
    assert "progress 1/1: doubling" in lines


def test_the_official_typescript_client_runs_tasks_on_our_server(everything: list[str]) -> None:
    node = everything[0]
    done = subprocess.run(
        [node, str(FIXTURES / "sdk_client.mjs"), PY, TASK_SERVER],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["capabilities"]["tasks"] == {
        "list": {},
        "cancel": {},
        "requests": {"tools": {"call": {}}},
    }
    assert dict(report["tools"]) == {
        "double": {"taskSupport": "optional"},
        "shout": {"taskSupport": "required"},
    }
    for name, text in (("shout", "HI"), ("double", "42")):
        created, *_, result = report[name]
        assert created[:2] == ["taskCreated", "working"]
        assert result == ["result", text, {RELATED_TASK_META_KEY: {"taskId": created[2]}}]
    task_id = report["double"][0][2]
    assert report["get"]["status"] == "completed" and report["get"]["ttl"] == 60_000
    assert report["list"] == [report["shout"][0][2], task_id]
    assert report["cancelTerminal"] == -32602
