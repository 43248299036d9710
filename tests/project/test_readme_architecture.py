"""README's architecture diagram matches the core: it names every module of
``jsonrpc_core`` (a ``name*`` entry covers the modules that start with ``name``), names
no module that is gone, and states each public namespace's export count as it is."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "jsonrpc_core"
MODULE_NAME = re.compile(r"(?<![\w.])(_[a-z0-9_]+)(\*)?")
EXPORT_COUNT = re.compile(r"(jsonrpc_core(?:\.\w+)?) \((\d+)")


def diagram() -> str:
    """The first fenced block under the README's ``## Architecture`` heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Architecture\n", 1)[1]
    return section.split("```", 2)[1]


def core_modules() -> set[str]:
    return {path.stem for path in CORE.glob("_*.py") if path.stem != "__init__"}


def test_the_diagram_names_every_core_module_and_no_other() -> None:
    exact: set[str] = set()
    prefixes: set[str] = set()
    for match in MODULE_NAME.finditer(diagram()):
        (prefixes if match.group(2) else exact).add(match.group(1))
    modules = core_modules()
    unnamed = {m for m in modules - exact if not any(m.startswith(p) for p in prefixes)}
    assert unnamed == set(), f"core modules missing from the README's diagram: {unnamed}"
    gone = exact - modules
    assert gone == set(), f"the README's diagram names modules that do not exist: {gone}"
    assert all(any(m.startswith(p) for m in modules) for p in prefixes), prefixes


def test_the_diagram_states_each_public_namespaces_export_count() -> None:
    counts = {name: int(count) for name, count in EXPORT_COUNT.findall(diagram())}
    assert {"jsonrpc_core", "jsonrpc_core.http"} <= set(counts)
    actual = {name: len(importlib.import_module(name).__all__) for name in counts}
    assert counts == actual
