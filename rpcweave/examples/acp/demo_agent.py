"""A scripted ACP agent (no model) that shows every client callback.

Run it from an ACP client (Zed, or `acp_layer.spawn_agent`)::

    python -m rpcweave.examples.acp.demo_agent [--max-message-size BYTES]

It advertises slash commands after each ``session/new`` and acts on them, one per line:

    /read PATH                        read a file through the client (a ``read`` tool call)
    /write PATH TEXT                  ask permission, then write TEXT (an ``edit`` tool call
                                      with a diff); nothing is written if permission is denied
    /run [--timeout SECONDS] CMD ...  run a command in a client terminal (an ``execute`` tool
                                      call embedding the terminal); killed after the timeout
    /plan                             send a plan
    /sleep SECONDS                    keep working, with progress updates, until done or
                                      cancelled

Any other text is echoed back as ``agent_message_chunk`` updates; images and other content
blocks are described.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import shlex

import anyio

from acp_layer import Agent, run_agent_stdio
from acp_layer import schema as s
from jsonrpc_core import DEFAULT_MAX_MESSAGE_SIZE, RpcError

COMMANDS = [
    s.AvailableCommand(
        name="read",
        description="Read a file through the editor",
        input=s.UnstructuredCommandInput(hint="path"),
    ),
    s.AvailableCommand(
        name="write",
        description="Write a file, after asking permission",
        input=s.UnstructuredCommandInput(hint="path text"),
    ),
    s.AvailableCommand(
        name="run",
        description="Run a command in a terminal",
        input=s.UnstructuredCommandInput(hint="[--timeout seconds] command args..."),
    ),
    s.AvailableCommand(name="plan", description="Show a plan"),
    s.AvailableCommand(
        name="sleep",
        description="Work for a while, with progress updates",
        input=s.UnstructuredCommandInput(hint="seconds"),
    ),
]

ALLOW = s.PermissionOption(option_id="allow", name="Allow", kind="allow_once")
REJECT = s.PermissionOption(option_id="reject", name="Reject", kind="reject_once")
RUN_OUTPUT_LIMIT = 256 * 1024


class DemoAgent(Agent):
    """The scripted agent: slash commands, echo otherwise."""

    agent_info = s.Implementation(name="rpcweave-demo-agent", title="Demo agent", version="0.1.0")
    prompt_capabilities = s.PromptCapabilities(image=True, embedded_context=True)

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    async def new_session(self, params: s.NewSessionRequest) -> s.NewSessionResponse:
        response = await super().new_session(params)
        session_id = response.session_id

        async def advertise() -> None:
            await self.client.session_update(
                session_id, s.AvailableCommandsUpdate(available_commands=COMMANDS)
            )

        # Once the client knows the session id, not before.
        self.client.after_response(advertise)
        return response

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        sid = params.session_id
        for block in params.prompt:
            if not isinstance(block, s.TextContent):
                await self.client.send_text(sid, describe(block))
                continue
            echo: list[str] = []
            for line in block.text.splitlines(keepends=True):
                if line.startswith("/"):
                    if echo:
                        await self.client.send_text(sid, "".join(echo))
                        echo.clear()
                    await self.command(sid, line.strip())
                else:
                    echo.append(line)
            if echo:
                await self.client.send_text(sid, "".join(echo))
        return "end_turn"

    async def command(self, sid: str, line: str) -> None:
        name, _, rest = line[1:].partition(" ")
        rest = rest.strip()
        if name == "read" and rest:
            await self.read(sid, self.path(sid, rest))
        elif name == "write" and rest:
            path, _, text = rest.partition(" ")
            await self.write(sid, self.path(sid, path), text)
        elif name == "run" and rest:
            await self.run(sid, shlex.split(rest))
        elif name == "plan":
            await self.plan(sid)
        elif name == "sleep" and rest:
            await self.sleep(sid, float(rest))
        else:
            await self.client.send_text(sid, f"Unknown command or missing input: {line}\n")

    def path(self, sid: str, path: str) -> str:
        session = self.client.sessions[sid]
        return os.path.normpath(os.path.join(session.cwd, path))

    def new_call_id(self) -> str:
        return f"call_{next(self._ids)}"

    async def finish(
        self, sid: str, call_id: str, status: s.ToolCallStatus, *content: s.ToolCallContent
    ) -> None:
        await self.client.update_tool_call(
            sid,
            s.ToolCallProgress(tool_call_id=call_id, status=status, content=list(content)),
        )

    async def read(self, sid: str, path: str) -> None:
        call_id = self.new_call_id()
        await self.client.start_tool_call(
            sid,
            s.ToolCall(
                tool_call_id=call_id,
                title=f"Read {path}",
                kind="read",
                status="in_progress",
                locations=[s.ToolCallLocation(path=path)],
                raw_input={"path": path},
            ),
        )
        try:
            text = await self.client.read_text_file(sid, path)
        except RpcError as exc:
            await self.finish(sid, call_id, "failed", text_content(f"Cannot read: {exc}"))
        else:
            await self.finish(sid, call_id, "completed", text_content(text))

    async def write(self, sid: str, path: str, text: str) -> None:
        call_id = self.new_call_id()
        old_text: str | None = None
        try:
            old_text = await self.client.read_text_file(sid, path)
        except RpcError:
            pass  # a new file, or one we cannot see: the diff has no old text
        diff = s.Diff(path=path, old_text=old_text, new_text=text)
        title = f"Write {path}"
        await self.client.start_tool_call(
            sid,
            s.ToolCall(
                tool_call_id=call_id,
                title=title,
                kind="edit",
                status="pending",
                content=[diff],
                locations=[s.ToolCallLocation(path=path)],
                raw_input={"path": path, "text": text},
            ),
        )
        outcome = await self.client.request_permission(
            sid,
            s.ToolCallUpdate(tool_call_id=call_id, title=title, kind="edit", content=[diff]),
            [ALLOW, REJECT],
        )
        if not (isinstance(outcome, s.SelectedPermissionOutcome) and outcome.option_id == "allow"):
            await self.finish(sid, call_id, "failed", text_content("Permission denied"))
            return
        try:
            await self.client.write_text_file(sid, path, text)
        except RpcError as exc:
            await self.finish(sid, call_id, "failed", text_content(f"Cannot write: {exc}"))
        else:
            await self.finish(sid, call_id, "completed", diff)

    async def run(self, sid: str, argv: list[str]) -> None:
        timeout: float | None = None
        if len(argv) >= 2 and argv[0] == "--timeout":
            timeout, argv = float(argv[1]), argv[2:]
        if not argv:
            await self.client.send_text(sid, "Usage: /run [--timeout SECONDS] CMD ARGS...\n")
            return
        call_id = self.new_call_id()
        title = f"Run {shlex.join(argv)}"
        try:
            terminal = await self.client.create_terminal(
                sid,
                argv[0],
                argv[1:],
                cwd=self.client.sessions[sid].cwd,
                output_byte_limit=RUN_OUTPUT_LIMIT,
            )
        except RpcError as exc:
            await self.client.start_tool_call(
                sid,
                s.ToolCall(
                    tool_call_id=call_id,
                    title=title,
                    kind="execute",
                    status="failed",
                    content=[text_content(f"Cannot run: {exc}")],
                ),
            )
            return
        async with terminal:
            await self.client.start_tool_call(
                sid,
                s.ToolCall(
                    tool_call_id=call_id,
                    title=title,
                    kind="execute",
                    status="in_progress",
                    content=[terminal.content()],
                    raw_input={"command": argv, "timeout": timeout},
                ),
            )
            exit_status: s.WaitForTerminalExitResponse | None = None
            with anyio.move_on_after(timeout if timeout is not None else float("inf")):
                exit_status = await terminal.wait_for_exit()
            timed_out = exit_status is None
            if exit_status is None:
                await terminal.kill()
                exit_status = await terminal.wait_for_exit()
            output = await terminal.output()
        ok = not timed_out and exit_status.exit_code == 0
        summary = (
            f"Timed out after {timeout:g} s; killed"
            if timed_out
            else f"Exit code {exit_status.exit_code}"
            if exit_status.exit_code is not None
            else f"Killed by {exit_status.signal}"
        )
        await self.client.update_tool_call(
            sid,
            s.ToolCallProgress(
                tool_call_id=call_id,
                status="completed" if ok else "failed",
                content=[terminal.content(), text_content(f"{output.output}\n[{summary}]")],
                raw_output={
                    "exitCode": exit_status.exit_code,
                    "signal": exit_status.signal,
                    "truncated": output.truncated,
                    "timedOut": timed_out,
                },
            ),
        )

    async def plan(self, sid: str) -> None:
        await self.client.send_plan(
            sid,
            [
                s.PlanEntry(content="Read the request", priority="high", status="completed"),
                s.PlanEntry(content="Do the work", priority="medium", status="in_progress"),
                s.PlanEntry(content="Report back", priority="low", status="pending"),
            ],
        )

    async def sleep(self, sid: str, seconds: float) -> None:
        call_id = self.new_call_id()
        await self.client.start_tool_call(
            sid,
            s.ToolCall(
                tool_call_id=call_id,
                title=f"Sleep {seconds:g} s",
                kind="think",
                status="in_progress",
            ),
        )
        step = max(0.05, min(1.0, seconds / 10))
        slept = 0.0
        try:
            while slept < seconds:
                await anyio.sleep(min(step, seconds - slept))
                slept += step
                await self.finish(
                    sid, call_id, "in_progress", text_content(f"Slept {min(slept, seconds):g} s")
                )
        except anyio.get_cancelled_exc_class():
            # session/cancel: report the tool call's end before the turn answers "cancelled".
            with anyio.CancelScope(shield=True):
                await self.finish(sid, call_id, "failed", text_content("Cancelled"))
            raise
        await self.finish(sid, call_id, "completed", text_content(f"Slept {seconds:g} s"))


def text_content(text: str) -> s.Content:
    """A text block as tool call content."""
    return s.Content(content=s.TextContent(text=text))


def describe(block: s.ContentBlock) -> str:
    """One line about a non-text prompt block."""
    if isinstance(block, (s.ImageContent, s.AudioContent)):
        return f"Received {block.type} ({block.mime_type}, {len(block.data)} base64 chars)\n"
    if isinstance(block, s.ResourceLink):
        return f"Received a link to {block.uri}\n"
    if isinstance(block, s.EmbeddedResource):
        return f"Received the resource {block.resource.uri}\n"
    return "Received content\n"


def main() -> None:
    parser = argparse.ArgumentParser(description="A scripted ACP agent over stdio")
    parser.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="demo-agent %(levelname)s %(message)s")
    anyio.run(lambda: run_agent_stdio(DemoAgent(), max_message_size=args.max_message_size))


if __name__ == "__main__":
    main()
