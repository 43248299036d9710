"""An ACP client written with the official Python SDK (PyPI ``agent-client-protocol``).

It drives the demo agent (examples/acp/demo_agent.py) through every command, answering the
agent's callbacks itself, and writes what it saw as JSON to ``--report``.

    py_sdk_client.py --report OUT --workspace DIR               # the agent is on our stdio
    py_sdk_client.py --report OUT --workspace DIR --spawn CMD...  # spawn the agent ourselves
"""

# A test script on asyncio: small blocking file access is fine here.
# ruff: noqa: ASYNC240

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import acp
from acp import schema

EVENT_TIMEOUT = 20


class SdkClient:
    """Answers the agent like an editor would: local files, allow everything, subprocesses."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.updates: list[dict[str, Any]] = []
        self.permission_requests = 0
        self.calls: list[str] = []
        self.terminals: dict[str, asyncio.subprocess.Process] = {}
        self.outputs: dict[str, bytes] = {}
        self.update_seen = asyncio.Event()

    def on_connect(self, conn: Any) -> None:
        pass

    async def request_permission(self, session_id: str, tool_call: Any, options: Any, **kw: Any):
        self.calls.append("session/request_permission")
        self.permission_requests += 1
        allow = next(o for o in options if o.kind == "allow_once")
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **kw: Any) -> None:
        self.updates.append(update.model_dump(mode="json", by_alias=True, exclude_none=True))
        self.update_seen.set()

    async def read_text_file(self, session_id: str, path: str, line=None, limit=None, **kw: Any):
        self.calls.append("fs/read_text_file")
        return schema.ReadTextFileResponse(content=Path(path).read_text())

    async def write_text_file(self, session_id: str, path: str, content: str, **kw: Any):
        self.calls.append("fs/write_text_file")
        Path(path).write_text(content)
        return schema.WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args=None,
        env=None,
        cwd=None,
        output_byte_limit=None,
        **kw: Any,
    ):
        self.calls.append("terminal/create")
        process = await asyncio.create_subprocess_exec(
            command,
            *(args or []),
            cwd=cwd,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        terminal_id = f"term_{len(self.terminals) + 1}"
        self.terminals[terminal_id] = process
        self.outputs[terminal_id] = b""

        async def collect() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                self.outputs[terminal_id] += chunk

        asyncio.get_running_loop().create_task(collect())
        return schema.CreateTerminalResponse(terminal_id=terminal_id)

    def _status(self, terminal_id: str) -> dict[str, Any]:
        code = self.terminals[terminal_id].returncode
        if code is None:
            return {}
        return {"exit_code": code} if code >= 0 else {"signal": f"signal {-code}"}

    async def terminal_output(self, session_id: str, terminal_id: str, **kw: Any):
        self.calls.append("terminal/output")
        status = self._status(terminal_id)
        return schema.TerminalOutputResponse(
            output=self.outputs[terminal_id].decode(errors="replace"),
            truncated=False,
            exit_status=schema.TerminalExitStatus(**status) if status else None,
        )

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kw: Any):
        self.calls.append("terminal/wait_for_exit")
        await self.terminals[terminal_id].wait()
        return schema.WaitForTerminalExitResponse(**self._status(terminal_id))

    async def kill_terminal(self, session_id: str, terminal_id: str, **kw: Any):
        self.calls.append("terminal/kill")
        process = self.terminals[terminal_id]
        if process.returncode is None:
            os.killpg(process.pid, 9)
        return schema.KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kw: Any):
        self.calls.append("terminal/release")
        process = self.terminals.pop(terminal_id)
        if process.returncode is None:
            os.killpg(process.pid, 9)
        return schema.ReleaseTerminalResponse()

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


async def scenario(conn: Any, client: SdkClient, workspace: Path) -> dict[str, Any]:
    report: dict[str, Any] = {}
    init = await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=True, write_text_file=True),
            terminal=True,
        ),
        client_info=schema.Implementation(name="py-sdk-client", version="1"),
    )
    report["initialize"] = init.model_dump(mode="json", by_alias=True, exclude_none=True)
    session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
    sid = session.session_id
    report["session_id"] = sid
    stop = await conn.prompt(session_id=sid, prompt=[acp.text_block("hello from the SDK")])
    report["hello"] = stop.stop_reason
    commands = "\n".join(
        [
            "/read notes.txt",
            "/write out.txt written by demo",
            "/run --timeout 0.5 sleep 30",
            "/run echo hi",
            "/plan",
        ]
    )
    stop = await conn.prompt(session_id=sid, prompt=[acp.text_block(commands)])
    report["commands"] = stop.stop_reason
    # Cancel a long turn once it is under way.
    client.update_seen.clear()
    before = len(client.updates)
    turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[acp.text_block("/sleep 600")]))
    while not any(u.get("sessionUpdate") == "tool_call_update" for u in client.updates[before:]):
        client.update_seen.clear()
        await asyncio.wait_for(client.update_seen.wait(), EVENT_TIMEOUT)
    await conn.cancel(session_id=sid)
    report["cancelled"] = (await asyncio.wait_for(turn, EVENT_TIMEOUT)).stop_reason
    report["updates"] = client.updates
    report["calls"] = client.calls
    report["permission_requests"] = client.permission_requests
    report["out_txt"] = (workspace / "out.txt").read_text()
    return report


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--report", required=True)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--spawn", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    workspace = Path(args.workspace)
    client = SdkClient(workspace)
    if args.spawn:
        async with acp.spawn_agent_process(client, *args.spawn) as (conn, _process):  # type: ignore[arg-type]
            report = await asyncio.wait_for(scenario(conn, client, workspace), 60)
    else:
        reader, writer = await acp.stdio_streams()
        conn = acp.connect_to_agent(client, writer, reader)  # type: ignore[arg-type]
        report = await asyncio.wait_for(scenario(conn, client, workspace), 60)
        await conn.close()
    Path(args.report).write_text(json.dumps(report))


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
