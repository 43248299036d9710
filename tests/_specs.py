"""Where the tests find the protocols' spec material: the one place that decides it.

The MCP, ACP and A2A schemas, protos and method tables that the tests validate against are
never copied into the repository. A test names the file it needs by its path in the layout
of the project's shared spec folder (``mcp/2025-11-25/schema.json``, ``acp/v1/meta.json``,
``a2a/v1.0/a2a.proto``, ...) and asks this module for it:

- `need(*names)` in a fixture or a test, or `requires(*names)` as a mark on a test or a
  module (``pytestmark``), checked before the test runs (tests/conftest.py).

Each file is looked for, in this order:

1. ``$RPCWEAVE_SPECS/<name>`` when the environment variable is set (a folder with the
   layout of ``../shared/specs``); it then replaces the default below;
2. ``../shared/specs/<name>``, the shared spec folder beside the clone (the default);
3. only where the test accepts it (``packaged=True``), a registry package that ships the
   document, installed by ``make specs`` (scripts/fetch_specs.py). ACP's ``schema.json``
   and ``schema.unstable.json`` come with npm ``@agentclientprotocol/sdk`` under
   ``schema/v1/`` (the version pinned in tests/acp_fixtures/package.json, which the ACP
   interop tests drive). No version of it ships the revision in ../shared/specs (agent-
   client-protocol b7f0005): 2.x ships a later one (more definitions, 245 instead of 249
   ``x-deserialize-default-on-error`` hints). The ACP wire checks (tests/acp_fixtures/
   wire.py) validate what we send against it and pass; tests/acp_layer/test_acp_models.py proves the
   models cover exactly the revision rpcweave implements, so it takes the folder's copy
   only. No registry package ships the MCP schemas, the A2A files or ACP's ``meta*.json``.

When a file is found nowhere the test is skipped with a reason starting with `MISSING`,
and tests/conftest.py prints one line at the end of the run with the number of such tests
and the files they lacked. Under CI (``CI`` set to ``true``/``1``) the test fails instead:
CI must check everything (tests/_required.py decides, for every test needing something
from outside the repository).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from _required import in_ci as in_ci  # re-exported: tests/conftest.py asks _specs
from _required import missing

REPO = Path(__file__).resolve().parents[1]
ENV = "RPCWEAVE_SPECS"
SHARED = REPO.parent / "shared" / "specs"
MISSING = "spec material missing:"
"""The start of the reason of every test skipped for want of a spec file."""

ACP_SDK = REPO / "tests" / "acp_fixtures" / "node_modules" / "@agentclientprotocol" / "sdk"
PACKAGED: dict[str, tuple[str, Path]] = {
    "acp/v1/schema.json": ("npm @agentclientprotocol/sdk", ACP_SDK / "schema/v1/schema.json"),
    "acp/v1/schema.unstable.json": (
        "npm @agentclientprotocol/sdk",
        ACP_SDK / "schema/v1/schema.unstable.json",
    ),
}
"""Spec files a registry package ships: name -> (package, where ``make specs`` puts it).
The package's revision may differ from the folder's: a test opts in with ``packaged=True``."""


def folder() -> tuple[str, Path]:
    """The spec folder consulted first: ($RPCWEAVE_SPECS or ../shared/specs, its path)."""
    configured = os.environ.get(ENV, "").strip()
    if configured:
        return f"${ENV}", Path(configured).expanduser().resolve()
    return "../shared/specs", SHARED


def find(name: str, *, packaged: bool = False) -> Path | None:
    """The path of spec file ``name`` (see the module docs for the order), or None.

    ``packaged``: a registry package's copy will do when the folder has none."""
    candidate = folder()[1] / name
    if candidate.is_file():
        return candidate
    shipped = PACKAGED.get(name)
    if packaged and shipped is not None and shipped[1].is_file():
        return shipped[1]
    return None


def source(name: str) -> str:
    """Where ``name`` comes from, for the run's header ("../shared/specs", "npm ...")."""
    label, root = folder()
    if (root / name).is_file():
        return label
    shipped = PACKAGED.get(name)
    if shipped is not None and shipped[1].is_file():
        try:
            version = json.loads((ACP_SDK / "package.json").read_text())["version"]
        except (OSError, ValueError, KeyError):
            version = "?"
        return f"{shipped[0]} {version}"
    return "missing"


# The missing names asked for by the running test; tests/conftest.py reads and resets
# it around each test (tests run one at a time in a process, but a test may ask from a
# worker thread, hence the lock).
_asked_lock = threading.Lock()
_asked: set[str] = set()


def take_asked() -> set[str]:
    """The names found missing since the last call (the conftest hook calls this)."""
    with _asked_lock:
        names = set(_asked)
        _asked.clear()
    return names


def missing_reason(names: list[str], *, packaged: bool = False) -> str:
    """The skip/fail reason for a test lacking ``names``."""
    label, root = folder()
    how = (
        f"not in {root}"
        if label != "../shared/specs"
        else f"not in {root}; set {ENV}=/path/to/specs, a folder laid out like it"
    )
    if packaged and any(name in PACKAGED for name in names):
        how += "; or `make specs` (npm) installs them"
    return f"{MISSING} {', '.join(names)} ({how})"


def need(*names: str, packaged: bool = False) -> Path:
    """The path of the first of ``names`` (all must exist); skip, or fail under CI, if not.

    ``packaged``: a registry package's copy (another revision, maybe) will do."""
    found = [find(name, packaged=packaged) for name in names]
    absent = [name for name, path in zip(names, found, strict=True) if path is None]
    if absent:
        with _asked_lock:
            _asked.update(absent)
        missing(missing_reason(absent, packaged=packaged), ci_note="CI requires the spec material")
    path = found[0]
    assert path is not None
    return path


def read(name: str, *, packaged: bool = False) -> str:
    """The text of spec file ``name`` (via `need`)."""
    return need(name, packaged=packaged).read_text(encoding="utf-8")


def available(*names: str) -> bool:
    """Whether every one of ``names`` is in the folder (for collection-time decisions)."""
    return all(find(name) is not None for name in names)


MARK = "spec_material"


def requires(*names: str, packaged: bool = False) -> pytest.MarkDecorator:
    """A mark: the test needs these spec files (checked by tests/conftest.py at setup)."""
    return getattr(pytest.mark, MARK)(*names, packaged=packaged)


def check_marks(item: pytest.Item) -> None:
    """`need` what an item's `requires` marks ask for (skip, or fail under CI)."""
    for mark in item.iter_markers(MARK):
        need(*mark.args, packaged=bool(mark.kwargs.get("packaged", False)))
