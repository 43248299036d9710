"""Server replicas as child processes: start several at once, kill one, clean up."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ROOT", "Replica", "replicas"]

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent


@dataclass
class Replica:
    """A running replica: its process, URL and name."""

    process: subprocess.Popen[bytes]
    name: str
    url: str = field(default="")

    def kill(self) -> None:
        """SIGKILL it and wait until it is gone."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=10)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


@contextmanager
def replicas(
    script: str, args: Sequence[str], count: int, *, first: int = 0
) -> Iterator[list[Replica]]:
    """``count`` replicas of ``tests/scaleout/<script> *args NAME``, started together
    (named r<first>, r<first+1>, ...); each prints its URL on its first line."""
    started: list[Replica] = []
    try:
        for index in range(first, first + count):
            process = subprocess.Popen(
                [sys.executable, str(HERE / script), *args, f"r{index}"],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
            )
            started.append(Replica(process, f"r{index}"))
        for rep in started:
            assert rep.process.stdout is not None
            line = rep.process.stdout.readline()  # bounded: the process ends or prints
            if not line:
                raise RuntimeError(f"replica {rep.name} exited before serving")
            rep.url = line.decode().strip()
        yield started
    finally:
        for rep in started:
            rep.kill()
            if rep.process.stdout is not None:
                rep.process.stdout.close()
