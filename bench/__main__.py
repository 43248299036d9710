"""Run the benchmarks: ``python -m bench [--quick] [--only NAME]``.

Each benchmark module prints its Markdown report to stdout and writes it to
``bench/results/<name>.md``. Progress goes to stderr. Misses against targets are
reported in the tables and never change the exit status.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import cast

RESULTS_DIR = Path(__file__).resolve().parent / "results"

BENCHMARKS: dict[str, str] = {
    "core": "bench.core_stdio",
    "http": "bench.core_http",
    "mcp": "bench.mcp_tools",
    "acp": "bench.acp_prompt",
    "a2a": "bench.a2a_tasks",
    "a2a-replicas": "bench.a2a_replicas",
    "http-clients": "bench.http_clients",
    # Later layers register here, e.g. "mcp": "bench.mcp_stdio", "acp": ..., "a2a": ...,
    # "http": ... Each module defines ``run(*, quick: bool) -> str`` returning Markdown.
}
"""Benchmark name -> module, imported only when that benchmark runs."""

Runner = Callable[..., str]


def _load(name: str) -> Runner:
    module = importlib.import_module(BENCHMARKS[name])
    return cast(Runner, module.run)


def _environment() -> str:
    return (
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.release()} {platform.machine()}, "
        f"{os.cpu_count()} CPUs"
    )


def _document(name: str, body: str, quick: bool) -> str:
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    mode = "quick (smoke run, figures are indicative only)" if quick else "full"
    return "\n".join(
        [
            f"# Benchmark: {name}",
            "",
            f"Run {stamp}; mode: {mode}; {_environment()}.",
            "",
            body,
            "",
        ]
    )


def _write(path: Path, text: str) -> None:
    """Write through a temporary file so a reader never sees half a report."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer, shorter runs (smoke test; noisy figures)"
    )
    parser.add_argument(
        "--only", metavar="NAME", choices=sorted(BENCHMARKS), help="run just this benchmark"
    )
    args = parser.parse_args(argv)
    names = [args.only] if args.only else list(BENCHMARKS)
    for name in names:
        document = _document(name, _load(name)(quick=args.quick), args.quick)
        # A smoke run must not overwrite the figures of a full run.
        path = RESULTS_DIR / (f"{name}.quick.md" if args.quick else f"{name}.md")
        _write(path, document)
        sys.stdout.write(document)
        sys.stdout.flush()
        print(f"{name}: written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
