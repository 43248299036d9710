"""Every ```python block of README.md runs as the README says, so the README cannot drift.

The README's convention (its Quickstart says so): a ```python block is a whole program
whose first line names its file (``# notes.py``), or a part of one, labelled on its first
line ``# fragment ...``. A section (``##``/``###`` heading) that has programs runs its
```sh blocks line by line, as a reader would type them, in a directory holding every
program of the README, with the checkout's ``rpcweave`` and ``python`` first on PATH:

- a line ending in ``&`` starts a server, which must say it is ``listening on`` its URL
  before the next line runs; the section's servers are stopped at its end;
- every other line must exit 0, and a comment ``# → TEXT`` says what its output contains;
- a fixed port (``--port 8000``, ``127.0.0.1:9999``) becomes a free port of 127.0.0.1,
  the same one throughout the section; ``TASK_ID`` is the last task id a command printed.

Fragments are compiled. Every command is bounded in time.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
COMMAND_TIMEOUT = 60.0
READY_TIMEOUT = 30.0
PROGRAM = re.compile(r"# ([\w-]+\.py)$")
FIXED_PORT = re.compile(r"(?<=--port )\d+|(?<=127\.0\.0\.1:)\d+")
BACKGROUND = re.compile(r"\s&\s*(#.*)?$")
EXPECTED = re.compile(r"\s#.*?→ (.+?)(?: \(.*)?$")
TASK_ID = re.compile(r"\btask ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b")


@dataclass(frozen=True)
class Block:
    lang: str
    text: str
    line: int  # of the opening fence, 1-based
    section: str

    @property
    def program(self) -> str | None:
        """The file name a program block gives itself on its first line."""
        match = PROGRAM.match(self.text.splitlines()[0]) if self.text else None
        return match.group(1) if match else None

    @property
    def fragment(self) -> bool:
        return self.text.startswith("# fragment")


def readme_blocks() -> list[Block]:
    blocks: list[Block] = []
    section = ""
    fence: tuple[str, int, list[str]] | None = None
    for number, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        if fence is None:
            if line.startswith("#"):
                section = line.lstrip("#").strip()
            elif line.startswith("```"):
                fence = (line[3:].strip(), number, [])
        elif line.startswith("```"):
            lang, start, body = fence
            blocks.append(Block(lang, "\n".join(body) + "\n", start, section))
            fence = None
        else:
            fence[2].append(line)
    assert fence is None, f"README.md: the block at line {fence[1]} is never closed"
    return blocks


BLOCKS = readme_blocks()
PYTHON = [b for b in BLOCKS if b.lang == "python"]
PROGRAMS = {b.program: b for b in PYTHON if b.program}
RUN_SECTIONS = list(dict.fromkeys(b.section for b in PYTHON if b.program))  # in README order


def section_commands(section: str) -> list[str]:
    lines = []
    for block in BLOCKS:
        if block.section == section and block.lang == "sh":
            lines += [line for line in block.text.splitlines() if line.strip()]
    return [line for line in lines if not line.lstrip().startswith("#")]


def test_every_python_block_is_a_program_or_a_labelled_fragment() -> None:
    assert len(PYTHON) >= 8
    unlabelled = [b.line for b in PYTHON if not b.program and not b.fragment]
    assert unlabelled == [], f"README.md lines {unlabelled}: name the file or say # fragment"
    names = [b.program for b in PYTHON if b.program]
    assert len(names) == len(set(names)), names


def test_every_program_has_a_command_that_runs_it() -> None:
    commands = [line for section in RUN_SECTIONS for line in section_commands(section)]
    texts = [b.text for b in PROGRAMS.values()]
    for name in PROGRAMS:
        named = any(re.search(rf"\b{re.escape(name)}\b", line) for line in commands)
        used = any(f'"{name}"' in text for text in texts)  # started by another program
        assert named or used, f"README.md: nothing runs {name}"


@pytest.mark.parametrize("block", [b for b in PYTHON if b.fragment], ids=lambda b: f"line{b.line}")
def test_fragments_compile(block: Block) -> None:
    compile(block.text, f"README.md:{block.line}", "exec")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Shell:
    """Runs one section's commands in ``cwd``; remembers its ports, task ids and servers."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.ports: dict[str, str] = {}
        self.task_ids: list[str] = []
        self.servers: list[subprocess.Popen[str]] = []
        bin_dir = Path(sys.executable).parent
        assert (bin_dir / "rpcweave").exists(), f"no rpcweave in {bin_dir}: run make setup"
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYTHONPATH": os.pathsep.join(
                p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
            ),
        }

    def expand(self, line: str) -> str:
        line = FIXED_PORT.sub(lambda m: self.ports.setdefault(m.group(), str(free_port())), line)
        if "TASK_ID" in line:
            assert self.task_ids, f"{line!r}: no command printed a task id before"
            line = line.replace("TASK_ID", self.task_ids[-1])
        return line

    def run(self, line: str) -> None:
        command = self.expand(line)
        if BACKGROUND.search(command):
            self.start(BACKGROUND.sub("", command))
            return
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"{line}\n(ran {command})\n{output}"
        self.task_ids += TASK_ID.findall(output)
        expected = EXPECTED.search(line)
        if expected:
            assert expected.group(1) in done.stdout, f"{line}\n{output}"

    def start(self, command: str) -> None:
        server = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.servers.append(server)
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert server.stdout is not None
            for text in server.stdout:
                lines.put(text)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        said: list[str] = []
        while True:
            try:
                text = lines.get(timeout=READY_TIMEOUT)
            except queue.Empty:
                pytest.fail(f"{command}: not listening after {READY_TIMEOUT} s: {said}")
            assert text is not None, f"{command}: ended before listening: {''.join(said)}"
            said.append(text)
            if "listening on http://127.0.0.1:" in text:
                return

    def stop(self) -> None:
        for server in self.servers:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
                try:
                    server.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(server.pid, signal.SIGKILL)
                    server.wait()


@pytest.fixture
def shell(tmp_path: Path) -> Iterator[Shell]:
    for name, block in PROGRAMS.items():
        (tmp_path / str(name)).write_text(block.text, encoding="utf-8")
    runner = Shell(tmp_path)
    try:
        yield runner
    finally:
        runner.stop()


@pytest.mark.parametrize("section", RUN_SECTIONS)
def test_readme_section_runs_as_written(section: str, shell: Shell) -> None:
    commands = section_commands(section)
    assert commands, f"README.md section {section!r} has programs but no command"
    for line in commands:
        shell.run(line)
    crashed = [server.args for server in shell.servers if server.poll() is not None]
    assert crashed == [], "servers ended before the section's end"
