"""Interop with the official Python SDK (PyPI ``agent-client-protocol``), both directions.

- its client (tests/acp_fixtures/py_sdk_client.py) drives our demo agent: served in this
  process on the script's stdio (so our side is schema-checked), and spawned by the SDK;
- our client (`spawn_agent` + `LocalClient`) drives an agent written with it
  (tests/acp_fixtures/py_sdk_agent.py).

The SDK scripts run in their own processes (the SDK needs asyncio); our side runs on both
anyio backends.
"""

from __future__ import annotations

import sys
from pathlib import Path

import acp  # noqa: F401  (agent-client-protocol is a dev dependency: missing fails, not skips)
import pytest
from _acp_interop import drive_sdk_agent, run_spawning_client, serve_demo_agent
from acp_fixtures.wire import FIXTURES, requires_acp_schema

pytestmark = requires_acp_schema

SDK_CLIENT = FIXTURES / "py_sdk_client.py"
SDK_AGENT = FIXTURES / "py_sdk_agent.py"


def sdk_client(report_path: Path, workspace: Path) -> list[str]:
    """The SDK client's command line, writing its report to ``report_path``."""
    return [
        sys.executable,
        str(SDK_CLIENT),
        "--report",
        str(report_path),
        "--workspace",
        str(workspace),
    ]


@pytest.mark.anyio
async def test_sdk_client_drives_our_demo_agent(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    _, check = await serve_demo_agent(sdk_client(report_path, tmp_path), report_path, tmp_path)
    check.assert_valid()
    # The SDK answered our $/cancel_request notifications (for the abandoned wait) as unknown.
    assert check.sent("$/cancel_request")


def test_sdk_client_spawns_our_demo_agent(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    command = [*sdk_client(report_path, tmp_path), "--spawn"]
    run_spawning_client(command, report_path, tmp_path)


@pytest.mark.anyio
async def test_our_client_drives_an_sdk_agent(tmp_path: Path) -> None:
    await drive_sdk_agent(
        [sys.executable, str(SDK_AGENT)],
        tmp_path,
        agent_name="py-sdk-agent",
        terminal_said="exit=0 output='from-terminal\\n'",
    )
