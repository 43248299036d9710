"""Logging in to an ACP agent from the terminal: ``rpcweave acp auth`` and ``acp run --auth``.

Rules:

1. ``auth.terminal`` is advertised only when stdin is a terminal: a ``terminal`` login is
   handed this terminal (`acp_layer.run_terminal_login`), and there is nothing to hand it
   otherwise. A value an ``env_var`` method needs is taken from the environment, else asked
   for on the terminal (without echo when secret, `getpass`), else the login fails.
2. A refused session or prompt (auth_required) lists every method the agent offers, with
   the option that uses it, on stderr, then fails with one ``rpcweave: error:`` line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ._cli_common import CLIError, HelpFormatter, add_common_options, error_detail
from ._trace import Trace

if TYPE_CHECKING:
    from acp_layer import AuthEnvVar, AuthMethodEnvVar, ClientConnection, TypedAuthMethod

    from ._render import AcpView

__all__ = [
    "add_auth_parser",
    "auth_help",
    "describe_methods",
    "initialize_agent",
    "login_error",
    "login_options",
    "run_auth",
]


def add_auth_parser(sub: Any, epilog: str) -> None:
    """Add ``acp auth`` to the ``acp`` subcommands."""
    parser: argparse.ArgumentParser = sub.add_parser(
        "auth",
        help="show how an agent lets you log in (or log in, or out)",
        usage="rpcweave acp auth [--auth METHOD_ID | --logout] [options] -- AGENT_COMMAND ...",
        description="Start the agent given after --, ask it (initialize) which login methods "
        "it offers and print them with the option that uses each; no session is started. "
        "With --auth, log in with one of them; with --logout, end the agent's login (for "
        "agents that offer it).",
        epilog=epilog,
        formatter_class=HelpFormatter,
    )
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--auth", metavar="METHOD_ID", help="log in with this method")
    action.add_argument("--logout", action="store_true", help="log out (agent's auth.logout)")
    add_common_options(parser)


def _stdin_is_tty() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


async def _ask_env(method: AuthMethodEnvVar, var: AuthEnvVar) -> str | None:
    """Ask for a variable's value on the terminal (rule 1); ``None`` when there is none."""
    import getpass

    if not _stdin_is_tty():
        return None
    label = var.label or var.name
    prompt = f"{label} for {method.name} ({var.name}): "
    if var.secret:
        value = await anyio.to_thread.run_sync(getpass.getpass, prompt, abandon_on_cancel=True)
    else:
        sys.stderr.write(prompt)
        sys.stderr.flush()
        value = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
    return value.strip() or None


def login_options(args: argparse.Namespace, view: AcpView | None = None) -> dict[str, Any]:
    """``spawn_agent``'s login arguments for ``--auth`` (rule 1)."""
    from acp_layer import run_terminal_login

    interactive = _stdin_is_tty()

    async def terminal_login(argv: Sequence[str], env: Any, cwd: str | None) -> int:
        if view is not None:
            view.finish()
        print(f"(logging in: running {' '.join(argv)})", file=sys.stderr, flush=True)
        status = await run_terminal_login(argv, env, cwd)
        print(f"(the login ended with exit status {status})", file=sys.stderr, flush=True)
        return status

    return {
        "auth": args.auth,
        "ask_env": _ask_env,
        "terminal_login": terminal_login if interactive else None,
        "initialize_timeout": args.timeout,
    }


async def initialize_agent(conn: ClientConnection, shown: str, timeout: float) -> None:
    """``initialize`` within ``timeout``, its failure said as "not an ACP agent"."""
    from ._cli_common import error_message

    try:
        with anyio.fail_after(timeout):
            await conn.initialize()
    except TimeoutError:
        raise CLIError(
            f"{shown!r} is not an ACP agent: no answer to initialize within {timeout:g} s"
        ) from None
    except Exception as exc:
        raise CLIError(
            f"{shown!r} is not an ACP agent: {error_message(exc)}", detail=error_detail(exc)
        ) from None


def _how(method: TypedAuthMethod, command: Sequence[str]) -> str:
    from acp_layer import AuthMethodEnvVar, auth_method_kind
    from acp_layer import schema as s

    kind = auth_method_kind(method)
    if kind == "unknown":
        return f"(a {getattr(method, 'type', '?')!r} login, which rpcweave cannot run)"
    use = f"--auth {method.id}"  # type: ignore[union-attr]
    if isinstance(method, AuthMethodEnvVar):
        names = [v.name + ("" if not v.optional else " (optional)") for v in method.vars]
        how = f"{use} (set {', '.join(names) or 'nothing'}, or type it when asked"
        return how + (f"; get one at {method.link})" if method.link else ")")
    if isinstance(method, s.AuthMethodTerminal):
        shown = " ".join([*command, *method.args])
        return f"{use} (runs `{shown}` in this terminal)"
    return f"{use} (the agent logs you in)"


def describe_methods(methods: Sequence[TypedAuthMethod], command: Sequence[str]) -> list[str]:
    """One block per method: id, name and description, then the option that uses it."""
    lines: list[str] = []
    width = max((len(str(getattr(m, "id", "?"))) for m in methods), default=0)
    for method in methods:
        method_id = str(getattr(method, "id", "?"))
        name = str(getattr(method, "name", ""))
        description = getattr(method, "description", None)
        text = f"{name}: {description}" if description and name else (name or description or "")
        lines.append(f"  {method_id.ljust(width)}  {' '.join(text.split())}".rstrip())
        lines.append(f"  {''.ljust(width)}  {_how(method, command)}")
    return lines


def _agent_name(conn: ClientConnection) -> str:
    info = conn.agent_info
    return f"{info.title or info.name} {info.version}" if info else "the agent"


def auth_help(
    conn: ClientConnection, error: Exception, command: Sequence[str], *, asked: str | None = None
) -> Exception:
    """For an `AuthRequired` ``error`` (alone or in an exception group), print the agent's
    login methods on stderr (rule 2) and return the error to raise; else ``error``."""
    from acp_layer import AuthRequired

    from ._cli_common import error_message, leaf_exception

    exc = leaf_exception(error)
    if not isinstance(exc, AuthRequired):
        return error
    methods = list(exc.auth_methods or conn.auth_methods)
    name = _agent_name(conn)
    if methods:
        print(f"{name} asks you to log in. It offers:", file=sys.stderr)
        for line in describe_methods(methods, command):
            print(line, file=sys.stderr)
    else:
        print(f"{name} asks you to log in, and offers no login method.", file=sys.stderr)
    sys.stderr.flush()
    hint = "run again with --auth METHOD_ID" if methods else "log in outside rpcweave"
    if asked is not None:
        hint = f"still not logged in after --auth {asked}"
    return CLIError(f"{error_message(exc)}: {hint}", detail=error_detail(exc))


def login_error(error: Exception, command: Sequence[str]) -> Exception:
    """A failed ``--auth`` (`LoginFailed`, `AuthMethodNotOffered`) or ``--logout``
    (`CapabilityError`) as a `CLIError`, the offered methods listed on stderr; any other
    ``error`` as it is."""
    from acp_layer import AuthMethodNotOffered, CapabilityError, LoginFailed

    from ._cli_common import leaf_exception

    exc = leaf_exception(error)
    if isinstance(exc, AuthMethodNotOffered):
        print("The agent offers:", file=sys.stderr)
        for line in describe_methods(exc.offered, command):
            print(line, file=sys.stderr)
        sys.stderr.flush()
        return CLIError(f"no login method {exc.method_id!r}: pick one of the above")
    if isinstance(exc, LoginFailed):
        return CLIError(f"login failed: {exc}")
    if isinstance(exc, CapabilityError):  # e.g. --logout, which the agent does not offer
        return CLIError(str(exc))
    return error


async def run_auth(args: argparse.Namespace, command: list[str]) -> int:
    """``acp auth``: list the agent's login methods; log in (``--auth``) or out."""

    if not command:
        raise CLIError("no agent given: put its command after --", status=2)

    def on_stderr(line: str) -> None:
        if args.verbose:
            print(f"  [agent stderr] {line}", file=sys.stderr, flush=True)

    shown = " ".join(command)
    with Trace(args.trace, verbose=args.verbose, title=f"rpcweave acp auth {shown}") as trace:
        try:
            return await _auth_command(args, command, trace, on_stderr)
        except Exception as exc:
            raise login_error(exc, command) from None


async def _auth_command(
    args: argparse.Namespace, command: list[str], trace: Trace, on_stderr: Any
) -> int:
    from acp_layer import Client, spawn_agent

    async with spawn_agent(
        command,
        Client(),
        initialize=args.auth is not None,
        on_stderr=on_stderr,
        tap=trace.tap if trace.active else None,
        **login_options(args),
    ) as conn:
        if not conn.initialized:
            await initialize_agent(conn, " ".join(command), args.timeout)
        name = _agent_name(conn)
        if args.auth is not None:
            print(f"(logged in to {name} with {args.auth})")
            return 0
        if args.logout:
            await conn.logout()
            print(f"(logged out of {name})")
            return 0
        methods = conn.auth_methods
        if methods:
            print(f"{name} offers {len(methods)} login method(s):")
            for line in describe_methods(methods, command):
                print(line)
        else:
            print(f"{name} offers no login method (it needs none, or logs in by itself)")
        logout = conn.agent_capabilities.auth.logout is not None
        print(f"logout: {'offered (--logout)' if logout else 'not offered'}")
        if not _stdin_is_tty():
            print("(terminal logins are offered only when rpcweave runs on a terminal)")
    return 0
