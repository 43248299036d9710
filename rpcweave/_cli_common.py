"""What every subcommand shares: errors as one line, loading ``module:attr``, arguments.

Rules:

1. A command fails by raising; `error_message` turns any exception into one line for
   stderr (the CLI never shows a traceback unless ``RPCWEAVE_DEBUG`` is set), and
   `error_detail` the ``data`` of a JSON-RPC error (often the real cause) into one more.
2. ``--`` ends the CLI's own arguments: what follows is a command to start (a stdio MCP
   server, an ACP agent). `split_command` takes it off before argparse sees the rest.
3. ``--timeout SECONDS`` (default `DEFAULT_TIMEOUT`) is the total deadline of each call
   a client command makes, however slowly the server sends; running out of it is the
   one line of `timeout_error`.
4. A ``serve`` command names its target as ``module:attr``; `load_served` is the one
   loader: the object itself when the command takes it, else a function or class that
   can be called with no arguments is called once; anything else is refused with one
   line saying what the target is and what the command accepts (never a TypeError
   from calling it wrongly).
5. `listening` opens a server's port; a port in use (or any failure to bind) is one
   line naming the address and port with a hint.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.util
import inspect
import json
import socket
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup  # type: ignore[import-not-found,unused-ignore]

__all__ = [
    "DEFAULT_TIMEOUT",
    "CLIError",
    "HelpFormatter",
    "add_common_options",
    "describe_object",
    "error_detail",
    "error_message",
    "is_timeout",
    "leaf_exception",
    "listen_error",
    "listening",
    "load_object",
    "load_served",
    "parse_assignments",
    "resolve_target",
    "split_command",
    "timeout_error",
    "wait_for_signal",
]

DEFAULT_TIMEOUT = 60.0
"""``--timeout``'s default: generous for one call."""

_TIMEOUT_HELP = (
    "give up on a call (connecting, the handshake, each request) that is not answered "
    "within SECONDS in all, however slowly the server sends (default: %(default)g)"
)


class CLIError(Exception):
    """A failure to report as ``rpcweave: error: <message>`` with exit status ``status``."""

    def __init__(self, message: str, status: int = 1, *, detail: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.detail = detail
        """A second line (`error_detail` of the error this one reports)."""


class HelpFormatter(argparse.HelpFormatter):
    """Wraps prose paragraphs of descriptions and epilogs; keeps indented lines (examples)
    as they are written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.strip("\n").split("\n\n"):
            lines = paragraph.splitlines()
            if any(line.startswith(" ") for line in lines):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                paragraphs.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(paragraphs)


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """``argv`` cut at the first ``--``: (the CLI's arguments, the command after it)."""
    args = list(argv)
    if "--" in args:
        cut = args.index("--")
        return args[:cut], args[cut + 1 :]
    return args, []


def add_common_options(
    parser: argparse.ArgumentParser,
    *,
    timeout: bool = True,
    verbose: bool = True,
    timeout_help: str | None = None,
) -> None:
    """``--trace``, and unless told otherwise ``--verbose`` and ``--timeout`` (whose help
    ``timeout_help`` replaces)."""
    group = parser.add_argument_group("common options")
    group.add_argument(
        "--trace",
        metavar="FILE",
        help="record the JSON-RPC traffic to FILE (JSON Lines), with FILE's .mmd "
        "(Mermaid sequence diagram) and .html (diagram and messages) next to it",
    )
    if verbose:
        group.add_argument(
            "-v",
            "--verbose",
            action="store_true",
            help="print every message on stderr as it passes",
        )
    if timeout:
        group.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            metavar="SECONDS",
            help=timeout_help or _TIMEOUT_HELP,
        )


def is_timeout(exc: BaseException) -> bool:
    """Whether ``exc`` (or the one exception inside its groups) is a timeout."""
    return isinstance(leaf_exception(exc), TimeoutError)


def timeout_error(target: str, timeout: float) -> CLIError:
    """The one line for a call to ``target`` not answered within ``--timeout`` (rule 3)."""
    return CLIError(f"no answer from {target} within {timeout:g} s (--timeout)")


def parse_assignments(items: Sequence[str]) -> dict[str, Any]:
    """``key=value`` arguments as a dict; a value is JSON when it parses, else a string."""
    result: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise CLIError(f"expected KEY=VALUE, got {item!r}", status=2)
        if key in result:
            raise CLIError(f"argument {key!r} given twice", status=2)
        try:
            result[key] = json.loads(raw)
        except ValueError:
            result[key] = raw
    return result


def _import_module(spec: str) -> Any:
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        path = Path(spec).resolve()
        if not path.is_file():
            raise CLIError(f"no such file: {spec}")
        # Scripts import their neighbours (as `python path/to/script.py` would let them).
        sys.path.insert(0, str(path.parent))
        name = path.stem if path.stem.isidentifier() else "_rpcweave_target"
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise CLIError(f"cannot load {spec}")
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module
        loader_spec.loader.exec_module(module)
        return module
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # like `python -m`: the working directory first
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        raise CLIError(f"cannot import {spec!r}: {exc}") from None


def resolve_target(target: str) -> tuple[Any, Any]:
    """The module and the object named by ``module:attr`` (``module``: dotted or a .py path)."""
    module_spec, sep, attr = target.rpartition(":")
    if not sep or not module_spec or not attr:
        raise CLIError(f"expected MODULE:ATTRIBUTE, got {target!r}", status=2)
    module = _import_module(module_spec)
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise CLIError(f"{module_spec!r} has no attribute {attr!r}") from None
    return module, value


def load_object(target: str) -> Any:
    """The object named by ``module:attr`` (see `resolve_target`)."""
    return resolve_target(target)[1]


def describe_object(value: Any) -> str:
    """What ``value`` is, for an error line: "a function taking (x, y)", "an int"."""
    if inspect.isclass(value):
        return f"a class {value.__name__}{_parameters(value)}"
    if inspect.iscoroutinefunction(value):
        return f"an async function taking {_parameters(value)}"
    if inspect.isfunction(value) or inspect.ismethod(value) or inspect.isbuiltin(value):
        return f"a function taking {_parameters(value)}"
    name = type(value).__name__
    article = "an" if name[:1].lower() in "aeiou" else "a"
    return f"{article} {name} object" if callable(value) else f"{article} {name}"


def _parameters(value: Any) -> str:
    try:
        signature = inspect.signature(value)
    except (TypeError, ValueError):
        return "(...)"
    return "(" + ", ".join(signature.parameters) + ")"


def _callable_without_arguments(value: Any) -> bool:
    try:
        inspect.signature(value).bind()
    except TypeError:
        return False
    except ValueError:  # no signature to read (some builtins): try it
        return True
    return True


def load_served(
    target: str, command: str, accepts: str, accept: Callable[[Any], bool]
) -> tuple[Any, Any]:
    """(module, object) for ``serve``'s ``module:attr`` (rule 4).

    ``accept`` says whether an object is one ``command`` serves (described by
    ``accepts``, e.g. "an mcp_layer.MCPServer or a function returning one"). A target
    that is not is called once when it takes no arguments (a factory, or a class); what
    it returns must be accepted."""
    module, value = resolve_target(target)
    if accept(value):
        return module, value
    refused = f"{target} is {describe_object(value)}"
    if callable(value) and _callable_without_arguments(value):
        produced = value()
        if inspect.isawaitable(produced):
            close = getattr(produced, "close", None)
            if close is not None:
                close()
            raise CLIError(f"{refused}; {command} accepts {accepts}")
        if accept(produced):
            return module, produced
        refused += f" returning {describe_object(produced)}"
    raise CLIError(f"{refused}; {command} accepts {accepts}")


_LISTEN_HINTS = {
    errno.EADDRINUSE: "address already in use (another server is running there? "
    "--port 0 picks a free port)",
    errno.EACCES: "permission denied (ports below 1024 need privileges; --port 0 picks a "
    "free port)",
    errno.EADDRNOTAVAIL: "address not available (--host must be an address of this machine)",
}


def listen_error(host: str, port: int, exc: OSError) -> CLIError:
    """The one line for a server that cannot bind ``host:port`` (rule 5)."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if isinstance(exc, socket.gaierror):
        reason = f"unknown host {host!r} (--host takes an address, e.g. 127.0.0.1)"
    else:
        reason = _LISTEN_HINTS.get(exc.errno or 0) or (exc.strerror or str(exc)).lower()
    return CLIError(f"cannot listen on {where}: {reason}")


@asynccontextmanager
async def listening(app: Any, host: str, port: int) -> AsyncIterator[str]:
    """`jsonrpc_core.running_server` for a ``serve`` command: its base URL (rule 5)."""
    from jsonrpc_core import running_server

    started = False
    try:
        async with running_server(app, host=host, port=port) as url:
            started = True
            yield url
    except OSError as exc:
        if started:
            raise
        raise listen_error(host, port, exc) from None


async def wait_for_signal() -> None:
    """Return on SIGINT or SIGTERM (a server's way to stop cleanly)."""
    import signal

    import anyio

    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async for _ in signals:
            return


def leaf_exception(exc: BaseException) -> BaseException:
    """The one exception inside nested single-member exception groups (else ``exc``)."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def error_message(exc: BaseException) -> str:
    """One line saying what went wrong (rule 1)."""
    from jsonrpc_core import ConnectionClosed, JsonRpcError, RequestTimeout, TransportError

    exc = leaf_exception(exc)
    if isinstance(exc, BaseExceptionGroup):
        text = "; ".join(error_message(inner) for inner in exc.exceptions)
    elif isinstance(exc, CLIError):
        text = exc.message
    elif isinstance(exc, RequestTimeout):
        text = f"no answer in time: {exc}"
    elif isinstance(exc, ConnectionClosed):
        reason = str(exc).removeprefix("Connection closed").lstrip(": ").strip()
        text = "the connection closed" + (
            f": {reason}" if reason and reason.lower() != "connection closed" else ""
        )
    elif isinstance(exc, TransportError):
        text = str(exc) or type(exc).__name__
    elif isinstance(exc, JsonRpcError):
        text = f"{exc.message} (error {exc.code})"
    elif isinstance(exc, TimeoutError):
        text = "timed out"
    else:
        text = _other_message(exc)
    return " ".join(text.split())


_MAX_DETAIL = 500


def error_detail(exc: BaseException) -> str | None:
    """The ``data`` of a JSON-RPC error as one line (its ``message`` and ``details`` first,
    then any other member), or a `CLIError`'s ``detail``; ``None`` when there is none."""
    from jsonrpc_core import JsonRpcError

    exc = leaf_exception(exc)
    if isinstance(exc, CLIError):
        return exc.detail
    if not isinstance(exc, JsonRpcError) or not exc.has_data or exc.data is None:
        return None
    data = exc.data
    if isinstance(data, dict):
        parts = [_text(data[key]) for key in ("message", "details") if data.get(key) is not None]
        parts += [
            f"{key}: {_text(value)}"
            for key, value in data.items()
            if key not in ("message", "details") and value is not None
        ]
        text = "; ".join(part for part in parts if part)
    else:
        text = _text(data)
    text = " ".join(text.split())
    if not text or text == exc.message:
        return None
    return text if len(text) <= _MAX_DETAIL else text[: _MAX_DETAIL - 1] + "…"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def _other_message(exc: BaseException) -> str:
    import httpx
    import pydantic

    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code} from {exc.request.url}"
    if isinstance(exc, httpx.HTTPError):
        try:
            where = f" {exc.request.url}"
        except RuntimeError:
            where = ""
        return f"cannot reach{where}: {exc or type(exc).__name__}"
    if isinstance(exc, pydantic.ValidationError):
        first = exc.errors()[0]
        location = ".".join(str(part) for part in first.get("loc", ()))
        return f"unexpected answer from the peer ({exc.error_count()} problem(s)): {location}: " + (
            first.get("msg", "")
        )
    if isinstance(exc, OSError):
        if exc.strerror and exc.filename:
            return f"{exc.strerror}: {exc.filename}"
        return str(exc) or type(exc).__name__
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
