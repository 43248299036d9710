"""``rpcweave acp run --auth`` and ``rpcweave acp auth``: logging in to agents that need it,
written with the official SDKs (tests/acp_fixtures/py_sdk_auth_agent.py, node_auth_agent.mjs),
and a JSON-RPC error's ``data`` shown under the error line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from acp_fixtures.wire import FIXTURES, requires_acp_schema
from fixtures.cli_helpers import PY, ROOT, run_cli, run_on_a_terminal
from test_acp_interop_node import node  # noqa: F401  (the fixture)

pytestmark = requires_acp_schema

PY_AGENT = [PY, str(FIXTURES / "py_sdk_auth_agent.py")]
NODE_AGENT = FIXTURES / "node_auth_agent.mjs"

Capture = pytest.CaptureFixture[str]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME for the agents (their login state lives there); no key set."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("FIXTURE_API_KEY", raising=False)
    return tmp_path


def error_lines(err: str) -> list[str]:
    assert "Traceback" not in err, err
    return [line for line in err.splitlines() if line.strip()]


def test_auth_required_lists_the_methods_and_how_to_use_them(home: Path, capsys: Capture) -> None:
    code, out, err = run_cli(
        capsys, "acp", "run", "--cwd", str(home), "--prompt", "whoami", "--", *PY_AGENT
    )
    assert code == 1
    assert out == ""
    assert error_lines(err) == [
        "py-sdk-auth-agent 1 asks you to log in. It offers:",
        "  agent-login  Agent login: d1",
        "               --auth agent-login (the agent logs you in)",
        "  env-key      Fixture API key: Use a key from FIXTURE_API_KEY",
        "               --auth env-key (set FIXTURE_API_KEY, or type it when asked; "
        "get one at http://127.0.0.1:9/keys)",
        "rpcweave: error: Authentication required (error -32000): run again with --auth METHOD_ID",
    ]


def test_auth_required_from_a_prompt_lists_the_methods(
    home: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXTURE_GATE", "prompt")
    code, out, err = run_cli(
        capsys, "acp", "run", "--cwd", str(home), "--prompt", "hi", "--", *PY_AGENT
    )
    assert code == 1
    assert out.startswith("(connected to py-sdk-auth-agent 1; session sess_auth_1")
    lines = error_lines(err)
    assert lines[0] == "py-sdk-auth-agent 1 asks you to log in. It offers:"
    assert lines[-1].startswith("rpcweave: error: Authentication required (error -32000)")


def test_acp_auth_shows_the_methods_without_a_session(home: Path, capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "acp", "auth", "--", *PY_AGENT)
    assert code == 0, err
    assert out.splitlines() == [
        "py-sdk-auth-agent 1 offers 2 login method(s):",
        "  agent-login  Agent login: d1",
        "               --auth agent-login (the agent logs you in)",
        "  env-key      Fixture API key: Use a key from FIXTURE_API_KEY",
        "               --auth env-key (set FIXTURE_API_KEY, or type it when asked; "
        "get one at http://127.0.0.1:9/keys)",
        "logout: not offered",
        "(terminal logins are offered only when rpcweave runs on a terminal)",
    ]
    assert (home / "agent.log").read_text() == "start key=no\n"


def test_auth_agent_method(home: Path, capsys: Capture) -> None:
    code, out, err = run_cli(
        capsys, "acp", "run", "--auth", "agent-login", "--cwd", str(home),
        "--prompt", "whoami", "--", *PY_AGENT,
    )  # fmt: skip
    assert code == 0, err
    assert "logged in with agent-login" in out.splitlines()


def test_auth_env_var_method_from_the_environment(
    home: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FIXTURE_API_KEY", "k-env")
    code, out, err = run_cli(
        capsys, "acp", "run", "--auth", "env-key", "--cwd", str(home),
        "--prompt", "whoami", "--", *PY_AGENT,
    )  # fmt: skip
    assert code == 0, err
    assert "logged in with env-key (key k-env)" in out.splitlines()


def test_auth_env_var_method_without_the_variable_off_a_terminal(
    home: Path, capsys: Capture
) -> None:
    code, out, err = run_cli(
        capsys, "acp", "run", "--auth", "env-key", "--cwd", str(home),
        "--prompt", "whoami", "--", *PY_AGENT,
    )  # fmt: skip
    assert (code, out) == (1, "")
    assert error_lines(err) == [
        "rpcweave: error: login failed: login method 'env-key' needs the environment "
        "variable FIXTURE_API_KEY: set it, or run where you can be asked for it"
    ]


def test_an_unknown_auth_method_lists_the_offered_ones(home: Path, capsys: Capture) -> None:
    code, _, err = run_cli(capsys, "acp", "run", "--auth", "nope", "--", *PY_AGENT)
    assert code == 1
    lines = error_lines(err)
    assert lines[0] == "The agent offers:"
    assert "  agent-login  Agent login: d1" in lines
    assert lines[-1] == "rpcweave: error: no login method 'nope': pick one of the above"


def test_error_data_is_shown_on_one_line_under_the_error(home: Path, capsys: Capture) -> None:
    code, out, err = run_cli(
        capsys, "acp", "run", "--auth", "agent-login", "--cwd", str(home),
        "--prompt", "fail", "--", *PY_AGENT,
    )  # fmt: skip
    assert code == 1
    assert out.startswith("(connected to py-sdk-auth-agent 1;")
    assert error_lines(err) == [
        "rpcweave: error: Internal error (error -32603)",
        "  detail: the backend said no: quota exhausted; retry in 60 s",
    ]


def test_node_agent_login_logout_and_error_data(
    node: str,  # noqa: F811
    home: Path,
    capsys: Capture,
) -> None:
    agent = [node, str(NODE_AGENT)]
    code, out, err = run_cli(capsys, "acp", "auth", "--", *agent)
    assert code == 0, err
    assert out.splitlines()[:3] == [
        "node-auth-agent 1 offers 1 login method(s):",
        "  node-login  Node login: The agent logs you in",
        "              --auth node-login (the agent logs you in)",
    ]
    assert "logout: offered (--logout)" in out.splitlines()
    code, out, err = run_cli(capsys, "acp", "auth", "--logout", "--", *agent)
    assert (code, out, err) == (0, "(logged out of node-auth-agent 1)\n", "")
    code, out, err = run_cli(
        capsys, "acp", "run", "--auth", "node-login", "--cwd", str(home),
        "--prompt", "whoami", "--prompt", "fail", "--", *agent,
    )  # fmt: skip
    assert code == 1
    assert "logged in with node-login" in out.splitlines()
    assert error_lines(err) == [
        "rpcweave: error: Internal error (error -32603)",
        "  detail: the node backend is down; try later",
    ]


# -- terminal logins, on a pseudo-terminal -----------------------------------------------------


def on_a_tty(argv: list[str], home: Path, answers: dict[bytes, bytes]) -> tuple[int, str]:
    """Run ``argv`` on a pseudo-terminal with ``home`` as HOME and cwd; type each answer
    once its prompt shows, in order."""
    env = {
        "PYTHONPATH": str(ROOT),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "NO_COLOR": "1",
        "TERM": "dumb",
    }
    return run_on_a_terminal(argv, home, env, answers)


RPCWEAVE = [PY, "-m", "rpcweave"]


def test_terminal_login_is_handed_the_terminal(home: Path) -> None:
    code, shown = on_a_tty(
        [*RPCWEAVE, "acp", "run", "--auth", "terminal-login", "--prompt", "whoami", "--",
         *PY_AGENT],
        home,
        {b"type your token: ": b"tok-tty\n"},
    )  # fmt: skip
    assert code == 0, shown
    assert f"(logging in: running {' '.join(PY_AGENT)} --login)" in shown
    assert "fixture login: logged in" in shown
    assert "(the login ended with exit status 0)" in shown
    assert "logged in with terminal-login (token tok-tty)" in shown
    assert (home / ".fixture-auth" / "token").read_text() == "tok-tty"
    assert "Traceback" not in shown


def test_a_failed_terminal_login_fails_the_run(home: Path) -> None:
    code, shown = on_a_tty(
        [*RPCWEAVE, "acp", "run", "--auth", "terminal-login", "--prompt", "whoami", "--",
         *PY_AGENT],
        home,
        {b"type your token: ": b"\n"},
    )  # fmt: skip
    assert code == 1, shown
    assert "(the login ended with exit status 1)" in shown
    assert "rpcweave: error: login failed: the login (" in shown
    assert "ended with exit status 1" in shown
    assert "Traceback" not in shown


def test_acp_auth_on_a_terminal_lists_the_terminal_method(home: Path) -> None:
    code, shown = on_a_tty([*RPCWEAVE, "acp", "auth", "--", *PY_AGENT], home, {})
    assert code == 0, shown
    assert "  terminal-login  Terminal login: Log in on the terminal" in shown
    assert f"--auth terminal-login (runs `{' '.join(PY_AGENT)} --login` in this terminal)" in shown


def test_env_var_value_is_asked_without_echo_on_a_terminal(home: Path) -> None:
    code, shown = on_a_tty(
        [*RPCWEAVE, "acp", "run", "--auth", "env-key", "--prompt", "whoami", "--", *PY_AGENT],
        home,
        {b"API key for Fixture API key (FIXTURE_API_KEY): ": b"s3cret-key\n"},
    )
    assert code == 0, shown
    assert "logged in with env-key (key s3cret-key)" in shown
    assert shown.count("s3cret-key") == 1  # typed without echo: only the agent's answer shows
    assert (home / "agent.log").read_text() == "start key=no\nstart key=yes\n"


def test_node_terminal_login_on_a_terminal(node: str, home: Path) -> None:  # noqa: F811
    agent = [node, str(NODE_AGENT)]
    code, shown = on_a_tty(
        [*RPCWEAVE, "acp", "auth", "--auth", "node-terminal", "--", *agent],
        home,
        {b"type your token: ": b"node-tty\n"},
    )
    assert code == 0, shown
    assert "(logged in to node-auth-agent 1 with node-terminal)" in shown
    assert (home / ".node-fixture-token").read_text() == "node-tty"
