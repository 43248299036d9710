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
import subprocess
from pathlib import Path

import _required
import pytest
from _acp_interop import drive_sdk_agent, run_spawning_client, serve_demo_agent
from acp_fixtures.wire import FIXTURES, requires_acp_schema

pytestmark = requires_acp_schema

NODE_CLIENT = FIXTURES / "node_client.mjs"
NODE_AGENT = FIXTURES / "node_agent.mjs"
SDK_PACKAGE = FIXTURES / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"


@pytest.fixture(scope="module")
def node() -> str:
    """The ``node`` executable, with the SDK installed next to the fixture scripts."""
    node, npm = _required.node_and_npm("the ACP TypeScript SDK interop tests")
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
    report_path = tmp_path / "report.json"
    command = [node, str(NODE_CLIENT), str(report_path), str(tmp_path)]
    report, check = await serve_demo_agent(command, report_path, tmp_path)
    check_node_extras(report)
    check.assert_valid()


def test_node_client_spawns_our_demo_agent(node: str, tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    command = [node, str(NODE_CLIENT), str(report_path), str(tmp_path), "--spawn"]
    check_node_extras(run_spawning_client(command, report_path, tmp_path))


@pytest.mark.anyio
async def test_our_client_drives_a_node_agent(node: str, tmp_path: Path) -> None:
    await drive_sdk_agent(
        [node, str(NODE_AGENT)],
        tmp_path,
        agent_name="node-agent",
        terminal_said='exit=0 output="from-terminal\\n"',
    )
