"""The tests mirror the packages: each test file sits in the folder of the package it tests.

The folders (tests/jsonrpc_core/, tests/mcp_layer/, tests/acp_layer/, tests/a2a_layer/,
tests/rpcweave/, tests/project/) are no packages: pytest imports a test file by its base
name, so base names are unique across them, and the folders are on sys.path (pyproject's
pytest ``pythonpath``) and are mypy's bases (tests/mypy.ini's ``mypy_path``), the same list
in both, so a file may import the shared helpers of tests/ and another test file by name.
"""

from __future__ import annotations

import configparser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
FOLDERS = {"jsonrpc_core", "mcp_layer", "acp_layer", "a2a_layer", "rpcweave", "project"}


def _test_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("test_*.py") if "node_modules" not in p.parts)


def test_every_test_file_is_in_the_folder_of_a_package() -> None:
    misplaced = [
        str(path.relative_to(TESTS))
        for path in _test_files()
        if len(path.relative_to(TESTS).parts) != 2 or path.parent.name not in FOLDERS
    ]
    assert misplaced == [], "move them into the folder of their package: tests/<package>/"
    assert {path.parent.name for path in _test_files()} == FOLDERS


def test_base_names_are_unique() -> None:
    seen: dict[str, list[str]] = {}
    for path in _test_files():
        seen.setdefault(path.name, []).append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in seen.items() if len(paths) > 1} == {}


def test_pytest_and_mypy_search_the_same_folders(pytestconfig: pytest.Config) -> None:
    on_sys_path = {Path(p).resolve() for p in pytestconfig.getini("pythonpath")}
    mypy = configparser.ConfigParser()
    mypy.read(TESTS / "mypy.ini")
    bases = {(ROOT / p.strip()).resolve() for p in mypy["mypy"]["mypy_path"].split(",")}
    folders = {TESTS / name for name in FOLDERS}
    assert on_sys_path == {ROOT, TESTS, *folders}
    assert bases == {TESTS, *folders}
