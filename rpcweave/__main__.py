"""``rpcweave`` / ``python -m rpcweave``: the command line."""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="rpcweave",
        description="One JSON-RPC core for MCP, ACP and A2A: tools and a demo.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="run the end-to-end demo and print the wire traffic",
        description="Run the end-to-end demo: real processes talking JSON-RPC, traffic printed.",
    )
    demo.add_argument("--trace", metavar="FILE", help="also record the traffic as JSON Lines")
    demo.add_argument("--quiet", action="store_true", help="print only the summary lines")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rpcweave`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "demo":
        from ._demo import run_demo

        return run_demo(trace=args.trace, quiet=args.quiet)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
