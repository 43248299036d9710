"""``rpcweave example [NAME]``: the examples installed with rpcweave, and where they are.

The examples are modules of `rpcweave.examples` (``examples/`` in a checkout links to
them), so they run wherever rpcweave is installed: ``python -m rpcweave.examples.acp.demo_agent``,
or by the path this command prints (``rpcweave acp run -- python "$(rpcweave example
demo_agent)"``). A NAME is ``GROUP/NAME`` as listed, or just the NAME when only one group
has it; a trailing ``.py`` is allowed.
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._cli_common import CLIError, HelpFormatter

__all__ = ["EXAMPLES_DIR", "Example", "add_parser", "find_example", "list_examples", "run"]

EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"

_EPILOG = """examples:
  rpcweave example
  rpcweave example demo_agent
  rpcweave acp run -- python "$(rpcweave example acp/demo_agent)"
  rpcweave example --module file_server
"""


@dataclass(frozen=True)
class Example:
    """One example program: ``group/name``, its file, its module and its summary line."""

    name: str
    path: Path
    module: str
    summary: str


def list_examples() -> list[Example]:
    """Every example, sorted by name (read from the files: nothing is imported)."""
    found = []
    for path in sorted(EXAMPLES_DIR.glob("*/*.py")):
        if path.name.startswith("_"):
            continue
        group = path.parent.name
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        summary = docstring.strip().splitlines()[0] if docstring.strip() else ""
        found.append(
            Example(
                name=f"{group}/{path.stem}",
                path=path,
                module=f"rpcweave.examples.{group}.{path.stem}",
                summary=summary,
            )
        )
    return found


def find_example(name: str) -> Example:
    """The example called ``name`` (``group/name`` or an unambiguous ``name``); `CLIError`
    (usage, status 2) naming the choices when there is none or more than one."""
    wanted = name.strip().removesuffix(".py").removeprefix("rpcweave.examples.")
    wanted = wanted.replace("\\", "/").replace(".", "/")
    examples = list_examples()
    matches = [e for e in examples if e.name == wanted or e.name.split("/", 1)[1] == wanted]
    if len(matches) == 1:
        return matches[0]
    names = ", ".join(e.name for e in (matches or examples))
    if matches:
        raise CLIError(f"example {name!r} is ambiguous: {names}", status=2)
    raise CLIError(f"no example {name!r}; the examples: {names}", status=2)


def add_parser(commands: Any) -> None:
    """Add ``example`` to the top-level subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "example",
        help="list the examples installed with rpcweave, or print where one is",
        description="Without NAME, list the example programs installed with rpcweave (servers, "
        "agents and clients that the README and --help texts use) with how to run each. With "
        "NAME, print the example's file path (or, with --module, its module name for "
        "python -m).",
        epilog=_EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="an example, e.g. acp/demo_agent")
    parser.add_argument(
        "--module", action="store_true", help="print the module name instead of the path"
    )


def run(args: argparse.Namespace) -> int:
    """Run ``rpcweave example``; returns the exit status."""
    if args.name:
        example = find_example(args.name)
        print(example.module if args.module else example.path)
        return 0
    examples = list_examples()
    width = max(len(e.name) for e in examples)
    for example in examples:
        print(f"{example.name:<{width}}  {example.summary}")
    print(
        "\nrun one: python -m rpcweave.examples.GROUP.NAME (e.g. rpcweave.examples.acp.demo_agent)"
    )
    print("its file: rpcweave example NAME")
    return 0
