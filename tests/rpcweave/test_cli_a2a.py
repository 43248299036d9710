"""``rpcweave a2a``: against real agents — the coding agent served by ``rpcweave a2a serve``
(SQLite store, traced), agents served in process, and one built with the official
``a2a-sdk`` — and the error paths: one line on stderr, a non-zero exit.

Tests the private unit `rpcweave._cli_a2a.build_server` on purpose: the server ``rpcweave
a2a serve`` builds, served in process.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fixtures.cli_helpers import (
    EXAMPLES,
    ROOT,
    TARGETS,
    CLIServer,
    assert_one_line_error,
    free_port,
    run_cli,
    serving,
    signal,
    trace_files,
)

from rpcweave._cli_a2a import build_server

CODING_AGENT = f"{EXAMPLES / 'a2a' / 'coding_agent.py'}:CodingAgent"
TASK_ID = re.compile(r"^task (\S+) ", re.M)

Capture = pytest.CaptureFixture[str]


@pytest.fixture(scope="module")
def coding_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``rpcweave a2a serve`` of the coding agent; stopped by SIGTERM, status 0, trace drawn."""
    where = tmp_path_factory.mktemp("a2a-serve")
    trace = where / "agent.jsonl"
    server = CLIServer(
        "a2a",
        "serve",
        CODING_AGENT,
        "--port",
        "0",
        "--store",
        f"sqlite:{where / 'tasks.db'}",
        "--trace",
        str(trace),
    )
    yield server.url
    status, err = server.stop(signal.SIGTERM)
    assert status == 0, err
    recording, diagram, _ = trace_files(trace)
    assert "SendMessage" in recording and "participant P1 as agent" in diagram
    assert (where / "tasks.db").exists()


def test_card(coding_agent: str, capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "a2a", "card", coding_agent)
    assert code == 0, err
    assert out.startswith("Coding Agent 1.0.0: Writes small functions")
    assert "  capabilities: streaming, push notifications" in out
    assert f"  interface: JSONRPC 1.0 at {coding_agent}" in out
    code, out, err = run_cli(
        capsys, "a2a", "card", "--json", f"{coding_agent}/.well-known/agent-card.json"
    )
    assert code == 0 and json.loads(out)["name"] == "Coding Agent", err


def test_send_wait_answer_and_get(coding_agent: str, capsys: Capture) -> None:
    code, out, err = run_cli(
        capsys, "a2a", "send", coding_agent, "Write a function that reverses a string", "--wait"
    )
    assert code == 0, err
    match = TASK_ID.search(out)
    assert match is not None and " input-required" in out
    task_id = match.group(1)
    assert "Which language should I use" in out
    assert f"--task-id {task_id}" in err  # how to answer
    code, out, err = run_cli(
        capsys, "a2a", "send", coding_agent, "python", "--task-id", task_id, "--wait"
    )
    assert code == 0, err
    assert f"task {task_id} completed" in out
    assert "--- reverse.py ---" in out and "return text[::-1]" in out
    code, out, err = run_cli(capsys, "a2a", "get", coding_agent, task_id, "--history", "5")
    assert code == 0, err
    assert f"task {task_id} completed" in out and "[user] python" in out
    code, out, err = run_cli(capsys, "a2a", "get", coding_agent, task_id, "--json")
    assert json.loads(out)["status"]["state"] == "TASK_STATE_COMPLETED"


def test_send_returns_at_once_without_wait(coding_agent: str, capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "a2a", "send", coding_agent, "Write add in javascript")
    assert code == 0, err
    match = TASK_ID.search(out)
    assert match is not None
    state = out.split()[2]
    assert state in ("submitted", "working", "completed"), out
    if state != "completed":
        assert f"follow with: rpcweave a2a get {coding_agent} {match.group(1)}" in err


def test_stream_with_a_trace(coding_agent: str, tmp_path: Path, capsys: Capture) -> None:
    trace = tmp_path / "stream.jsonl"
    code, out, err = run_cli(
        capsys,
        "a2a",
        "send",
        coding_agent,
        "Write a function that adds, in python",
        "--stream",
        "--trace",
        str(trace),
    )
    assert code == 0, err
    lines = out.splitlines()
    assert re.match(r"task \S+ submitted", lines[0])
    assert "status working: Writing python code" in lines
    assert "artifact add.py (append) (last chunk)" in lines
    assert lines[-1] == "status completed: Wrote add.py and test_add.py"
    recording, diagram, page = trace_files(trace)
    assert "P0->>P1: GET /.well-known/agent-card.json" in diagram
    assert "P0->>P1: SendStreamingMessage [1]" in diagram
    assert "P1-->>P0: result [1] SendStreamingMessage completed" in diagram
    assert "Wrote add.py and test_add.py" in page
    assert len(recording.splitlines()) >= 8


def test_stream_as_json_lines(coding_agent: str, capsys: Capture) -> None:
    code, out, err = run_cli(
        capsys, "a2a", "send", coding_agent, "fibonacci in python", "--stream", "--json"
    )
    assert code == 0, err
    events = [json.loads(line) for line in out.splitlines()]
    assert next(iter(events[0])) == "task"
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


@pytest.fixture(scope="module")
def fixture_agents() -> Iterator[dict[str, str]]:
    """Agents from tests/fixtures/cli_targets.py, served in process (default cards)."""
    urls: dict[str, str] = {}
    failing = build_server(f"{TARGETS}:failing", None)
    replying = build_server(f"{TARGETS}:replying", None)
    with serving(failing.asgi_app()) as urls["failing"], serving(replying.asgi_app()) as url:
        urls["replying"] = url
        yield urls


def test_a_failed_task_is_an_error(fixture_agents: dict[str, str], capsys: Capture) -> None:
    for follow in ("--wait", "--stream"):
        code, out, err = run_cli(capsys, "a2a", "send", fixture_agents["failing"], "go", follow)
        assert code == 1
        assert "It broke" in out
        assert_one_line_error(err, "failed")


def test_a_message_reply(fixture_agents: dict[str, str], capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "a2a", "send", fixture_agents["replying"], "you")
    assert (code, out) == (0, "hello, you\n"), err
    code, out, err = run_cli(capsys, "a2a", "card", fixture_agents["replying"])
    assert out.startswith("replying 0.1.0: An agent that answers with a message, no task.")


def test_official_sdk_agent(capsys: Capture) -> None:
    from a2a_fixtures.sdk_server import build_app, set_base_url

    app, card = build_app()
    with serving(app) as url:
        set_base_url(card, url)
        code, out, err = run_cli(capsys, "a2a", "card", url)
        assert code == 0 and out.startswith("a2a-sdk echo agent 1.0.0"), err
        code, out, err = run_cli(capsys, "a2a", "send", url, "do it", "--wait")
        assert code == 0 and " completed" in out and "echo: do it" in out, err
        code, out, err = run_cli(capsys, "a2a", "send", url, "hello")
        assert (code, out) == (0, "hello back\n"), err
        code, out, err = run_cli(capsys, "a2a", "send", url, "stream it", "--stream")
        assert code == 0 and out.splitlines()[-1].startswith("status completed"), err


def test_official_sdk_agent_whose_card_names_no_protocol_version() -> None:
    """a2a-sdk's examples build cards without ``protocolVersion`` on the interfaces: read
    as 1.0, said so under -v (a subprocess: -v configures logging as a user's run does)."""
    from a2a_fixtures.sdk_server import build_app, set_base_url

    app, card = build_app(interface_versions=False)
    note = "names no protocolVersion; read as 1.0"
    with serving(app) as url:
        set_base_url(card, url)
        runs = {
            flag: subprocess.run(
                [sys.executable, "-m", "rpcweave", "a2a", "send", url, "hello", *flag],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=ROOT,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            for flag in ((), ("-v",))
        }
    for run in runs.values():
        assert run.returncode == 0 and run.stdout.splitlines()[-1] == "hello back", run.stderr
    assert note not in runs[()].stderr
    assert f"[a2a_layer.card] agent card: the JSONRPC interface at {url} {note}" in (
        runs[("-v",)].stderr
    )


async def _text_app(scope: Any, receive: Any, send: Any) -> None:
    """An HTTP server that is not an agent: 200 and some text for everything."""
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"hello, not a card"})


def test_error_paths(coding_agent: str, capsys: Capture) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    code, _, err = run_cli(capsys, "a2a", "card", url)
    assert code == 1
    assert_one_line_error(err, f"cannot reach {url}/.well-known/agent-card.json")
    code, _, err = run_cli(capsys, "a2a", "get", coding_agent, "no-such-task")
    assert code == 1
    assert_one_line_error(err, "Task no-such-task not found")
    code, _, err = run_cli(capsys, "a2a", "card", f"{coding_agent}/rest")
    assert code == 1
    assert_one_line_error(err, "no agent card at")
    with serving(_text_app) as text_url:
        code, _, err = run_cli(capsys, "a2a", "send", text_url, "hi")
    assert code == 1
    assert_one_line_error(err, "does not serve an A2A agent card")


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["card", "not-a-url"], 2, "'not-a-url' is not an http(s) URL"),
        (["serve", f"{TARGETS}:STOP_REASONS"], 1, "STOP_REASONS is a tuple; a2a serve accepts"),
        (["serve", CODING_AGENT, "--store", "redis:x"], 2, "--store: expected sqlite:PATH"),
        (["card", "http://127.0.0.1:1", "--", "x"], 2, "a2a commands take no command after --"),
    ],
)
def test_usage_and_target_errors(
    argv: list[str], status: int, message: str, capsys: Capture
) -> None:
    code, _, err = run_cli(capsys, "a2a", *argv)
    assert code == status
    assert "rpcweave: error: " in err and message in err


# -- the errors a newcomer hits (issue #21) -------------------------------------------------


def test_serve_on_a_port_in_use_names_it_with_a_hint(capsys: Capture) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = run_cli(capsys, "a2a", "serve", f"{TARGETS}:replying", "--port", str(port))
    assert code == 1 and out == ""
    assert_one_line_error(
        err,
        f"cannot listen on 127.0.0.1:{port}: address already in use",
        "--port 0 picks a free port",
    )


def test_serve_port_0_prints_the_port_it_listens_on(capsys: Capture) -> None:
    server = CLIServer("a2a", "serve", f"{TARGETS}:replying", "--port", "0")
    try:
        match = re.fullmatch(r"http://127\.0\.0\.1:(\d+)", server.url)
        assert match is not None and int(match.group(1)) > 0, server.url
        code, out, err = run_cli(capsys, "a2a", "send", server.url, "there")
        assert (code, out) == (0, "hello, there\n"), err
    finally:
        status, err = server.stop()
    assert status == 0, err


@pytest.mark.parametrize(
    ("attribute", "what"),
    [
        ("plain", "is a function taking (x)"),
        ("wrong_agent", "is an async function taking (x)"),
        ("make_number", "is a function taking () returning an int"),
    ],
)
def test_serve_says_what_it_accepts_for_a_wrong_target(
    attribute: str, what: str, capsys: Capture
) -> None:
    code, _, err = run_cli(capsys, "a2a", "serve", f"{TARGETS}:{attribute}")
    assert code == 1
    assert_one_line_error(
        err,
        f"{TARGETS}:{attribute} {what}; a2a serve accepts an A2A agent function "
        "`async def agent(context, updater)`, an a2a_layer.AgentExecutor",
    )


def test_send_wait_prints_each_status_once_off_a_terminal(
    coding_agent: str, capsys: Capture
) -> None:
    code, out, err = run_cli(capsys, "a2a", "send", coding_agent, "Write sub in python", "--wait")
    assert code == 0, err
    match = TASK_ID.search(out)
    assert match is not None, out
    task_id = match.group(1)
    assert out.splitlines().count(f"task {task_id} completed") == 1, out
    code, out, err = run_cli(
        capsys, "a2a", "send", coding_agent, "Write a function that reverses a string", "--wait"
    )
    assert code == 0, err
    match = TASK_ID.search(out)
    assert match is not None, out
    assert out.splitlines().count(f"task {match.group(1)} input-required") == 1, out
