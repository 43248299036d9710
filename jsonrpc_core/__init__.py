"""jsonrpc_core: everything JSON-RPC 2.0, once, for every protocol layer.

Messages and their wire form (`parse`, `encode`), the error tree (`JsonRpcError` and
friends), methods declared as data (`RequestType`, `NotificationType`,
`MethodRegistry`), the bidirectional `Peer`, and transports behind one
`MessageStream` interface (in-memory, stdio, NDJSON over any byte stream), JSON-RPC
over HTTP (`JsonRpcHTTPApp`, `serve`, `StreamableHTTPTransport`) and the wire tap.

What protocol layers and HTTP extensions build on besides is public too, in two
submodules: `jsonrpc_core.http` (requests, routes and sessions of the ASGI app, the
HTTP/1.1 client transport, body limits, the SSE codec, shared event stores) and
`jsonrpc_core.postgres` (the PostgreSQL stores and their plumbing). A package built on
the core declares its own exports with `install_lazy_exports`.
"""

# Every name is loaded on first use (PEP 562), so a process pays only for the parts it
# touches: a stdio peer never imports the HTTP server, httpx or the event stores. Each
# name is declared once, in the block at the end (see `install_lazy_exports`).

from typing import TYPE_CHECKING, Any


def install_lazy_exports(namespace: dict[str, Any]) -> bool:
    """Make the re-exports of the module whose ``globals()`` is ``namespace`` load on first use.

    A package built on the core (every layer is one) declares each name it exports once,
    as a PEP 484 re-export (``from .module import Name as Name``), and puts those to load
    lazily in one block at the top level::

        from typing import TYPE_CHECKING

        from jsonrpc_core import install_lazy_exports

        from ._small import Cheap as Cheap  # loaded with the package

        if TYPE_CHECKING or not install_lazy_exports(globals()):
            from ._big import Heavy as Heavy  # loaded on first use

    Type checkers read the block as plain imports. At run time this reads the block from
    the module's source, installs a module ``__getattr__`` (PEP 562) that imports a name
    when it is first asked for, and sets ``__all__`` to every name the module re-exports
    (after those a literal ``__all__`` already lists). A re-exported submodule
    (``from . import types as types``) loads on first use too. Without the source (a
    bytecode-only install) it returns False, and the block imports everything at once.

    Raises ValueError if the block holds anything but such re-exports.
    """
    path = namespace.get("__file__")
    if not isinstance(path, str) or not path.endswith(".py"):
        return False
    try:
        with open(path, encoding="utf-8") as file:
            source = file.read()
    except OSError:
        return False
    module = namespace["__name__"]
    eager, lazy = _scan_reexports(source, module)
    package = namespace["__package__"]
    exported = [*namespace.get("__all__", ()), *eager, *lazy]

    def __getattr__(name: str) -> Any:
        try:
            where = lazy[name]
        except KeyError:
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
        import importlib

        if where.strip("."):
            value = getattr(importlib.import_module(where, package), name)
        else:  # `from . import name as name`: a submodule
            value = importlib.import_module(where + name, package)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(exported))

    namespace.update(__getattr__=__getattr__, __dir__=__dir__, __all__=exported)
    return True


_LAZY_BLOCK = "if TYPE_CHECKING or not install_lazy_exports(globals()):"


def _scan_reexports(source: str, module: str) -> tuple[list[str], dict[str, str]]:
    """The names ``source`` re-exports at its top level (loaded eagerly) and in its lazy
    block (the lines indented under `_LAZY_BLOCK`, as name -> module).

    Line by line with string methods: this runs on every import of every package that
    uses it, and a regular expression over the whole source costs several times more."""
    eager: list[str] = []
    lazy: dict[str, str] = {}
    lines = source.splitlines()
    in_block = found = False
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line == _LAZY_BLOCK:
            in_block = found = True
            continue
        if in_block and line[:1] not in ("", " ", "\t"):
            in_block = False
        text = line.strip()
        if not in_block and not line.startswith("from ."):
            continue
        if not text or text.startswith("#"):
            continue
        where, import_, imported = text.partition("#")[0].rstrip()[5:].partition(" import ")
        if not (text.startswith("from .") and import_ and " " not in where):
            if in_block:
                raise ValueError(f"{module}: not a re-export in the lazy block: {text!r}")
            continue
        items = [imported]
        if imported.startswith("("):  # a group, closed on a later line
            items = [imported[1:]]
            while ")" not in items[-1]:
                items.append(lines[index].partition("#")[0])
                index += 1
            items[-1] = items[-1].partition(")")[0]
        for name in _reexported(",".join(items), module, strict=in_block):
            if in_block:
                lazy[name] = where
            else:
                eager.append(name)
    if not found:
        raise ValueError(f"{module}: no line {_LAZY_BLOCK!r}")
    return eager, lazy


def _reexported(imported: str, module: str, *, strict: bool) -> list[str]:
    """The names of ``imported`` (what follows ``import``) in the ``Name as Name`` form;
    with ``strict``, any other form is an error."""
    names = []
    for item in imported.split(","):
        name, as_, alias = item.strip().partition(" as ")
        if as_ and name == alias:
            names.append(name)
        elif strict and item.strip():
            raise ValueError(f"{module}: {item.strip()!r} is not a re-export `Name as Name`")
    return names


if TYPE_CHECKING or not install_lazy_exports(globals()):
    from ._backend import is_asyncio as is_asyncio
    from ._bytestream import NdjsonStream as NdjsonStream
    from ._context import RequestContext as RequestContext
    from ._deadline import Deadline as Deadline
    from ._errors import STANDARD_ERRORS as STANDARD_ERRORS
    from ._errors import ConnectionClosed as ConnectionClosed
    from ._errors import ErrorTable as ErrorTable
    from ._errors import InternalError as InternalError
    from ._errors import InvalidParams as InvalidParams
    from ._errors import InvalidRequest as InvalidRequest
    from ._errors import JsonRpcError as JsonRpcError
    from ._errors import LocalError as LocalError
    from ._errors import MethodNotFound as MethodNotFound
    from ._errors import ParseError as ParseError
    from ._errors import RequestCancelled as RequestCancelled
    from ._errors import RequestTimeout as RequestTimeout
    from ._errors import ResultValidationError as ResultValidationError
    from ._errors import RpcError as RpcError
    from ._errors import ServerError as ServerError
    from ._errors import TransportError as TransportError
    from ._errors import error_class_for_code as error_class_for_code
    from ._errors import error_from_object as error_from_object
    from ._errors import register_error as register_error
    from ._event_store import EventStore as EventStore
    from ._event_store import InMemoryEventStore as InMemoryEventStore
    from ._framing import DEFAULT_MAX_MESSAGE_SIZE as DEFAULT_MAX_MESSAGE_SIZE
    from ._framing import LineFramer as LineFramer
    from ._framing import Oversized as Oversized
    from ._http_client import HTTPSSETransport as HTTPSSETransport
    from ._http_client import HTTPStatusError as HTTPStatusError
    from ._http_client import SessionExpired as SessionExpired
    from ._http_client import StreamableHTTPTransport as StreamableHTTPTransport
    from ._http_common import HTTPError as HTTPError
    from ._http_security import BearerAuth as BearerAuth
    from ._http_security import OriginPolicy as OriginPolicy
    from ._http_security import TokenVerifier as TokenVerifier
    from ._http_serve import running_server as running_server
    from ._http_serve import serve as serve
    from ._http_server import HTTPServerOptions as HTTPServerOptions
    from ._http_server import JsonRpcHTTPApp as JsonRpcHTTPApp
    from ._http_sessions import SessionPolicy as SessionPolicy
    from ._methods import MethodRegistry as MethodRegistry
    from ._methods import NotificationType as NotificationType
    from ._methods import RequestType as RequestType
    from ._methods import format_validation_error as format_validation_error
    from ._peer import CancelHook as CancelHook
    from ._peer import Peer as Peer
    from ._peer import RequestFilter as RequestFilter
    from ._stdio import FdReceiveStream as FdReceiveStream
    from ._stdio import FdSendStream as FdSendStream
    from ._stdio import StdioProcess as StdioProcess
    from ._stdio import spawn_stdio as spawn_stdio
    from ._stdio import stdio_server as stdio_server
    from ._tap import JsonLinesSink as JsonLinesSink
    from ._tap import TappedStream as TappedStream
    from ._tap import TapRecord as TapRecord
    from ._tap import WireTap as WireTap
    from ._transport import MemoryMessageStream as MemoryMessageStream
    from ._transport import MessageStream as MessageStream
    from ._transport import Received as Received
    from ._transport import encode_payload as encode_payload
    from ._transport import memory_pair as memory_pair
    from ._wire import Batch as Batch
    from ._wire import ErrorResponse as ErrorResponse
    from ._wire import Incoming as Incoming
    from ._wire import InvalidMessage as InvalidMessage
    from ._wire import Message as Message
    from ._wire import Notification as Notification
    from ._wire import Request as Request
    from ._wire import RequestId as RequestId
    from ._wire import Response as Response
    from ._wire import StreamEnd as StreamEnd
    from ._wire import encode as encode
    from ._wire import encode_batch as encode_batch
    from ._wire import parse as parse
    from ._wire import parse_object as parse_object
    from ._wire import recover_id as recover_id
