"""What a test needs from outside the repository: skipped locally, a failure under CI.

Some tests drive programs or read files the repository does not hold: Node.js and npm for
the TypeScript SDKs' interop tests, the protocols' spec material (tests/_specs.py). On a
developer's machine without them such a test is skipped, with a reason that says how to
get what is missing. CI (``CI`` set to ``true``/``1``/``yes``, as CI services set it)
installs all of them, so there a missing one is a broken setup: the test fails, naming
what is missing, instead of passing the run by skipping.

`missing(reason)` is that decision, in one place; `program(name, ...)` applies it to an
executable looked up on ``PATH``.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

CI_NOTE = "CI installs it, so here a missing one is a broken setup"
"""Appended to the reason of a test failed under CI for want of something."""

NODE_HOW = "install Node.js 18+ with npm (Debian/Ubuntu: `apt-get install nodejs npm`)"
"""How to get ``node`` and ``npm``; the tests install the npm packages they need."""


def in_ci() -> bool:
    """True when the run is CI's (``CI=true``), where nothing may be missing."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def missing(reason: str, *, ci_note: str = CI_NOTE) -> NoReturn:
    """Skip the running test for ``reason`` or, under CI, fail it (``reason [ci_note]``).

    ``reason`` says what is missing and how to get it."""
    if in_ci():
        pytest.fail(f"{reason} [{ci_note}]", pytrace=False)
    pytest.skip(reason)


def program(name: str, *, needed_for: str, how: str) -> str:
    """The path of executable ``name`` on ``PATH``; else `missing` (skip, or fail under CI).

    ``needed_for`` names what cannot run without it; ``how`` says how to install it."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} is not on PATH: {needed_for} cannot run; {how}")
    return path


def node_and_npm(needed_for: str) -> tuple[str, str]:
    """The paths of ``node`` and ``npm`` (see `program`)."""
    return (
        program("node", needed_for=needed_for, how=NODE_HOW),
        program("npm", needed_for=needed_for, how=NODE_HOW),
    )
