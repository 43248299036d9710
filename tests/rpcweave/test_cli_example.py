"""``rpcweave example``: the examples installed with the package, listed and located, and
runnable as modules (``python -m rpcweave.examples.GROUP.NAME``)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

import rpcweave
from rpcweave.__main__ import build_parser, main

PACKAGE = Path(rpcweave.__file__).resolve().parent


def test_example_lists_every_example_with_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["example"]) == 0
    out = capsys.readouterr().out
    files = sorted(p for p in (PACKAGE / "examples").glob("*/*.py") if p.name != "__init__.py")
    assert len(files) >= 10
    for path in files:
        assert f"{path.parent.name}/{path.stem}" in out
    assert "acp/demo_agent  " in out and "A scripted ACP agent" in out
    assert "python -m rpcweave.examples.GROUP.NAME" in out


@pytest.mark.parametrize(
    "name", ["acp/demo_agent", "demo_agent", "demo_agent.py", "rpcweave.examples.acp.demo_agent"]
)
def test_example_prints_the_path_of_one_inside_the_package(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["example", name]) == 0
    assert capsys.readouterr().out.strip() == str(PACKAGE / "examples" / "acp" / "demo_agent.py")


def test_example_module_prints_the_name_for_python_m(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["example", "--module", "file_server"]) == 0
    assert capsys.readouterr().out.strip() == "rpcweave.examples.mcp.file_server"


def test_an_unknown_example_is_a_usage_error_naming_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["example", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no example 'nope'" in err and "mcp/file_server" in err


def test_an_example_runs_as_a_module(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hi", encoding="utf-8")
    server = [sys.executable, "-m", "rpcweave.examples.mcp.file_server", str(tmp_path)]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rpcweave",
            "mcp",
            "call",
            "read_file",
            "path=hello.txt",
            "--",
            *server,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "hi"


def _all_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_all_parsers(sub))
    return found


def test_no_help_text_names_a_checkout_path() -> None:
    # Outside a checkout there is no examples/ folder: every --help names what an
    # installed package has (python -m rpcweave.examples..., a module:attribute).
    parsers = _all_parsers(build_parser())
    assert len(parsers) >= 15
    for parser in parsers:
        text = parser.format_help()
        assert "examples/" not in text, (parser.prog, text)
