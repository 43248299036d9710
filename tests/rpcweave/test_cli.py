"""The CLI's frame: help at every level, the console script, argument helpers, one-line
errors, the protocol words in trace labels, and the terminal renderers.

Tests the private units of `rpcweave` (`_cli_common`, `_render`, `_trace`, `_cli_elicit`)
on purpose: the CLI has no Python API, and these pieces are checked one by one.
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup, ExceptionGroup


from fixtures.cli_helpers import PY, ROOT, TARGETS, assert_one_line_error, run_cli

from acp_layer import schema as s
from jsonrpc_core import ConnectionClosed, InvalidParams, TransportError
from rpcweave.__main__ import main
from rpcweave._cli_common import (
    CLIError,
    error_message,
    load_object,
    parse_assignments,
    split_command,
)
from rpcweave._render import StatusLine, Style, permission_choice
from rpcweave._trace import annotate

COMMANDS = [
    [],
    ["mcp"],
    ["mcp", "tools"],
    ["mcp", "resources"],
    ["mcp", "prompts"],
    ["mcp", "call"],
    ["mcp", "read"],
    ["mcp", "serve"],
    ["acp"],
    ["acp", "run"],
    ["a2a"],
    ["a2a", "card"],
    ["a2a", "send"],
    ["a2a", "get"],
    ["a2a", "serve"],
    ["demo"],
]
LEAVES = [c for c in COMMANDS if len(c) == 2 or c == ["demo"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "rpcweave")
def test_help_at_every_level(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*command, "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: rpcweave")
    assert len(out.splitlines()) > 5
    if command in LEAVES:
        assert "--trace FILE" in out


def test_no_command_prints_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys)
    assert code == 2 and "COMMAND" in out


def test_unknown_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["nope"])
    assert exited.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_console_script_and_module_entry_points() -> None:
    script = Path(PY).parent / "rpcweave"
    assert script.exists(), "pip install -e . declares the rpcweave console script"
    for argv in ([str(script), "--version"], [PY, "-m", "rpcweave", "--version"]):
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert done.returncode == 0 and done.stdout.strip() == "rpcweave 0.1.0"


def test_split_command() -> None:
    assert split_command(["mcp", "tools", "--", "python", "s.py", "--", "x"]) == (
        ["mcp", "tools"],
        ["python", "s.py", "--", "x"],
    )
    assert split_command(["a2a", "card", "URL"]) == (["a2a", "card", "URL"], [])


def test_parse_assignments_reads_json_when_it_parses() -> None:
    assert parse_assignments(
        ["n=3", "x=2.5", "flag=true", "none=null", 'tags=[1,"a"]', "s=hello", "e=", "q=a=b"]
    ) == {
        "n": 3,
        "x": 2.5,
        "flag": True,
        "none": None,
        "tags": [1, "a"],
        "s": "hello",
        "e": "",
        "q": "a=b",
    }
    for bad in (["novalue"], ["=x"], ["a=1", "a=2"]):
        with pytest.raises(CLIError) as raised:
            parse_assignments(bad)
        assert raised.value.status == 2


def test_load_object_from_a_module_or_a_file() -> None:
    assert load_object("json:dumps").__name__ == "dumps"
    assert load_object("os.path:join.__name__") == "join"
    server = load_object(f"{TARGETS}:mcp_server")
    assert server.name == "cli-fixture"
    for target, message in [
        ("no_such_module_xyz:x", "cannot import"),
        ("json:nothing_here", "has no attribute"),
        ("missing/file.py:x", "no such file"),
        ("json", "expected MODULE:ATTRIBUTE"),
    ]:
        with pytest.raises(CLIError, match=message):
            load_object(target)


def test_error_messages_are_one_line() -> None:
    group = BaseExceptionGroup("outer", [ExceptionGroup("inner", [TransportError("broken\npipe")])])
    assert error_message(group) == "broken pipe"
    assert error_message(ConnectionClosed("Connection closed: process exited")) == (
        "the connection closed: process exited"
    )
    assert error_message(ConnectionClosed()) == "the connection closed"
    assert error_message(InvalidParams("Invalid params: x")) == "Invalid params: x (error -32602)"
    assert error_message(FileNotFoundError(2, "No such file", "f.txt")) == "No such file: f.txt"
    assert error_message(RuntimeError()) == "RuntimeError"


def test_usage_errors_show_the_usage_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "mcp", "call", "http://127.0.0.1:1/mcp", "tool", "oops")
    assert code == 2
    assert err.splitlines()[0].startswith("usage: rpcweave mcp call")
    assert err.splitlines()[1] == "rpcweave: error: expected KEY=VALUE, got 'oops'"


def test_annotate_names_the_protocol_step() -> None:
    assert annotate({"method": "tools/call", "id": 1, "params": {"name": "read_file"}}) == (
        "read_file"
    )
    assert annotate({"method": "resources/read", "id": 1, "params": {"uri": "x://y"}}) == "x://y"
    update = {"sessionUpdate": "tool_call", "toolCallId": "c"}
    assert annotate({"method": "session/update", "params": {"update": update}}) == "tool_call"
    assert annotate({"method": "fs/write_text_file", "params": {"path": "/w/a.txt"}}) == "a.txt"
    assert annotate({"id": 1, "result": {"stopReason": "end_turn"}}) == "end_turn"
    assert annotate({"id": 1, "result": {"content": [], "isError": True}}) == "isError"
    task = {"id": "t", "status": {"state": "TASK_STATE_INPUT_REQUIRED"}}
    assert annotate({"id": 1, "result": {"task": task}}) == "input-required"
    assert annotate({"id": 1, "result": task}) == "input-required"
    artifact = {"artifactUpdate": {"artifact": {"name": "a.py"}}}
    assert annotate({"http": "POST /hook", "body": artifact}) == "artifact a.py"
    assert annotate({"method": "ping", "id": 3}) is None
    assert annotate([1, 2]) is None


def test_permission_answers() -> None:
    options = [
        s.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
        s.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
    ]
    assert permission_choice("1", options) == "allow"
    assert permission_choice(" 2\n", options) == "no"
    assert permission_choice("Reject", options) == "no"
    assert permission_choice("y", options) == "allow"
    assert permission_choice("no", options) == "no"
    assert permission_choice("3", options) is None
    assert permission_choice("", options) is None


def test_status_line_plain_and_live() -> None:
    plain = io.StringIO()
    line = StatusLine(plain, live=False)
    for text in ("working", "working", "done"):
        line.set(text)
    assert plain.getvalue() == "working\ndone\n"
    live = io.StringIO()
    spinner = StatusLine(live, live=True)
    spinner.set("working")
    spinner.clear()
    assert live.getvalue().startswith("\r\x1b[2K") and "working" in live.getvalue()


def test_style_is_plain_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Style(io.StringIO()).red("x") == "x"
    assert Style(io.StringIO(), color=True).red("x") == "\x1b[31mx\x1b[0m"


def test_errors_never_show_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "mcp", "serve", "no_such_module_xyz:server")
    assert code == 1
    assert_one_line_error(err, "cannot import")


def _form(properties: dict[str, object], required: list[str]) -> object:
    from mcp_layer.types import ElicitRequestFormParams

    return ElicitRequestFormParams.model_validate(
        {
            "message": "Pick",
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        }
    )


@pytest.mark.anyio
async def test_terminal_elicitation_validates_each_field_kind() -> None:
    from rpcweave._cli_elicit import TerminalElicitation

    params = _form(
        {
            "mail": {"type": "string", "format": "email"},
            "size": {"type": "number", "minimum": 0.5},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}},
            "tier": {
                "type": "string",
                "oneOf": [{"const": "g", "title": "Gold"}, {"const": "s", "title": "Silver"}],
            },
            "when": {"type": "string", "format": "date", "default": "2026-01-01"},
        },
        ["mail", "size", "tags", "tier"],
    )
    typed = "nope\nme@example.org\n0.1\n2.5\nx\n1, c\nsilver\n\ny\n"
    out = io.StringIO()
    asker = TerminalElicitation("t", stdin=io.StringIO(typed), out=out, interactive=True)
    result = await asker(params)
    shown = out.getvalue()
    assert "! not a valid email" in shown and "! at least 0.5" in shown
    assert "! pick one of the numbers or values shown" in shown and "1) Gold  2) Silver" in shown
    assert result.action == "accept"
    assert result.content == {
        "mail": "me@example.org",
        "size": 2.5,
        "tags": ["a", "c"],
        "tier": "s",
        "when": "2026-01-01",
    }


@pytest.mark.anyio
async def test_terminal_elicitation_end_of_input_cancels() -> None:
    from rpcweave._cli_elicit import TerminalElicitation

    params = _form({"name": {"type": "string"}}, ["name"])
    asker = TerminalElicitation("t", stdin=io.StringIO(""), out=io.StringIO(), interactive=True)
    result = await asker(params)
    assert (result.action, result.content) == ("cancel", None)
