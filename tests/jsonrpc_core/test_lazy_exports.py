"""`jsonrpc_core.install_lazy_exports`: each exported name declared once, loaded on first use.

A package re-exports a name as ``from .module import Name as Name``; those in the block
``if TYPE_CHECKING or not install_lazy_exports(globals()):`` load when first asked for,
and ``__all__`` lists every re-export. Each test builds a small package of its own in a
temporary directory and imports it in this process (its name is unique to the test).
"""

from __future__ import annotations

import compileall
import importlib
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

import jsonrpc_core

ROOT = Path(jsonrpc_core.__file__).resolve().parents[1]

INIT = '''"""A package built on the core."""

from typing import TYPE_CHECKING

from jsonrpc_core import install_lazy_exports

from ._small import Cheap as Cheap

if TYPE_CHECKING or not install_lazy_exports(globals()):
    from . import extra as extra
    from ._big import Heavy as Heavy
    from ._big import (
        VERY_LONG_NAME_THAT_RUFF_PUTS_IN_A_GROUP as VERY_LONG_NAME_THAT_RUFF_PUTS_IN_A_GROUP,
    )
'''

MODULES = {
    "_small.py": "Cheap = 'cheap'\n",
    "_big.py": "Heavy = 'heavy'\nVERY_LONG_NAME_THAT_RUFF_PUTS_IN_A_GROUP = 'long'\n",
    "extra.py": "WHAT = 'extra'\n",
}


@pytest.fixture
def make_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> Iterator[tuple[str, Path]]:
    """A package directory with a name unique to the test, importable; forgotten after."""
    name = "lazy_" + re.sub(r"\W", "_", request.node.name)
    directory = tmp_path / name
    directory.mkdir()
    for file, text in MODULES.items():
        (directory / file).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, directory
    for module in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[module]


def _import(name: str) -> ModuleType:
    importlib.invalidate_caches()
    return importlib.import_module(name)


def test_reexports_in_the_block_load_on_first_use(make_package: tuple[str, Path]) -> None:
    name, directory = make_package
    (directory / "__init__.py").write_text(INIT)
    package = _import(name)
    assert f"{name}._small" in sys.modules
    assert f"{name}._big" not in sys.modules and f"{name}.extra" not in sys.modules

    assert package.Heavy == "heavy"
    assert f"{name}._big" in sys.modules
    assert package.VERY_LONG_NAME_THAT_RUFF_PUTS_IN_A_GROUP == "long"
    assert package.extra.WHAT == "extra"  # a re-exported submodule
    assert package.Cheap == "cheap"


def test_all_lists_every_reexport_and_star_import_gets_them(
    make_package: tuple[str, Path],
) -> None:
    name, directory = make_package
    (directory / "__init__.py").write_text(INIT)
    package = _import(name)
    expected = {"Cheap", "extra", "Heavy", "VERY_LONG_NAME_THAT_RUFF_PUTS_IN_A_GROUP"}
    assert set(package.__all__) == expected
    assert expected <= set(dir(package))
    namespace: dict[str, object] = {}
    exec(f"from {name} import *", namespace)
    assert expected <= set(namespace)


def test_unknown_names_raise_attribute_error(make_package: tuple[str, Path]) -> None:
    name, directory = make_package
    (directory / "__init__.py").write_text(INIT)
    package = _import(name)
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        exec(f"from {name} import no_such_name")


def test_without_its_source_a_package_imports_everything_at_once(
    make_package: tuple[str, Path],
) -> None:
    name, directory = make_package
    (directory / "__init__.py").write_text(INIT)
    assert compileall.compile_dir(directory, legacy=True, quiet=1)
    for source in directory.glob("*.py"):
        source.unlink()
    package = _import(name)
    assert f"{name}._big" in sys.modules  # the block ran as plain imports
    assert package.Heavy == "heavy"
    assert package.extra.WHAT == "extra"


@pytest.mark.parametrize(
    "statement",
    ["HEAVY = 1", "from ._big import Heavy", "from ._big import Heavy as Light", "import os"],
)
def test_a_block_holding_anything_but_reexports_is_refused(
    make_package: tuple[str, Path], statement: str
) -> None:
    name, directory = make_package
    (directory / "__init__.py").write_text(INIT + f"    {statement}\n")
    with pytest.raises(ValueError, match=name):
        _import(name)


def test_a_module_without_the_block_is_refused(make_package: tuple[str, Path]) -> None:
    name, directory = make_package
    text = "from jsonrpc_core import install_lazy_exports\ninstall_lazy_exports(globals())\n"
    (directory / "__init__.py").write_text(text)
    with pytest.raises(ValueError, match="no line"):
        _import(name)


LAZY_MODULES = [
    "jsonrpc_core/__init__.py",
    "mcp_layer/__init__.py",
    "acp_layer/__init__.py",
    "a2a_layer/__init__.py",
    "mcp_layer/types.py",
    "mcp_layer/_methods.py",
]


@pytest.mark.parametrize("path", LAZY_MODULES)
def test_each_reexported_name_is_spelled_once(path: str) -> None:
    """No table, ``__all__`` or ``TYPE_CHECKING`` import names a re-export again: its one
    ``Name as Name`` line is all (the scanner is a private unit, tested on purpose)."""
    from jsonrpc_core import _scan_reexports

    source = (ROOT / path).read_text()
    eager, lazy = _scan_reexports(source, path)
    assert lazy
    for name in [*eager, *lazy]:
        assert f'"{name}"' not in source and f"'{name}'" not in source, name
        assert source.count(f"{name} as {name}") == 1, name
        assert not re.search(rf"^\s*from \S+ import .*(?<! as )\b{name}\b(?! as)", source, re.M), (
            name
        )
