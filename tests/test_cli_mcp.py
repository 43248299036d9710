"""``rpcweave mcp``: against real servers — our file server and a server written with the
official ``mcp`` SDK over stdio, ``rpcweave mcp serve`` over Streamable HTTP and HTTP+SSE —
and the error paths: each a one-line message on stderr and a non-zero exit."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "fixtures"))

from cli_helpers import (
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
        "tools/call",
        None,
    ]
    assert "P0->>P1: tools/call [2] read_file" in diagram
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
    assert code == 0 and [t["name"] for t in json.loads(out)] == ["shout", "explode"], err
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
    assert_one_line_error(err, "is not an mcp_layer.MCPServer")
