"""acp_layer's client side: `LocalClient` (workspace confinement, terminals, permission) and
`spawn_agent` with the demo agent as a real process (large and over-limit messages)."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp_fixtures.wire import (
    DEMO_AGENT,
    SchemaCheck,
    connected,
    load_demo_agent,
    requires_acp_schema,
)

from acp_layer import (
    Agent,
    LocalClient,
    OutputBuffer,
    OutsideWorkspace,
    ResourceNotFound,
    confine,
    spawn_agent,
)
from acp_layer import (
    schema as s,
)
from jsonrpc_core import InvalidParams, InvalidRequest

pytestmark = requires_acp_schema

demo = load_demo_agent()


# --- workspace confinement ------------------------------------------------------------------


def test_confine_accepts_paths_inside_and_refuses_escapes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (ws / "link_out").symlink_to(outside)
    (ws / "file_link").symlink_to(outside / "secret.txt")
    (ws / "link_in").symlink_to(ws / "sub")
    root = [str(ws)]
    assert confine(str(ws / "a.txt"), root) == ws.resolve() / "a.txt"
    assert confine(str(ws / "new" / "deep" / "b.txt"), root) == ws.resolve() / "new/deep/b.txt"
    assert confine(str(ws / "sub" / ".." / "c.txt"), root) == ws.resolve() / "c.txt"
    assert confine(str(ws / "link_in" / "d.txt"), root) == ws.resolve() / "sub" / "d.txt"
    assert confine(str(ws), root) == ws.resolve()
    for bad in (
        "relative.txt",
        str(ws / ".." / "outside" / "secret.txt"),
        str(outside / "secret.txt"),
        str(ws / "link_out" / "secret.txt"),
        str(ws / "link_out" / "new.txt"),
        str(ws / "file_link"),
        str(tmp_path / "ws_sibling" / "x"),
        "/etc/passwd",
    ):
        with pytest.raises(OutsideWorkspace) as info:
            confine(bad, root)
        assert info.value.code == -32602


class _FsAgent(Agent):
    """Runs file calls given as ``read PATH`` / ``write PATH TEXT`` and reports the errors."""

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        sid = params.session_id
        block = params.prompt[0]
        assert isinstance(block, s.TextContent)
        for line in block.text.splitlines():
            op, path, *rest = line.split(" ", 2)
            try:
                if op == "read":
                    text = await self.client.read_text_file(sid, path, line=2, limit=2)
                    await self.client.send_text(sid, f"ok {text!r}\n")
                else:
                    await self.client.write_text_file(sid, path, rest[0] if rest else "")
                    await self.client.send_text(sid, "ok\n")
            except (InvalidParams, ResourceNotFound) as exc:
                await self.client.send_text(sid, f"{exc.code} {exc.message}\n")
        return "end_turn"


@pytest.mark.anyio
async def test_local_client_files_stay_in_the_session_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "lines.txt").write_text("1\n2\n3\n4\n")
    (tmp_path / "secret.txt").write_text("secret")
    (ws / "escape").symlink_to(tmp_path)
    client = LocalClient()
    lines = [
        f"read {ws}/lines.txt",
        f"read {ws}/../secret.txt",
        f"read {ws}/escape/secret.txt",
        f"read {tmp_path}/secret.txt",
        "read lines.txt",
        f"read {ws}/missing.txt",
        f"read {ws}",
        f"write {ws}/out/new.txt hello",
        f"write {ws}/escape/evil.txt x",
        f"write {tmp_path}/evil.txt x",
    ]
    with anyio.fail_after(10):
        async with connected(_FsAgent(), client) as (conn, agent_check, client_check):
            sid = (await conn.new_session(str(ws))).session_id
            await conn.prompt(sid, "\n".join(lines))
    replies = [
        u.content.text.strip()
        for u in client.updates[sid]
        if isinstance(u, s.AgentMessageChunk) and isinstance(u.content, s.TextContent)
    ]
    assert replies[0] == "ok '2\\n3\\n'"
    for reply in replies[1:5]:
        assert (reply.startswith("-32602 ") and "outside the session's workspace" in reply) or (
            "must be absolute" in reply
        ), reply
    assert replies[5].startswith("-32002 ")
    assert replies[6].startswith("-32602 ") and "not a file" in replies[6]
    assert replies[7] == "ok"
    assert replies[8].startswith("-32602 ") and replies[9].startswith("-32602 ")
    assert (ws / "out" / "new.txt").read_text() == "hello"
    assert not (tmp_path / "evil.txt").exists()
    client_check.assert_valid()
    agent_check.assert_valid()


@pytest.mark.anyio
async def test_permission_denied_leaves_the_file_alone(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("original")
    client = LocalClient()  # rejects by default
    with anyio.fail_after(10):
        async with connected(demo.DemoAgent(), client) as (conn, agent_check, client_check):
            sid = (await conn.new_session(str(tmp_path))).session_id
            result = await conn.prompt(sid, "/write keep.txt changed\n/write new.txt x")
    assert result.stop_reason == "end_turn"
    assert (tmp_path / "keep.txt").read_text() == "original"
    assert not (tmp_path / "new.txt").exists()
    final = [u for u in client.updates[sid] if isinstance(u, s.ToolCallProgress)]
    assert [u.status for u in final] == ["failed", "failed"]
    assert final[0].content == [s.Content(content=s.TextContent(text="Permission denied"))]
    asked = client.permission_requests[0]
    assert [o.kind for o in asked.options] == ["allow_once", "reject_once"]
    assert client_check.sent() and not agent_check.sent("fs/write_text_file")
    answers = [m["result"] for m in client_check.sent() if "outcome" in m.get("result", {})]
    assert answers[0] == {"outcome": {"outcome": "selected", "optionId": "reject"}}
    client_check.assert_valid()
    agent_check.assert_valid()


@pytest.mark.anyio
async def test_a_relative_working_directory_is_refused_before_sending(tmp_path: Path) -> None:
    client = LocalClient()
    with anyio.fail_after(10):
        async with connected(demo.DemoAgent(), client) as (conn, _agent_check, client_check):
            with pytest.raises(ValueError, match="absolute"):
                await conn.new_session("relative/dir")
            assert not client_check.sent("session/new")
            sid = (await conn.new_session(str(tmp_path))).session_id
    assert sid


# --- terminals --------------------------------------------------------------------------------


def test_output_buffer_truncates_from_the_start_at_a_character_boundary() -> None:
    buffer = OutputBuffer(limit=8)
    buffer.append("aé€".encode())  # 1 + 2 + 3 bytes
    assert not buffer.truncated
    buffer.append("😀".encode())  # 4 more: 10 > 8, a 2-byte cut ends inside 'é': drop it all
    assert buffer.truncated
    assert buffer.text(final=True) == "€😀"
    assert len(buffer.data) == 7  # slightly less than the limit
    partial = OutputBuffer(limit=None)
    partial.append("x€".encode()[:-1])
    assert partial.text(final=False) == "x"  # the incomplete character is held back
    partial.append("€".encode()[-1:])
    assert partial.text(final=False) == "x€"
    assert not partial.truncated
    zero = OutputBuffer(limit=0)
    zero.append(b"abc")
    assert zero.text(final=True) == "" and zero.truncated


class _TerminalAgent(Agent):
    """Runs one terminal per prompt: ``limit|timeout|command...``; reports what it saw.

    A timeout written ``SECONDS+TEXT`` starts once the output shows TEXT.
    """

    def __init__(self) -> None:
        self.results: list[dict[str, Any]] = []
        self.terminal_ids: list[str] = []

    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        block = params.prompt[0]
        assert isinstance(block, s.TextContent)
        limit, timeout, *argv = block.text.split("|")
        terminal = await self.client.create_terminal(
            params.session_id,
            argv[0],
            argv[1:],
            output_byte_limit=int(limit) if limit else None,
            env={"ACP_TEST_VAR": "from-agent"},
        )
        self.terminal_ids.append(terminal.id)
        async with terminal:
            timeout, _, ready = timeout.partition("+")
            with anyio.fail_after(20):
                # Terminal output can only be polled (terminal/output).
                while ready not in (await terminal.output()).output:  # noqa: ASYNC110
                    await anyio.sleep(0.01)  # paces the poll (no event to wait on)
            status = None
            with anyio.move_on_after(float(timeout)):
                status = await terminal.wait_for_exit()
            killed = status is None
            if status is None:
                running = await terminal.output()
                await terminal.kill()
                status = await terminal.wait_for_exit()
                assert running.exit_status is None
            output = await terminal.output()
        self.results.append({"status": status, "output": output, "killed": killed})
        return "end_turn"


@pytest.mark.anyio
async def test_terminal_output_limit_env_and_exit_code(tmp_path: Path) -> None:
    agent = _TerminalAgent()
    script = "import os,sys; sys.stdout.write('é' * 50 + os.environ['ACP_TEST_VAR']); sys.exit(4)"
    client = LocalClient(commands="allow")
    with anyio.fail_after(20):
        async with connected(agent, client) as (conn, agent_check, client_check):
            sid = (await conn.new_session(str(tmp_path))).session_id
            await conn.prompt(sid, f"21|30|{sys.executable}|-c|{script}")
            await conn.prompt(sid, f"|30|{sys.executable}|-c|print('plain')")
    first, second = agent.results
    assert first["status"].exit_code == 4 and not first["killed"]
    assert first["output"].truncated
    text = first["output"].output
    assert text.endswith("from-agent") and len(text.encode()) <= 21
    assert text == ("é" * 50 + "from-agent")[-len(text) :]  # a clean suffix: no broken char
    assert first["output"].exit_status == s.TerminalExitStatus(exit_code=4)
    assert second["output"].output == "plain\n" and not second["output"].truncated
    client_check.assert_valid()
    agent_check.assert_valid()


@pytest.mark.anyio
async def test_a_released_terminal_keeps_its_output_for_display(tmp_path: Path) -> None:
    agent = _TerminalAgent()
    client = LocalClient(commands="allow")
    with anyio.fail_after(20):
        async with connected(agent, client) as (conn, _, _):
            sid = (await conn.new_session(str(tmp_path))).session_id
            await conn.prompt(sid, f"|30|{sys.executable}|-c|print('shown after release')")
    (terminal_id,) = agent.terminal_ids
    assert terminal_id not in client.terminals  # released: unusable for terminal/* calls
    assert client.displayed_output(terminal_id) == "shown after release\n"
    assert client.displayed_output("term_unknown") is None


@pytest.mark.anyio
async def test_terminal_that_never_exits_is_killed_with_its_children(tmp_path: Path) -> None:
    agent = _TerminalAgent()
    client = LocalClient(commands="allow")
    with anyio.fail_after(20):
        async with connected(agent, client) as (conn, agent_check, client_check):
            sid = (await conn.new_session(str(tmp_path))).session_id
            # A shell whose child would keep the output pipe open if only the shell died.
            await conn.prompt(sid, "|0.3+started|sh|-c|echo started; sleep 600; echo never")
            assert not client.terminals  # released
            cancel = agent_check.sent("$/cancel_request")[0]["params"]["requestId"]
            await client_check.wait_for(lambda c: c.answer_to(cancel) is not None)
    result = agent.results[0]
    assert result["killed"]
    assert result["status"].signal == "SIGKILL" and result["status"].exit_code is None
    assert result["output"].output == "started\n"
    # The abandoned wait was cancelled with $/cancel_request and answered -32800.
    cancelled = agent_check.sent("$/cancel_request")
    assert len(cancelled) == 1
    answer = client_check.answer_to(cancelled[0]["params"]["requestId"])
    assert answer is not None and answer["error"]["code"] == -32800
    client_check.assert_valid()
    agent_check.assert_valid()


class _BadTerminalAgent(Agent):
    async def prompt(self, params: s.PromptRequest) -> s.StopReason:
        sid = params.session_id
        for call in (
            lambda: self.client.peer.request(
                "terminal/output", {"sessionId": sid, "terminalId": "term_nope"}
            ),
            lambda: self.client.create_terminal(sid, "/nonexistent/command", ["arg"]),
            lambda: self.client.create_terminal(sid, "true", cwd="/"),
            lambda: self.client.peer.request(
                "terminal/output", {"sessionId": "sess_other", "terminalId": "term_nope"}
            ),
        ):
            try:
                await call()
            except (InvalidParams, ResourceNotFound) as exc:
                await self.client.send_text(sid, f"{exc.code} {exc.message}\n")
        return "end_turn"


@pytest.mark.anyio
async def test_unknown_terminal_bad_command_and_unknown_session_are_clean_errors(
    tmp_path: Path,
) -> None:
    client = LocalClient(commands="allow")
    with anyio.fail_after(10):
        async with connected(_BadTerminalAgent(), client) as (conn, _, client_check):
            sid = (await conn.new_session(str(tmp_path))).session_id
            assert (await conn.prompt(sid, "go")).stop_reason == "end_turn"
            assert (await conn.prompt(sid, "again")).stop_reason == "end_turn"
    replies = [
        u.content.text
        for u in client.updates[sid]
        if isinstance(u, s.AgentMessageChunk) and isinstance(u.content, s.TextContent)
    ]
    assert replies[0].startswith("-32002 ") and "term_nope" in replies[0]
    assert replies[1].startswith("-32602 ") and "cannot run '/nonexistent/command'" in replies[1]
    assert replies[2].startswith("-32602 ") and "outside the session's workspace" in replies[2]
    assert replies[3].startswith("-32002 ") and "sess_other" in replies[3]
    client_check.assert_valid()


@pytest.mark.anyio
async def test_spawn_agent_passes_the_full_environment_and_surfaces_stderr() -> None:
    script = (
        "import os, sys; "
        "sys.stderr.write(os.environ['ACP_EXTRA'] + ' ' + str('PATH' in os.environ) + chr(10)); "
        "sys.stderr.flush(); sys.stdin.read()"
    )
    lines: list[str] = []
    seen = anyio.Event()

    def on_stderr(line: str) -> None:
        lines.append(line)
        seen.set()

    with anyio.fail_after(20):
        async with spawn_agent(
            [sys.executable, "-c", script],
            LocalClient(),
            env={"ACP_EXTRA": "extra"},
            on_stderr=on_stderr,
            initialize=False,
        ) as conn:
            await seen.wait()
            assert conn.process is not None
            assert list(conn.process.stderr_tail) == ["extra True"]
    assert lines == ["extra True"]


# --- spawn_agent: a real agent process ------------------------------------------------------


@pytest.mark.anyio
async def test_spawned_demo_agent_large_and_over_limit_messages(tmp_path: Path) -> None:
    client = LocalClient(commands="allow")
    check = SchemaCheck()
    stderr: list[str] = []
    big_image = base64.b64encode(os.urandom(4 * 1024 * 1024)).decode()  # ~5.6 MB of base64
    huge_image = "A" * (20 * 1024 * 1024)
    with anyio.fail_after(60):
        async with spawn_agent(
            [sys.executable, str(DEMO_AGENT)],
            client,
            on_stderr=stderr.append,
            tap=check.tap(),
        ) as conn:
            assert conn.process is not None
            sid = (await conn.new_session(str(tmp_path))).session_id
            image = s.ImageContent(data=big_image, mime_type="image/png")
            result = await conn.prompt(sid, [s.TextContent(text="look"), image])
            assert result.stop_reason == "end_turn"
            with pytest.raises(InvalidRequest, match="exceeds the 16777216-byte size limit"):
                await conn.prompt(sid, [s.ImageContent(data=huge_image, mime_type="image/png")])
            # The connection lives on.
            assert (await conn.prompt(sid, "still here")).stop_reason == "end_turn"
            await conn.prompt(sid, "/run sh -c 'echo out; echo oops >&2'")
    chunks = [
        u.content.text
        for u in client.updates[sid]
        if isinstance(u, s.AgentMessageChunk) and isinstance(u.content, s.TextContent)
    ]
    assert chunks[:2] == ["look", f"Received image (image/png, {len(big_image)} base64 chars)\n"]
    assert chunks[-1] == "still here"
    run = [u for u in client.updates[sid] if isinstance(u, s.ToolCallProgress)][-1]
    assert run.content is not None and "out\noops\n" in run.content[1].content.text  # type: ignore[union-attr]
    check.assert_valid()
