"""``rpcweave acp run``: a terminal ACP client (the editor's side) for any agent.

The agent's updates are printed as they stream (`AcpView`); file access is served inside
the working directory and terminals run locally (`acp_layer.LocalClient`); permission is
asked at the terminal, or granted with ``--yes``. With ``--prompt`` the turns run one
after the other and the command ends; without, each line read is a turn (Ctrl-D ends).
Ctrl-C cancels the running turn; a second Ctrl-C within two seconds, or one at the prompt,
ends the run (exit status 130): see `rpcweave._console`.

Rule: a command the agent asks to run (``terminal/create``) runs only with consent: ``--yes``,
a ``y`` typed at the terminal (asked only when stdin is a TTY: a pipe may hold prompts or
scripted answers, not the user's word for a command), or an ``execute`` permission the
user granted in the same turn. With no terminal to ask on and no ``--yes`` it is refused.

Logging in (``_cli_acp_auth``): an agent that refuses a session or a prompt with
auth_required gets its login methods listed, and ``--auth METHOD_ID`` runs one;
``rpcweave acp auth`` shows them without starting a session.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

from ._cli_acp_auth import (
    add_auth_parser,
    auth_help,
    initialize_agent,
    login_error,
    login_options,
)
from ._cli_common import CLIError, HelpFormatter, add_common_options, leaf_exception
from ._console import Interrupts, read_line
from ._render import AcpView, permission_choice
from ._trace import Trace

if TYPE_CHECKING:
    from acp_layer import ClientConnection, LocalClient, TerminalCommand
    from acp_layer import schema as acp

__all__ = ["add_parser", "run"]

_EPILOG = """examples:
  rpcweave acp run -- python -m rpcweave.examples.acp.demo_agent
  rpcweave acp run --yes --prompt '/write notes.txt hi' \\
      -- python -m rpcweave.examples.acp.demo_agent
  rpcweave acp run --yes --prompt '/run ls -l' -- python -m rpcweave.examples.acp.demo_agent
  rpcweave acp auth -- npx @zed-industries/codex-acp
  rpcweave acp run --auth codex-api-key -- npx @zed-industries/codex-acp

Zed's agent_servers setting starts agents the same way (a command and its arguments).
"""


def add_parser(commands: Any) -> None:
    """Add ``acp`` and its subcommands to the top-level subparsers."""
    acp_parser: argparse.ArgumentParser = commands.add_parser(
        "acp",
        help="Agent Client Protocol: run an agent in the terminal",
        description="Be the editor for an ACP agent.",
        epilog=_EPILOG,
        formatter_class=HelpFormatter,
    )
    sub = acp_parser.add_subparsers(dest="acp_command", metavar="COMMAND", required=True)
    run_parser = sub.add_parser(
        "run",
        help="start an agent and talk to it",
        usage="rpcweave acp run [options] [--prompt TEXT ...] [--yes] -- AGENT_COMMAND ...",
        description="Start the agent given after --, open a session in the working "
        "directory and run prompt turns, printing what the agent streams: message text, tool "
        "calls and their status, plans, diffs, terminal output. The agent may read and write "
        "files inside the working directory and run commands in it; each permission it asks "
        "is put to you (or granted with --yes), and so is each command it asks to run, unless "
        "you granted it in the same turn (with no terminal to ask on, commands are refused "
        "unless --yes). With --prompt the turns run in order and the "
        "exit status is 0 only if every turn ended normally (stop reason end_turn); without "
        "it, each line you type is a turn (Ctrl-D quits). Ctrl-C cancels the running turn; "
        "a second Ctrl-C within two seconds, or one at the prompt, quits (exit status 130).",
        epilog=_EPILOG,
        formatter_class=HelpFormatter,
    )
    run_parser.add_argument(
        "--prompt",
        action="append",
        default=[],
        metavar="TEXT",
        help="a prompt turn (repeat for several); makes the run non-interactive",
    )
    run_parser.add_argument(
        "--yes",
        action="store_true",
        help="grant every permission the agent asks for and run every command it asks to run",
    )
    run_parser.add_argument(
        "--auth",
        metavar="METHOD_ID",
        help="log in with this one of the agent's login methods first (an agent that asks "
        "for a login lists them): the agent's own login, an environment variable (taken from "
        "the environment or asked for without echo), or a login run in this terminal",
    )
    run_parser.add_argument(
        "--cwd",
        metavar="DIR",
        help="the session's working directory, the limit of its file access (default: here)",
    )
    add_common_options(
        run_parser,
        timeout_help="give up on starting the agent (initialize, session/new) when it does not "
        "answer within SECONDS (default: %(default)g); prompt turns run for as long as the "
        "agent works",
    )
    add_auth_parser(sub, _EPILOG)


def _pick(options: list[acp.PermissionOption], kinds: tuple[str, ...]) -> str | None:
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None


class _Permissions:
    """Answers permission requests: ``--yes``, or the person at the terminal."""

    def __init__(self, view: AcpView, *, yes: bool, lock: anyio.Lock) -> None:
        self.view = view
        self.yes = yes
        self.lock = lock  # one question at a time on the terminal

    async def __call__(self, request: acp.RequestPermissionRequest) -> acp.RequestPermissionOutcome:
        from acp_layer import schema as s

        options = list(request.options)
        chosen: str | None
        if self.yes:
            chosen = _pick(options, ("allow_once", "allow_always"))
            print(self.view.permission(request), file=sys.stderr)
            print(f"  (granted: --yes → {chosen})", file=sys.stderr, flush=True)
        else:
            async with self.lock:
                chosen = await self._ask(request, options)
        if chosen is None:
            return s.CancelledPermissionOutcome()
        return s.SelectedPermissionOutcome(option_id=chosen)

    async def _ask(
        self, request: acp.RequestPermissionRequest, options: list[acp.PermissionOption]
    ) -> str | None:
        print(self.view.permission(request), file=sys.stderr, flush=True)
        for _ in range(3):
            sys.stderr.write(f"choose 1-{len(options)} (or y/n): ")
            sys.stderr.flush()
            line = await read_line()
            if not line:  # nobody to ask: refuse
                chosen = _pick(options, ("reject_once", "reject_always"))
                print(f"\n  (no answer: rejected → {chosen})", file=sys.stderr, flush=True)
                return chosen
            chosen = permission_choice(line, options)
            if chosen is not None:
                return chosen
        return _pick(options, ("reject_once", "reject_always"))


class _Commands:
    """Consent for the commands the agent runs: ``--yes``, or a y/N question on the TTY."""

    def __init__(
        self, view: AcpView, *, yes: bool, lock: anyio.Lock, interactive: Callable[[], bool]
    ) -> None:
        self.view = view
        self.yes = yes
        self.lock = lock
        self.interactive = interactive

    async def __call__(self, command: TerminalCommand) -> bool:
        shown = f"run `{command.command_line()}` in {command.cwd}"
        self.view.finish()
        if self.yes:
            print(f"  (granted: --yes → {shown})", file=sys.stderr, flush=True)
            return True
        if not self.interactive():
            print(
                f"  (refused: {shown}: no terminal to ask on; pass --yes to run commands)",
                file=sys.stderr,
                flush=True,
            )
            return False
        async with self.lock:
            sys.stderr.write(self.view.style.bold(f"? {shown}?") + " [y/N] ")
            sys.stderr.flush()
            line = await read_line()
        allowed = line.strip().lower() in ("y", "yes")
        if not allowed:
            print(f"  (refused: {shown})", file=sys.stderr, flush=True)
        return allowed


def _local_client(view: AcpView) -> LocalClient:
    """The `LocalClient`, telling in the view of a file the agent looked for and did not find
    (answered -32002, as an agent reading before it writes a new file expects)."""
    from acp_layer import LocalClient, ResourceNotFound

    class ShownClient(LocalClient):
        async def read_text_file(self, params: acp.ReadTextFileRequest) -> acp.ReadTextFileResponse:
            try:
                return await super().read_text_file(params)
            except ResourceNotFound:
                view.not_found(params.path)
                raise

    return ShownClient(on_update=view.update)


def _stdin_is_tty() -> bool:
    """Whether someone can be asked on stdin (looked up at each question: tests swap it)."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):  # closed
        return False


async def _turn(
    conn: ClientConnection, session_id: str, text: str, view: AcpView, interrupts: Interrupts
) -> bool:
    """One prompt turn; Ctrl-C cancels it (`Interrupts`). Whether it ended normally."""
    interrupts.turn(lambda: conn.cancel(session_id))
    try:
        response = await conn.prompt(session_id, text)
    finally:
        interrupts.turn(None)
    view.end_turn(response.stop_reason)
    return response.stop_reason == "end_turn"


async def _interactive(
    conn: ClientConnection, session_id: str, view: AcpView, interrupts: Interrupts
) -> bool:
    ok = True
    while True:
        if sys.stdin.isatty():
            view.show_prompt("> ", sys.stderr)
        try:
            line = await read_line()
        finally:
            view.prompt_answered()
        if not line or line.strip() in ("/quit", "/exit"):
            return ok
        if line.strip():
            ok = await _turn(conn, session_id, line.rstrip("\n"), view, interrupts) and ok


async def _session(
    conn: ClientConnection,
    args: argparse.Namespace,
    cwd: Path,
    view: AcpView,
    interrupts: Interrupts,
) -> bool:
    with anyio.fail_after(args.timeout):
        session = await conn.new_session(str(cwd))
    info = conn.agent_info
    name = f"{info.title or info.name} {info.version}" if info else "the agent"
    print(
        view.style.dim(f"(connected to {name}; session {session.session_id} in {cwd})"),
        flush=True,
    )
    if args.prompt:
        ok = True
        for text in args.prompt:
            ok = await _turn(conn, session.session_id, text, view, interrupts) and ok
        return ok
    return await _interactive(conn, session.session_id, view, interrupts)


def _working_directory(given: str | None) -> Path:
    cwd = Path(given or os.getcwd()).resolve()
    if not cwd.is_dir():
        raise CLIError(f"not a directory: {cwd}")
    return cwd


async def run(args: argparse.Namespace, command: list[str]) -> int:
    """Run ``acp run`` or ``acp auth``: the agent is ``command``."""
    if args.acp_command == "auth":
        from ._cli_acp_auth import run_auth

        return await run_auth(args, command)
    if not command:
        raise CLIError("no agent given: put its command after --", status=2)
    cwd = _working_directory(args.cwd)
    view = AcpView(sys.stdout)
    lock = anyio.Lock()
    client = _local_client(view)
    client.permission = _Permissions(view, yes=args.yes, lock=lock)
    client.commands = _Commands(view, yes=args.yes, lock=lock, interactive=_stdin_is_tty)
    view.client = client

    def on_stderr(line: str) -> None:
        if args.verbose:  # printed here only: the library's log line is muted (__main__)
            view.finish()
            print(f"  [agent stderr] {line}", file=sys.stderr, flush=True)

    def notice(text: str) -> None:
        view.finish()
        print(text, file=sys.stderr, flush=True)

    ok = False
    with anyio.CancelScope() as scope:
        interrupts = Interrupts(scope, notice=notice)
        try:
            async with anyio.create_task_group() as watcher:
                watcher.start_soon(interrupts.watch)
                try:
                    ok = await _run_agent(args, command, cwd, view, client, interrupts, on_stderr)
                finally:
                    watcher.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # the one failure inside, as it was raised
            raise leaf_exception(group) from None
    if interrupts.quit:
        view.finish()
        print("rpcweave: interrupted", file=sys.stderr, flush=True)
        return 130
    return 0 if ok else 1


async def _run_agent(
    args: argparse.Namespace,
    command: list[str],
    cwd: Path,
    view: AcpView,
    client: LocalClient,
    interrupts: Interrupts,
    on_stderr: Callable[[str], None],
) -> bool:
    """Start the agent, initialize, and run the session; whether every turn ended well."""
    from acp_layer import spawn_agent

    shown = " ".join(command)
    with Trace(args.trace, verbose=args.verbose, title=f"rpcweave acp run {shown}") as trace:
        try:
            async with spawn_agent(
                command,
                client,
                initialize=args.auth is not None,  # a login needs the methods first
                on_stderr=on_stderr,
                tap=trace.tap if trace.active else None,
                **login_options(args, view),
            ) as conn:
                if not conn.initialized:
                    await initialize_agent(conn, shown, args.timeout)
                try:
                    return await _session(conn, args, cwd, view, interrupts)
                except Exception as exc:
                    raise auth_help(conn, exc, command, asked=args.auth) from None
        except Exception as exc:
            raise login_error(exc, command) from None
        finally:
            view.finish()
