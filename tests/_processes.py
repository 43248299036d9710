"""Which test processes still run: each carries a marker variable in its environment, and
``/proc/*/environ`` tells (Linux)."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

__all__ = ["MARK", "marked", "none_left", "running"]

MARK = "RPCWEAVE_LIFECYCLE_MARK"


def running(mark: str) -> list[int]:
    """The processes (not zombies) whose environment holds ``MARK=mark``."""
    wanted = f"{MARK}={mark}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if wanted in environ.split(b"\0"):
            found.append(int(entry))
    return found


def none_left(mark: str, timeout: float = 10.0) -> list[int]:
    """Look (bounded) until no marked process runs; those still running at the deadline."""
    deadline = time.monotonic() + timeout
    while (left := running(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)  # a bounded poll: other processes signal nothing
    return left


def marked() -> Iterator[str]:
    """For a fixture: a fresh marker value; any marked process left is killed after."""
    value = uuid.uuid4().hex
    yield value
    for pid in running(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
