"""rpcweave's HTTP client uses the public API of the HTTP libraries only, behind one module.

An AST scan of every Python file of the repository (packages, CLI, bench, tests):

- no import of a private module of httpx, httpcore, httpx2 or httpcore2 (``httpx._utils``)
  and no private name taken from one (``from httpx import _something``, ``httpx._x``);
- no subclass of one of their classes touching a private attribute that the library's
  class itself uses (``self._cookies = ...`` in an `httpx.AsyncClient` subclass);
- outside the client's own modules (``jsonrpc_core/_http1*.py``) and the tests of its
  private units, the client is imported from its boundary module ``jsonrpc_core._http1``
  (or the package), never from behind it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIBRARIES = ("httpx", "httpcore", "httpx2", "httpcore2")
SCANNED = ("jsonrpc_core", "mcp_layer", "acp_layer", "a2a_layer", "rpcweave", "bench", "tests")


def python_files() -> Iterator[Path]:
    for folder in SCANNED:
        yield from sorted((ROOT / folder).rglob("*.py"))


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def library_of(module: str) -> str | None:
    top = module.split(".", 1)[0]
    return top if top in LIBRARIES else None


class PrivateUse(ast.NodeVisitor):
    """Collects ``line: what`` for each private use of a library in one module."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.module_names: dict[str, str] = {}  # local name -> library module path
        self.class_names: dict[str, type] = {}  # local name -> library class

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if library_of(alias.name) is None:
                continue
            if any(is_private(part) for part in alias.name.split(".")):
                self.found.append(f"{node.lineno}: import {alias.name}")
            local = alias.asname or alias.name.split(".", 1)[0]
            self.module_names[local] = alias.name if alias.asname else local

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level or library_of(module) is None:
            return
        if any(is_private(part) for part in module.split(".")):
            self.found.append(f"{node.lineno}: from {module} import ...")
        for alias in node.names:
            if is_private(alias.name):
                self.found.append(f"{node.lineno}: from {module} import {alias.name}")
            value = getattr(importlib.import_module(module), alias.name, None)
            if isinstance(value, type):
                self.class_names[alias.asname or alias.name] = value

    def visit_Attribute(self, node: ast.Attribute) -> None:
        base = node.value
        if isinstance(base, ast.Name) and base.id in self.module_names and is_private(node.attr):
            self.found.append(f"{node.lineno}: {base.id}.{node.attr}")
        self.generic_visit(node)

    def library_base(self, node: ast.expr) -> type | None:
        if isinstance(node, ast.Name):
            return self.class_names.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            module = self.module_names.get(node.value.id)
            if module is not None:
                value = getattr(importlib.import_module(module), node.attr, None)
                return value if isinstance(value, type) else None
        return None

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        private = set()
        for base in filter(None, map(self.library_base, node.bases)):
            private |= library_private_attributes(base)
        if private:
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Attribute)
                    and isinstance(inner.value, ast.Name)
                    and inner.value.id == "self"
                    and inner.attr in private
                ):
                    self.found.append(f"{inner.lineno}: {node.name} uses self.{inner.attr}")
        self.generic_visit(node)


def library_private_attributes(cls: type) -> set[str]:
    """The private names a library class (and its library bases) defines or sets."""
    names: set[str] = set()
    for klass in cls.__mro__:
        if library_of(klass.__module__) is None:
            continue
        names |= {name for name in vars(klass) if is_private(name)}
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        names |= {name for name in re.findall(r"self\.(_\w+)", source) if is_private(name)}
    return names


def private_uses(path: Path) -> list[str]:
    visitor = PrivateUse()
    visitor.visit(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
    return visitor.found


def test_no_module_of_the_repository_uses_a_private_name_of_an_http_library() -> None:
    found = {
        str(path.relative_to(ROOT)): uses for path in python_files() if (uses := private_uses(path))
    }
    assert found == {}


def test_the_scan_finds_each_kind_of_private_use(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import httpx\n"
        "import httpcore._async as pool\n"
        "from httpx._utils import get_environment_proxies\n"
        "from httpx import _config\n"
        "class Client(httpx.AsyncClient):\n"
        "    def __init__(self) -> None:\n"
        "        self._cookies = None\n"
        "        self._mine = 1\n"
        "limits = httpx._config.DEFAULT_LIMITS\n",
        encoding="utf-8",
    )
    assert private_uses(sample) == [
        "2: import httpcore._async",
        "3: from httpx._utils import ...",
        "4: from httpx import _config",
        "7: Client uses self._cookies",
        "9: httpx._config",
    ]


BEHIND = re.compile(r"jsonrpc_core\._http1_\w+|from \._http1_\w+ import")


def test_the_client_is_imported_through_its_boundary_module_only() -> None:
    found = []
    for path in python_files():
        if path.is_relative_to(ROOT / "tests"):
            continue  # tests may test a private unit on purpose
        if re.fullmatch(r"_http1\w*\.py", path.name) and path.parent.name == "jsonrpc_core":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "import" in line and BEHIND.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
