"""``rpcweave acp run``: a terminal client for real agents — our demo agent and a fixture
agent choosing its stop reason — with permission by --yes or by the person at the prompt
(stdin), file access and terminals in the working directory, and the error paths."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.cli_helpers import (
    EXAMPLES,
    PY,
    ROOT,
    TARGETS,
    assert_one_line_error,
    run_cli,
    run_on_a_terminal,
    trace_files,
)

DEMO_AGENT = [PY, str(EXAMPLES / "acp" / "demo_agent.py")]
STOP_AGENT = [PY, str(TARGETS), "acp"]

Capture = pytest.CaptureFixture[str]


def test_prompts_with_yes(tmp_path: Path, capsys: Capture) -> None:
    trace = tmp_path / "trace" / "acp.jsonl"
    code, out, err = run_cli(
        capsys,
        "acp",
        "run",
        "--yes",
        "--cwd",
        str(tmp_path),
        "--trace",
        str(trace),
        "--prompt",
        "/write notes/a.txt hello there\nDone.",
        "--prompt",
        "/plan",
        "--prompt",
        "/run --timeout 20 sh -c 'echo from-the-terminal'",
        "--",
        *DEMO_AGENT,
    )
    assert code == 0, err
    assert (tmp_path / "notes" / "a.txt").read_text(encoding="utf-8") == "hello there"
    lines = out.splitlines()
    assert lines[0].startswith("(connected to Demo agent 0.1.0; session sess_")
    assert f"⚙ Write {tmp_path}/notes/a.txt [edit] pending" in lines
    assert "    +hello there" in lines  # the diff
    assert f"  ↳ Write {tmp_path}/notes/a.txt completed" in lines
    assert "Done." in lines  # the agent's message text
    assert "  [~] Do the work (medium)" in lines  # the plan
    assert any("│ from-the-terminal" in line for line in lines)  # terminal output
    assert lines.count("[turn ended: end_turn]") == 3
    assert "(granted: --yes → allow)" in err
    ran = f"(granted: --yes → run `sh -c 'echo from-the-terminal'` in {tmp_path.resolve()})"
    assert ran in err
    recording, diagram, _ = trace_files(trace)
    methods = [json.loads(line)["message"].get("method") for line in recording.splitlines()]
    assert methods.count("session/prompt") == 3
    assert "fs/write_text_file" in methods and "terminal/create" in methods
    assert "P1->>P0: session/request_permission [2]" in diagram


@pytest.mark.parametrize(("answer", "written"), [("n\n", False), ("1\n", True), ("", False)])
def test_permission_is_asked_at_the_prompt(
    answer: str, written: bool, tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(answer))
    code, out, err = run_cli(
        capsys,
        "acp",
        "run",
        "--cwd",
        str(tmp_path),
        "--prompt",
        "/write b.txt x",
        "--",
        *DEMO_AGENT,
    )
    assert code == 0, err
    assert "? The agent asks permission: Write" in err and "1) Allow (allow_once)" in err
    assert (tmp_path / "b.txt").exists() is written
    assert ("Permission denied" in out) is not written
    if not answer:
        assert "(no answer: rejected → reject)" in err


def test_exit_status_follows_the_stop_reasons(capsys: Capture) -> None:
    code, out, err = run_cli(capsys, "acp", "run", "--prompt", "hello", "--", *STOP_AGENT)
    assert code == 0, err
    assert "(thinking) considering" in out and "you said hello" in out
    assert "  [~] Answer (high)" in out
    code, out, err = run_cli(
        capsys, "acp", "run", "--prompt", "refusal", "--prompt", "hello", "--", *STOP_AGENT
    )
    assert code == 1, err
    assert "[turn ended: refusal]" in out and "[turn ended: end_turn]" in out


def test_interactive_turns_from_stdin(capsys: Capture, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("first\n\nmax_tokens\nsecond\n/quit\nnever\n"))
    code, out, err = run_cli(capsys, "acp", "run", "--", *STOP_AGENT)
    assert code == 1, err  # one turn ended with max_tokens
    assert out.count("[turn ended:") == 3
    assert "you said second" in out and "never" not in out


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ([PY, "-c", "print('hello')"], "is not an ACP agent: the connection closed"),
        (["cat"], "is not an ACP agent: Method not found: initialize"),
        ([PY, "-c", "import sys; sys.stdin.read()"], "no answer to initialize within 0.5 s"),
        (["/no/such/agent"], "cannot start '/no/such/agent'"),
    ],
    ids=["prints-text", "echoes", "silent", "missing"],
)
def test_a_command_that_is_not_an_agent(command: list[str], fragment: str, capsys: Capture) -> None:
    code, out, err = run_cli(
        capsys, "acp", "run", "--timeout", "0.5", "--prompt", "hi", "--", *command
    )
    assert code == 1 and "[turn ended" not in out
    assert_one_line_error(err, fragment)


def test_usage_errors(tmp_path: Path, capsys: Capture) -> None:
    code, _, err = run_cli(capsys, "acp", "run", "--prompt", "hi")
    assert code == 2 and "rpcweave: error: no agent given" in err
    code, _, err = run_cli(
        capsys, "acp", "run", "--cwd", str(tmp_path / "missing"), "--", *DEMO_AGENT
    )
    assert code == 1
    assert_one_line_error(err, "not a directory")


def test_console_with_piped_answers(tmp_path: Path) -> None:
    """The real console script, as a person would pipe it: answers on stdin."""
    done = subprocess.run(
        [PY, "-m", "rpcweave", "acp", "run", "--prompt", "/write c.txt yes", "--", *DEMO_AGENT],
        input="y\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "c.txt").read_text(encoding="utf-8") == "yes"
    assert "Traceback" not in done.stderr


# --- commands run only with consent ------------------------------------------------------

MARKER_RUN = "/run sh -c 'echo ran > marker.txt'"
MARKER_LINE = "sh -c 'echo ran > marker.txt'"


def test_a_command_without_a_tty_or_yes_is_refused(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Piped input is no consent for a command, even a "y" (CI runs --prompt with a pipe).
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    code, out, err = run_cli(
        capsys, "acp", "run", "--cwd", str(tmp_path), "--prompt", MARKER_RUN, "--", *DEMO_AGENT
    )
    assert code == 0, err  # the turn itself ends normally
    assert not (tmp_path / "marker.txt").exists()
    refused = (
        f"  (refused: run `{MARKER_LINE}` in {tmp_path.resolve()}: no terminal to ask on;"
        " pass --yes to run commands)"
    )
    assert refused in err.splitlines()
    assert "Cannot run: " in out and "command refused" in out  # what the agent was told
    assert "Traceback" not in err


def test_a_command_with_yes_runs(tmp_path: Path, capsys: Capture) -> None:
    code, _, err = run_cli(
        capsys, "acp", "run", "--yes", "--cwd", str(tmp_path), "--prompt", MARKER_RUN,
        "--", *DEMO_AGENT,
    )  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "marker.txt").read_text() == "ran\n"
    assert f"(granted: --yes → run `{MARKER_LINE}` in {tmp_path.resolve()})" in err


def _on_a_tty(argv: list[str], cwd: Path, answer: bytes) -> tuple[int, str]:
    """Run ``argv`` on a pseudo-terminal; type ``answer`` once ``[y/N]`` shows."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "TERM": "dumb"}
    return run_on_a_terminal(argv, cwd, env, {b"[y/N]": answer})


@pytest.mark.parametrize(("answer", "ran"), [(b"y\n", True), (b"n\n", False), (b"\n", False)])
def test_a_command_is_asked_on_the_terminal(answer: bytes, ran: bool, tmp_path: Path) -> None:
    code, shown = _on_a_tty(
        [PY, "-m", "rpcweave", "acp", "run", "--prompt", MARKER_RUN, "--", *DEMO_AGENT],
        tmp_path,
        answer,
    )
    assert code == 0, shown
    assert f"? run `{MARKER_LINE}` in {tmp_path.resolve()}? [y/N] " in shown
    assert (tmp_path / "marker.txt").exists() is ran
    assert (f"(refused: run `{MARKER_LINE}`" in shown) is not ran
    assert "Traceback" not in shown


def test_terminal_output_is_printed_once(tmp_path: Path, capsys: Capture) -> None:
    # The demo agent embeds the terminal and repeats its output as text: shown once.
    code, out, err = run_cli(
        capsys, "acp", "run", "--yes", "--cwd", str(tmp_path),
        "--prompt", "/run sh -c 'echo once-$((40+2))'", "--", *DEMO_AGENT,
    )  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert out.count("once-42") == 1, out
    assert "    │ once-42" in lines
    assert "    [Exit code 0]" in lines  # what the text adds to the output is kept


def test_a_file_not_found_before_a_write_is_information(tmp_path: Path, capsys: Capture) -> None:
    # The demo agent reads the file first, for its diff: -32002, which it expects.
    code, out, err = run_cli(
        capsys, "acp", "run", "--yes", "--cwd", str(tmp_path), "--prompt", "/write new.txt hi",
        "--", *DEMO_AGENT,
    )  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert f"(the agent looked for {tmp_path}/new.txt: not there yet)" in lines
    assert f"  ↳ Write {tmp_path}/new.txt completed" in lines
    assert "error" not in out.lower() and "failed" not in out
