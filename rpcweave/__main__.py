"""``rpcweave`` / ``python -m rpcweave``: the command line.

Exit status: 0 on success, 1 when the work failed (a tool error, a failed task, an
unreachable server), 2 for a usage error, 130 when interrupted. Failures are one line on
stderr (and a ``detail:`` line with a JSON-RPC error's ``data``); ``RPCWEAVE_DEBUG=1`` adds
the traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

from ._cli_common import (
    CLIError,
    HelpFormatter,
    add_common_options,
    error_detail,
    error_message,
    split_command,
)

__all__ = ["build_parser", "main"]

_EPILOG = """examples:
  rpcweave demo
  rpcweave mcp tools -- python -m rpcweave.examples.mcp.file_server .
  rpcweave acp run -- python -m rpcweave.examples.acp.demo_agent
  rpcweave a2a card http://127.0.0.1:9999
  rpcweave example

The example programs are installed with rpcweave (rpcweave example lists them).

Every command takes --trace FILE: the JSON-RPC traffic as JSON Lines, with a Mermaid
sequence diagram (FILE's .mmd) and a page to open in a browser (FILE's .html) next to it.
"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    from . import _cli_a2a, _cli_acp, _cli_example, _cli_mcp

    parser = argparse.ArgumentParser(
        prog="rpcweave",
        description="One JSON-RPC core for MCP, ACP and A2A: clients, servers and a demo.",
        epilog=_EPILOG,
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version="rpcweave 0.1.0")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    _cli_mcp.add_parser(commands)
    _cli_acp.add_parser(commands)
    _cli_a2a.add_parser(commands)
    _cli_example.add_parser(commands)
    demo = commands.add_parser(
        "demo",
        help="run the MCP, ACP and A2A flows end to end, printing the wire traffic",
        description="Run the classic flows with real processes on 127.0.0.1: an MCP host "
        "reading a file through a stdio tool server; an editor and an ACP agent writing a file "
        "with permission; a research agent delegating to a coding agent over A2A (polling, "
        "SSE and webhook push); and the bare JSON-RPC core. Each flow's traffic is printed and "
        "saved as a trace, a Mermaid diagram and an HTML page in the output directory. Ends "
        "with one PASS or FAIL line per flow; the exit status is 1 if any failed.",
    )
    demo.add_argument(
        "--output",
        metavar="DIR",
        default="demo-output",
        help="where the traces and the demo's files go (default: %(default)s)",
    )
    demo.add_argument("--quiet", action="store_true", help="print only the summary lines")
    demo.add_argument(
        "--only",
        action="append",
        choices=["mcp", "acp", "a2a", "jsonrpc"],
        help="run only this flow (repeat for several)",
    )
    demo.add_argument(
        "--otel",
        action="store_true",
        help="instead, run one ACP prompt turn that calls an MCP tool and an A2A agent, "
        "traced with the OpenTelemetry SDK, and print the trace as a tree (with --trace, "
        "the trace page shows the spans beside the messages)",
    )
    add_common_options(demo, timeout=False, verbose=False)
    return parser


def _dispatch(args: argparse.Namespace, command: list[str]) -> int:
    import anyio

    if args.command == "demo":
        from ._demo import run_demo

        if command:
            raise CLIError("demo takes no command after --", status=2)
        if args.otel:
            from ._demo_otel import run_otel_demo

            return run_otel_demo(trace=args.trace)
        return run_demo(
            output=args.output,
            trace=args.trace,
            quiet=args.quiet,
            only=args.only,
        )
    if args.command == "example":
        from . import _cli_example

        if command:
            raise CLIError("example takes no command after --", status=2)
        return _cli_example.run(args)
    if args.command == "mcp":
        from . import _cli_mcp

        return anyio.run(_cli_mcp.run, args, command)
    if args.command == "acp":
        from . import _cli_acp

        return anyio.run(_cli_acp.run, args, command)
    from . import _cli_a2a

    return anyio.run(_cli_a2a.run, args, command)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rpcweave`` console script; returns the exit status."""
    own, command = split_command(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(own)
    if args.command is None:
        parser.print_help()
        return 2
    _configure_logging(verbose=bool(getattr(args, "verbose", False)))
    try:
        return _dispatch(args, command)
    except KeyboardInterrupt:
        print("rpcweave: interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except BaseException as exc:
        if _is_broken_pipe(exc):  # the reader went away (`| head`): stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 141
        if os.environ.get("RPCWEAVE_DEBUG"):
            traceback.print_exc()
        status = exc.status if isinstance(exc, CLIError) else 1
        if status == 2:
            parser_for = _subparser(parser, args)
            print(f"{parser_for.format_usage().rstrip()}", file=sys.stderr)
        print(f"rpcweave: error: {error_message(exc)}", file=sys.stderr)
        detail = error_detail(exc)
        if detail:
            print(f"  detail: {detail}", file=sys.stderr)
        return status


def _is_broken_pipe(exc: BaseException) -> bool:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return isinstance(exc, BrokenPipeError)


def _configure_logging(*, verbose: bool) -> None:
    """Library log lines only with --verbose: failures are reported once, as one line."""
    import logging

    root = logging.getLogger()
    if verbose:
        logging.basicConfig(level=logging.INFO, format="  [%(name)s] %(message)s")
        # The commands print a server's or agent's stderr lines themselves (on_stderr).
        logging.getLogger("jsonrpc_core.stdio.stderr").setLevel(logging.WARNING)
    elif not root.handlers:
        root.addHandler(logging.NullHandler())


def _subparser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the subcommand ``args`` came from (for its usage line)."""
    path = [args.command] + [
        getattr(args, name)
        for name in ("mcp_command", "acp_command", "a2a_command")
        if getattr(args, name, None)
    ]
    current = parser
    for name in path:
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction) and name in action.choices:
                current = action.choices[name]
                break
    return current


if __name__ == "__main__":
    sys.exit(main())
