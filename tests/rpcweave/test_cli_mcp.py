"""``rpcweave mcp``: against real servers — our file server and a server written with the
official ``mcp`` SDK over stdio, ``rpcweave mcp serve`` over Streamable HTTP and HTTP+SSE —
and the error paths: each a one-line message on stderr and a non-zero exit.

Tests the private units `rpcweave._cli_common` and `_cli_mcp.check_arguments` on purpose:
the CLI has no Python API, and its argument checks are checked one by one.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures.cli_helpers import (
    EXAMPLES,
    PY,
    ROOT,
    TARGETS,
    CLIServer,
    assert_one_line_error,
    free_port,
    run_cli,
    serving,
    trace_files,
)

from rpcweave._cli_common import load_object

FILE_SERVER = str(EXAMPLES / "mcp" / "file_server.py")
OFFICIAL = str(ROOT / "tests" / "fixtures" / "official_mcp_server.py")

Capture = pytest.CaptureFixture[str]
SLOW = "import sys; sys.stdin.read()"  # answers nothing until stdin closes


@pytest.fixture(scope="module")
def http_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``rpcweave mcp serve ... --http --port 0 --trace``: its URL; on teardown it must stop on
    SIGINT with status 0 and leave its trace drawn."""
    trace = tmp_path_factory.mktemp("mcp-serve") / "server.jsonl"
    server = CLIServer(
        "mcp", "serve", f"{TARGETS}:mcp_server", "--http", "--port", "0", "--trace", str(trace)
    )
    yield server.url
    status, err = server.stop()
    assert status == 0, err
    recording, diagram, _ = trace_files(trace)
    assert '"method":"tools/call"' in recording.replace(" ", "")
    assert "participant P0 as client" in diagram and "participant P1 as server" in diagram


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "hello.txt").write_text("Hello, MCP!\n", encoding="utf-8")
    return tmp_path


def test_tools_of_a_stdio_server(root: Path, capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "mcp", "tools", "--", PY, FILE_SERVER, str(root))
    assert code == 0, err
    assert out.splitlines()[:2] == [
        "read_file  Read a text file under the server's root directory.",
        "    path: string",
    ]


def test_call_over_stdio_with_a_trace(root: Path, tmp_path: Path, capsys: Capture) -> None:
    trace = tmp_path / "out" / "call.jsonl"
    code, out, err = run_cli(
        capsys,
        "mcp",
        "call",
        "read_file",
        "path=hello.txt",
        "--trace",
        str(trace),
        "--",
        PY,
        FILE_SERVER,
        str(root),
    )
    assert code == 0, err
    assert out == "Hello, MCP!\n\n"
    recording, diagram, page = trace_files(trace)
    assert [json.loads(line)["message"].get("method") for line in recording.splitlines()] == [
        "initialize",
        None,
        "notifications/initialized",
        "tools/list",  # the tool and its arguments are checked before the call
        None,
        "tools/call",
        None,
    ]
    assert "P0->>P1: tools/call [3] read_file" in diagram
    assert "Hello, MCP!" in page
    assert f"trace: {trace}" in err


def test_a_tool_error_is_one_line_and_status_1(root: Path, capsys: Capture) -> None:
    code, out, err = run_cli(
        capsys, "mcp", "call", "read_file", "path=missing.txt", "--", PY, FILE_SERVER, str(root)
    )
    assert code == 1 and out == ""
    assert_one_line_error(err, "tool 'read_file' failed", "missing.txt")


def test_official_sdk_server_over_stdio(capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "mcp", "call", "add", "a=2", "b=40", "--", PY, OFFICIAL)
    assert (code, out) == (0, "42\n"), err


@pytest.fixture(scope="module")
def official_http() -> Iterator[str]:
    """A server built with the official ``mcp`` SDK, over Streamable HTTP on 127.0.0.1."""
    official = load_object(f"{OFFICIAL}:build")()
    with serving(official.streamable_http_app()) as base:
        yield f"{base}/mcp"


def test_official_sdk_server_over_http(official_http: str, capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "mcp", "tools", official_http)
    assert code == 0, err
    assert "add  Add two integers." in out and "    a: integer, b: integer" in out
    code, out, err = run_cli(
        capsys, "mcp", "call", official_http, "weather", "city=Paris", "--json"
    )
    assert code == 0, err
    assert json.loads(out)["structuredContent"] == {"city": "Paris", "temperature": 21.5}
    code, _, err = run_cli(capsys, "mcp", "call", official_http, "fail", "reason=kaboom")
    assert code == 1
    assert_one_line_error(err, "tool 'fail' failed")
    code, out, err = run_cli(capsys, "mcp", "resources", official_http)
    assert code == 0 and "test://static  static (text/plain)" in out, err
    assert "test://items/{item_id}  item (template)" in out
    code, out, err = run_cli(capsys, "mcp", "read", official_http, "test://static")
    assert code == 0 and out.strip(), err
    code, out, err = run_cli(capsys, "mcp", "prompts", official_http)
    assert code == 0 and out.startswith("greet(name, style?)"), err
    code, _, err = run_cli(capsys, "mcp", "read", official_http, "test://nothing")
    assert code == 1
    assert_one_line_error(err)


def test_streamable_http(http_server: str, capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "mcp", "tools", http_server)
    assert code == 0, err
    assert "shout  Upper-case the text." in out and "explode  Always fails." in out
    code, out, err = run_cli(capsys, "mcp", "call", http_server, "shout", "text=hello")
    assert (code, out) == (0, "HELLO\n"), err
    code, out, err = run_cli(capsys, "mcp", "tools", "--json", http_server)
    names = [t["name"] for t in json.loads(out)]
    assert code == 0 and names == ["shout", "explode", "deploy", "login"], err
    code, out, err = run_cli(capsys, "mcp", "resources", http_server)
    assert (code, out) == (0, "(no resources)\n"), err


def test_http_sse(http_server: str, capsys: Capture) -> None:
    sse = http_server.removesuffix("/mcp") + "/sse"
    code, out, err = run_cli(capsys, "mcp", "call", "--sse", sse, "shout", "text=sse")
    assert (code, out) == (0, "SSE\n"), err


def test_http_tool_error(http_server: str, capsys: Capture) -> None:
    code, _, err = run_cli(capsys, "mcp", "call", http_server, "explode")
    assert code == 1
    assert_one_line_error(err, "tool 'explode' failed")


def test_unreachable_url(capsys: Capture) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    for extra in ([], ["--sse"]):
        code, _, err = run_cli(capsys, "mcp", "tools", *extra, url)
        assert code == 1
        assert_one_line_error(err, f"no MCP server at {url}")


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ([PY, "-c", "print('hello')"], "did not start an MCP server"),
        ([PY, "-c", "import sys; sys.exit('broken')"], "exit code 1; stderr: broken"),
        (["cat"], "did not start an MCP server: Method not found: initialize"),
        (["/no/such/command"], "cannot start '/no/such/command'"),
    ],
    ids=["prints-text", "exits", "echoes", "missing"],
)
def test_a_command_that_is_not_an_mcp_server(
    command: list[str], fragment: str, capsys: Capture
) -> None:
    code, out, err = run_cli(capsys, "mcp", "tools", "--timeout", "10", "--", *command)
    assert code == 1 and out == ""
    assert_one_line_error(err, fragment)


def test_a_silent_command_times_out(capsys: Capture) -> None:
    code, _, err = run_cli(capsys, "mcp", "tools", "--timeout", "0.5", "--", PY, "-c", SLOW)
    assert code == 1
    assert_one_line_error(err, "did not start an MCP server", "no answer in time")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tools", "python", "server.py"], "'python' is not an http(s) URL"),
        (["tools"], "no server given"),
        (["call", "http://127.0.0.1:1/mcp"], "missing argument: TOOL"),
        (["read", "http://127.0.0.1:1/mcp", "a", "b"], "read takes one URI"),
        (["tools", "http://127.0.0.1:1/mcp", "--", "python"], "give either a URL or a command"),
        (["serve", f"{TARGETS}:mcp_server", "--", "python"], "serve takes no command after --"),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: Capture) -> None:
    code, _, err = run_cli(capsys, "mcp", *argv)
    assert code == 2
    assert f"rpcweave: error: {message}" in err


def test_serve_over_stdio_with_the_cli_as_client(capsys: Capture) -> None:
    serve = [PY, "-m", "rpcweave", "mcp", "serve", f"{TARGETS}:mcp_server"]
    code, out, err = run_cli(capsys, "mcp", "call", "shout", "text=stdio", "--", *serve)
    assert (code, out) == (0, "STDIO\n"), err


def test_serve_refuses_what_is_not_a_server(capsys: Capture) -> None:
    code, _, err = run_cli(capsys, "mcp", "serve", f"{TARGETS}:STOP_REASONS")
    assert code == 1
    assert_one_line_error(err, "STOP_REASONS is a tuple; mcp serve accepts an mcp_layer.MCPServer")


# -- the errors a newcomer hits (issue #21) -------------------------------------------------


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port this test holds (bound and listening) on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_serve_on_a_port_in_use_names_it_with_a_hint(taken_port: int, capsys: Capture) -> None:
    code, out, err = run_cli(
        capsys, "mcp", "serve", f"{TARGETS}:mcp_server", "--http", "--port", str(taken_port)
    )
    assert code == 1 and out == ""
    assert_one_line_error(
        err,
        f"cannot listen on 127.0.0.1:{taken_port}: address already in use",
        "--port 0 picks a free port",
    )


def test_serve_port_0_prints_the_port_it_listens_on(http_server: str, capsys: Capture) -> None:
    match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)/mcp", http_server)
    assert match is not None and int(match.group(1)) > 0, http_server
    code, out, err = run_cli(capsys, "mcp", "tools", http_server)  # the printed port answers
    assert code == 0 and out.startswith("shout  "), err


def test_an_unknown_tool_lists_the_servers_tools(http_server: str, capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "mcp", "call", http_server, "nope")
    assert code == 1 and out == ""
    assert_one_line_error(
        err, "no tool 'nope' on this server; its tools: shout, explode, deploy, login"
    )


def test_many_tools_are_clipped_in_the_unknown_tool_error() -> None:
    from mcp_layer.types import Tool
    from rpcweave._cli_common import CLIError
    from rpcweave._cli_mcp import check_arguments

    tools = [Tool(name=f"t{i}", input_schema={"type": "object"}) for i in range(30)]
    with pytest.raises(CLIError) as caught:
        check_arguments(tools, "nope", {}, extra=False)
    assert caught.value.message.endswith("t10, t11, … (18 more: rpcweave mcp tools lists them)"), (
        caught.value.message
    )


def test_an_undeclared_argument_is_refused_before_the_call(
    http_server: str, capsys: Capture
) -> None:
    code, out, err = run_cli(capsys, "mcp", "call", http_server, "shout", "text=hi", "c=4")
    assert code == 2 and out == ""
    assert "rpcweave: error: tool 'shout' takes no argument 'c'; its arguments: text: string" in (
        err
    )
    assert "--allow-extra" in err
    code, out, err = run_cli(
        capsys, "mcp", "call", http_server, "shout", "text=hi", "c=4", "--allow-extra"
    )
    assert (code, out) == (0, "HI\n"), err


def test_a_free_form_schema_takes_any_argument() -> None:
    from mcp_layer.types import Tool
    from rpcweave._cli_mcp import check_arguments

    open_schemas = [
        {"type": "object"},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": True},
        {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "string"}},
    ]
    for schema in open_schemas:
        check_arguments([Tool(name="t", input_schema=schema)], "t", {"zz": 1}, extra=False)


def test_a_missing_required_argument_is_named_before_the_call(
    http_server: str, capsys: Capture
) -> None:
    code, out, err = run_cli(capsys, "mcp", "call", http_server, "shout")
    assert code == 2 and out == ""
    assert "rpcweave: error: tool 'shout' needs argument 'text'; its arguments: text: string" in (
        err
    )


@pytest.mark.parametrize(
    ("attribute", "what"),
    [
        ("plain", "is a function taking (x)"),
        ("make_number", "is a function taking () returning an int"),
    ],
)
def test_serve_says_what_it_accepts_for_a_wrong_target(
    attribute: str, what: str, capsys: Capture
) -> None:
    code, _, err = run_cli(capsys, "mcp", "serve", f"{TARGETS}:{attribute}")
    assert code == 1
    assert_one_line_error(
        err,
        f"{TARGETS}:{attribute} {what}; mcp serve accepts an mcp_layer.MCPServer or a "
        "function taking no arguments that returns one",
    )


# -- elicitation on the terminal -------------------------------------------------------------


class Terminal:
    """``rpcweave ARGV`` on a pseudo-terminal: every read waits at most until ``deadline``."""

    def __init__(self, *argv: str, seconds: float = 30.0) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [PY, "-m", "rpcweave", *argv], stdin=slave, stdout=slave, stderr=slave, cwd=ROOT
        )
        os.close(slave)
        self.deadline = time.monotonic() + seconds
        self.output = ""
        self.seen = 0  # where the next expected text is looked for

    def _read(self) -> bool:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise AssertionError(f"no more output in time: {self.output!r}")
        ready, _, _ = select.select([self.master], [], [], remaining)
        if not ready:
            raise AssertionError(f"no more output in time: {self.output!r}")
        try:
            chunk = os.read(self.master, 4096)
        except OSError:  # EIO: the other side closed
            return False
        self.output += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        return bool(chunk)

    def expect(self, text: str) -> None:
        """Wait until ``text`` appears after what was expected before."""
        while text not in self.output[self.seen :]:
            if not self._read():
                raise AssertionError(f"{text!r} never came: {self.output!r}")
        self.seen += self.output[self.seen :].index(text) + len(text)

    def answer(self, prompt: str, line: str) -> None:
        self.expect(prompt)
        os.write(self.master, line.encode() + b"\n")

    def finish(self) -> tuple[int, str]:
        """Read to the end; (exit status, everything shown)."""
        while self._read():
            pass
        os.close(self.master)
        return self.process.wait(timeout=max(1.0, self.deadline - time.monotonic())), self.output


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_elicitation_is_answered_on_the_terminal(http_server: str, version: str) -> None:
    term = Terminal("mcp", "call", "--protocol-version", version, http_server, "deploy", "env=prod")
    term.expect("tool 'deploy' asks: Deploy to prod?")
    term.expect("  yes (boolean): really deploy\n")
    term.answer("  yes: ", "maybe")
    term.expect("! answer yes or no")
    term.answer("  yes: ", "y")
    term.expect("  replicas (integer, optional)\n")
    term.answer("  replicas [2]: ", "12")
    term.expect("! must be between 1 and 9")
    term.answer("  replicas [2]: ", "")  # the default
    term.expect("  region (choose one)\n")
    term.expect("1) eu  2) us")
    term.answer("  region: ", "")
    term.expect("! required")
    term.answer("  region: ", "2")
    term.expect("  note (string, optional): for the log\n")
    term.answer("  note: ", "-")  # skipped
    term.answer("send these answers? [Y]es / [n]o, decline / [c]ancel: ", "y")
    code, output = term.finish()
    assert code == 0, output
    assert "deployed region='us' replicas=2 yes=True\n" in output, output


def test_elicitation_declined_and_url_mode_cancelled_on_the_terminal(http_server: str) -> None:
    term = Terminal("mcp", "call", http_server, "deploy", "env=prod")
    term.answer("  yes: ", "n")
    term.answer("  replicas [2]: ", "3")
    term.answer("  region: ", "eu")
    term.answer("  note: ", "hello")
    term.answer("send these answers?", "n")
    code, output = term.finish()
    assert code == 0 and "not deployed (decline)\n" in output, output
    term = Terminal("mcp", "call", "--protocol-version", "2026-07-28", http_server, "login")
    term.expect("tool 'login' asks: Sign in")
    term.expect("open https://auth.example/login")
    term.answer("continue once done?", "c")
    code, output = term.finish()
    assert code == 0 and "login cancel\n" in output, output


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_elicitation_without_a_terminal_is_a_clear_error(
    http_server: str, version: str, capsys: Capture
) -> None:
    code, out, err = run_cli(
        capsys, "mcp", "call", "--protocol-version", version, http_server, "deploy", "env=prod"
    )
    assert code == 1 and out == ""
    assert_one_line_error(
        err,
        "tool 'deploy' asked for input (Deploy to prod? fields: yes (boolean), replicas "
        "(integer), region (choose one), note (string)) and there is no terminal to ask on",
    )


def test_the_2026_era_over_http_with_a_trace(
    http_server: str, tmp_path: Path, capsys: Capture
) -> None:
    trace = tmp_path / "modern.jsonl"
    code, out, err = run_cli(
        capsys,
        "mcp",
        "call",
        "--protocol-version",
        "2026-07-28",
        "--trace",
        str(trace),
        http_server,
        "shout",
        "text=modern",
    )
    assert (code, out) == (0, "MODERN\n"), err
    recording, _, _ = trace_files(trace)
    methods = [json.loads(line)["message"].get("method") for line in recording.splitlines()]
    assert methods[0] == "server/discover" and "initialize" not in methods, methods


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
def test_the_users_time_does_not_count_against_the_timeout(http_server: str, version: str) -> None:
    term = Terminal(
        "mcp",
        "call",
        "--timeout",
        "2",
        "--protocol-version",
        version,
        http_server,
        "deploy",
        "env=prod",
    )
    term.expect("  yes: ")
    time.sleep(3)  # the user thinks longer than --timeout (not a synchronisation)
    os.write(term.master, b"y\n")
    term.answer("  replicas [2]: ", "")
    term.answer("  region: ", "eu")
    term.answer("  note: ", "")
    term.answer("send these answers?", "y")
    code, output = term.finish()
    assert code == 0 and "deployed region='eu' replicas=2 yes=True\n" in output, output
