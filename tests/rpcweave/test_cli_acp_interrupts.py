"""``rpcweave acp run`` and its agent's process: Ctrl-C cancels a turn, not the agent; the
agent ends with the run; each line is printed once and the prompt drawn again.

The fixture agent (tests/acp_fixtures/lifecycle_agent.py, official Python SDK) runs behind
tests/acp_fixtures/launcher.py, like an npm package's launcher. The Ctrl-C tests type
``\\x03`` on a pseudo-terminal that is the CLI's controlling terminal, so the terminal driver
sends SIGINT to its foreground process group, as a person's Ctrl-C does.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from _processes import MARK, marked, none_left

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "acp_fixtures"
PY = sys.executable
LAUNCHER = [PY, str(FIXTURES / "launcher.py")]
AGENT = [PY, str(FIXTURES / "lifecycle_agent.py")]


@pytest.fixture
def mark() -> Iterator[str]:
    """A marker for the processes of the test (tests/_processes.py)."""
    yield from marked()


def _env(**extra: str) -> dict[str, str]:
    return {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", **extra}


def test_acp_run_leaves_no_agent_process_and_no_traceback(tmp_path: Path, mark: str) -> None:
    done = subprocess.run(
        [PY, "-m", "rpcweave", "acp", "run", "--prompt", "pid", "--",
         *LAUNCHER, "--linger", *AGENT],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=_env(**{MARK: mark}),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.search(r"^pid=\d+$", done.stdout, re.M), done.stdout
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert none_left(mark) == []


def test_verbose_prints_each_agent_stderr_line_once(tmp_path: Path) -> None:
    done = subprocess.run(
        [PY, "-m", "rpcweave", "acp", "run", "-v", "--prompt", "stderr", "--", *AGENT],
        capture_output=True, text=True, timeout=60, cwd=tmp_path, env=_env(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("stderr-line-1") == 1, done.stderr
    assert done.stderr.count("stderr-line-2") == 1, done.stderr
    assert "  [agent stderr] stderr-line-1\n" in done.stderr


class _Terminal:
    """The CLI on a pseudo-terminal that is its controlling terminal, the CLI's process
    group in the foreground; every read is bounded by one deadline."""

    # Become the session's controlling terminal, then be the CLI.
    _TAKE_TTY = (
        "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
    )

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        import pty

        master, slave = pty.openpty()
        self.process = subprocess.Popen(
            [PY, "-c", self._TAKE_TTY, *argv],
            stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env, start_new_session=True,
        )  # fmt: skip
        os.close(slave)
        self.master = master
        self.raw = bytearray()
        self.deadline = time.monotonic() + 60

    @property
    def text(self) -> str:
        return self.raw.decode(errors="replace").replace("\r\n", "\n")

    def _read(self, deadline: float) -> bool:
        import select

        remaining = min(deadline, self.deadline) - time.monotonic()
        assert remaining > 0, f"not seen in time; the terminal shows:\n{self.text}"
        ready, _, _ = select.select([self.master], [], [], remaining)
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 4096)
        except OSError:  # EIO: every holder of the terminal's other side is gone
            chunk = b""
        self.raw.extend(chunk)
        return bool(chunk)

    def wait_for(self, wanted: str, after: int = 0, timeout: float = 30) -> int:
        """Read until ``wanted`` shows at or past offset ``after`` of `text`; where it ends."""
        deadline = time.monotonic() + timeout
        while (found := self.text.find(wanted, after)) < 0:
            assert self._read(deadline), f"ended before {wanted!r}:\n{self.text}"
        return found + len(wanted)

    def type(self, data: bytes) -> None:
        os.write(self.master, data)

    def finish(self) -> int:
        """Read until the CLI is gone; its exit status."""
        while self._read(self.deadline):
            pass
        return self.process.wait(timeout=max(self.deadline - time.monotonic(), 1))

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


@pytest.fixture
def terminal(tmp_path: Path, mark: str) -> Iterator[_Terminal]:
    """``rpcweave acp run`` (interactive) with the fixture agent behind its launcher."""
    argv = ["-m", "rpcweave", "acp", "run", "--", *LAUNCHER, *AGENT]
    tty = _Terminal(argv, tmp_path, _env(TERM="dumb", **{MARK: mark}))
    try:
        yield tty
    finally:
        tty.close()


def _agent_pid(tty: _Terminal, after: int) -> tuple[int, int]:
    """Ask the agent its pid at the prompt; (the pid, where the next prompt ends)."""
    tty.type(b"pid\n")
    end = tty.wait_for("[turn ended: end_turn]\n> ", after)
    found = re.search(r"^pid=(\d+)$", tty.text[after:end], re.M)
    assert found, tty.text
    return int(found.group(1)), end


def _is_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_ctrl_c_cancels_the_turn_and_the_agent_answers_the_next(
    terminal: _Terminal, mark: str
) -> None:
    at = terminal.wait_for("\n> ")
    pid, at = _agent_pid(terminal, at)
    terminal.type(b"slow\n")
    at = terminal.wait_for("working", at)
    terminal.type(b"\x03")
    at = terminal.wait_for("[turn ended: cancelled]\n", at)
    assert "(cancelling the turn; Ctrl-C again to quit)" in terminal.text
    assert _is_alive(pid)  # the terminal's SIGINT did not reach the agent
    again, at = _agent_pid(terminal, terminal.wait_for("> ", at))
    assert again == pid
    terminal.type(b"/quit\n")
    assert terminal.finish() == 1, terminal.text  # not every turn ended with end_turn
    assert "Traceback" not in terminal.text and "Internal error" not in terminal.text
    assert none_left(mark) == []


def test_a_second_ctrl_c_during_a_turn_ends_the_run(terminal: _Terminal, mark: str) -> None:
    at = terminal.wait_for("\n> ")
    terminal.type(b"stubborn\n")  # an agent that does not stop when cancelled
    at = terminal.wait_for("working", at)
    terminal.type(b"\x03")
    at = terminal.wait_for("(cancelling the turn; Ctrl-C again to quit)", at)
    terminal.type(b"\x03")
    assert terminal.finish() == 130, terminal.text
    assert "rpcweave: interrupted" in terminal.text[at:]
    assert "Traceback" not in terminal.text
    assert none_left(mark) == []


def test_ctrl_c_at_the_prompt_ends_the_run(terminal: _Terminal, mark: str) -> None:
    terminal.wait_for("\n> ")
    terminal.type(b"\x03")
    assert terminal.finish() == 130, terminal.text
    assert "rpcweave: interrupted" in terminal.text
    assert "Traceback" not in terminal.text
    assert none_left(mark) == []


def test_a_line_printed_at_the_prompt_is_followed_by_the_prompt(terminal: _Terminal) -> None:
    at = terminal.wait_for("\n> ")
    pid, at = _agent_pid(terminal, at)
    os.kill(pid, signal.SIGUSR1)  # the agent now sends its commands, the prompt shown
    at = terminal.wait_for("(commands: /alpha /beta)\n", at)
    terminal.wait_for("> ", at, timeout=10)
    assert "> (commands" not in terminal.text
    terminal.type(b"/quit\n")
    assert terminal.finish() == 0, terminal.text
