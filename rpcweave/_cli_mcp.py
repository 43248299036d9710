"""``rpcweave mcp``: look into an MCP server, call its tools, or serve one.

TARGET is a URL (Streamable HTTP, or the 2024-11-05 HTTP+SSE transport with ``--sse``)
or, after ``--``, the command of a stdio server. Every client command opens a session
(``initialize``), does one thing and closes it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from ._cli_common import (
    CLIError,
    HelpFormatter,
    add_common_options,
    error_detail,
    error_message,
    is_timeout,
    listening,
    load_served,
    parse_assignments,
    timeout_error,
    wait_for_signal,
)
from ._cli_elicit import TerminalElicitation, no_terminal_error
from ._render import Style
from ._trace import Trace

if TYPE_CHECKING:
    from mcp_layer import ClientSession, MCPServer
    from mcp_layer import types as mcp

__all__ = ["add_parser", "run"]

_TARGET_HELP = (
    "TARGET is the server's URL (Streamable HTTP, e.g. http://127.0.0.1:8000/mcp; "
    "HTTP+SSE with --sse) or, after --, the command that starts a stdio server."
)
_EPILOG = """examples:
  rpcweave mcp tools -- python -m rpcweave.examples.mcp.file_server .
  rpcweave mcp call read_file path=README.md -- python -m rpcweave.examples.mcp.file_server .
  rpcweave mcp tools http://127.0.0.1:8000/mcp
  rpcweave mcp serve rpcweave.examples.mcp.everything_server:build_server --http --port 8000
"""


def _client_parser(
    commands: Any, name: str, usage: str, help_text: str, description: str
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=help_text,
        usage=f"rpcweave mcp {name} [options] {usage}",
        description=f"{description} {_TARGET_HELP}",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--sse", action="store_true", help="the URL speaks HTTP+SSE (2024-11-05)")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")
    parser.add_argument(
        "--protocol-version",
        metavar="VERSION",
        help="the MCP revision to speak: a handshake-era one (default: the newest), "
        "2026-07-28, or auto (server/discover, else initialize)",
    )
    add_common_options(parser)
    return parser


def add_parser(commands: Any) -> None:
    """Add ``mcp`` and its subcommands to the top-level subparsers."""
    mcp_parser: argparse.ArgumentParser = commands.add_parser(
        "mcp",
        help="Model Context Protocol: list, call, read, serve",
        description="Talk to an MCP server, or serve one. " + _TARGET_HELP,
        epilog=_EPILOG,
        formatter_class=HelpFormatter,
    )
    sub = mcp_parser.add_subparsers(dest="mcp_command", metavar="COMMAND", required=True)
    for name, what in (
        ("tools", "the server's tools and their arguments"),
        ("resources", "the server's resources and resource templates"),
        ("prompts", "the server's prompts and their arguments"),
    ):
        parser = _client_parser(
            sub, name, "(URL | -- COMMAND ...)", f"list {what}", f"List {what}."
        )
        parser.add_argument("words", nargs="*", metavar="URL", help="the server's URL")
    call = _client_parser(
        sub,
        "call",
        "[URL] TOOL [KEY=VALUE ...] [-- COMMAND ...]",
        "call a tool",
        "Call a tool with arguments given as KEY=VALUE (a VALUE is read as JSON when it "
        "parses: n=3, flag=true, tags='[\"a\"]'; else it is a string). A tool error is "
        "printed on stderr and the exit status is 1. A tool that must run as a task "
        '(2025-11-25 tasks, execution.taskSupport "required") runs as one, its status '
        "and progress on stderr; Ctrl-C or the timeout cancels the task.",
    )
    call.add_argument(
        "words", nargs="+", metavar="ARG", help="[URL] TOOL [KEY=VALUE ...] (no URL with --)"
    )
    call.add_argument(
        "--allow-extra",
        action="store_true",
        help="send arguments the tool's inputSchema does not declare (refused by default: "
        "most likely a typo)",
    )
    call.add_argument(
        "--task",
        action="store_true",
        help="run the tool as a task when it may run as one (execution.taskSupport "
        '"optional"); a tool that requires it always does',
    )
    read = _client_parser(
        sub,
        "read",
        "[URL] URI [-- COMMAND ...]",
        "read a resource",
        "Read a resource by URI and print its contents (binary contents are summarised).",
    )
    read.add_argument("words", nargs="+", metavar="ARG", help="[URL] URI (no URL with --)")
    serve = sub.add_parser(
        "serve",
        help="serve an MCPServer over stdio or HTTP",
        description="Serve an mcp_layer.MCPServer: MODULE:ATTRIBUTE names the server object "
        "or a function returning one (MODULE is a dotted module name or a .py file). Over "
        "stdio by default; with --http, Streamable HTTP at /mcp (and HTTP+SSE at /sse) on "
        "127.0.0.1 unless --host says otherwise. The URL is printed when listening.",
    )
    serve.add_argument("target", metavar="MODULE:ATTRIBUTE", help="the server to serve")
    serve.add_argument("--http", action="store_true", help="serve Streamable HTTP, not stdio")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve.add_argument(
        "--port", type=int, default=8000, help="port (default: %(default)s; 0 picks a free one)"
    )
    add_common_options(serve, timeout=False)


def _split_target(args: argparse.Namespace, command: list[str], needed: int) -> list[str]:
    """The URL (into ``args.url``) and the remaining words (at least ``needed``)."""
    words: list[str] = list(args.words)
    if command:
        if words and words[0].startswith(("http://", "https://")):
            raise CLIError("give either a URL or a command after --, not both", status=2)
        args.url = None
    else:
        if not words:
            raise CLIError("no server given: a URL, or a command after --", status=2)
        url = words.pop(0)
        if not url.startswith(("http://", "https://")):
            raise CLIError(
                f"{url!r} is not an http(s) URL; to start a stdio server put its command after --",
                status=2,
            )
        args.url = url
    if len(words) < needed:
        raise CLIError(f"missing argument: {'TOOL' if args.mcp_command == 'call' else 'URI'}", 2)
    return words


def _process_details(process: Any) -> str:
    """What a dead stdio server left: its exit code and last stderr line."""
    code = process.process.returncode
    tail = [line for line in process.stderr_tail if line.strip()]
    parts = [f"exit code {code}"] if code is not None else []
    if tail:
        parts.append(f"stderr: {tail[-1].strip()}")
    return f" ({'; '.join(parts)})" if parts else ""


@asynccontextmanager
async def _session(
    stream: Any,
    args: argparse.Namespace,
    what: str,
    target: str,
    process: Any = None,
    elicitation: TerminalElicitation | None = None,
) -> AsyncIterator[ClientSession]:
    from mcp_layer import ClientSession
    from mcp_layer.types import LATEST_PROTOCOL_VERSION

    timeout: float = args.timeout
    # ``request_timeout`` bounds initialize too (a fail_after around __aenter__ would
    # wrap the peer's task group, which outlives it).
    session = ClientSession(
        stream,
        request_timeout=timeout,
        protocol_version=args.protocol_version or LATEST_PROTOCOL_VERSION,
        elicitation=elicitation,
    )
    try:
        await session.__aenter__()
    except Exception as exc:
        if is_timeout(exc) and process is None:
            raise timeout_error(target, timeout) from None
        details = ""
        if process is not None:
            with anyio.move_on_after(1):
                await process.process.wait()
            details = _process_details(process)
        raise CLIError(f"{what}: {error_message(exc)}{details}", detail=error_detail(exc)) from None
    try:
        yield session
    finally:
        # Not in a shielded scope: this exits the peer's task group, entered before it.
        await session.__aexit__(None, None, None)


@asynccontextmanager
async def open_session(
    args: argparse.Namespace,
    command: list[str],
    trace: Trace,
    elicitation: TerminalElicitation | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialized session to the target of ``args`` (stdio command or URL); the
    server's questions go to ``elicitation``."""
    from jsonrpc_core import spawn_stdio

    timeout: float = args.timeout

    def on_stderr(line: str) -> None:
        if args.verbose:
            print(f"  [server stderr] {line}", file=sys.stderr, flush=True)

    if command:
        shown = repr(" ".join(command))
        what = f"{shown} did not start an MCP server"
        async with spawn_stdio(command, on_stderr=on_stderr) as process:
            stream = trace.wrap(process, local="client", remote="server", transport="stdio")
            async with _session(stream, args, what, shown, process, elicitation) as session:
                yield session
        return
    from jsonrpc_core import HTTPSSETransport, StreamableHTTPTransport
    from mcp_layer._headers import SESSION_HEADER

    transport: HTTPSSETransport | StreamableHTTPTransport
    if args.sse:
        transport = HTTPSSETransport(args.url, timeout=timeout)
    else:
        transport = StreamableHTTPTransport(
            args.url, timeout=timeout, standalone_stream=False, session_header=SESSION_HEADER
        )
    what = f"no MCP server at {args.url}"
    try:
        await transport.__aenter__()
    except Exception as exc:
        if is_timeout(exc):
            raise timeout_error(args.url, timeout) from None
        raise CLIError(f"{what}: {error_message(exc)}", detail=error_detail(exc)) from None
    try:
        stream = trace.wrap(transport, local="client", remote="server", transport="http")
        async with _session(stream, args, what, args.url, None, elicitation) as session:
            yield session
    finally:
        await transport.__aexit__(None, None, None)


def _dump(model: Any) -> str:
    data = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(data, indent=2, ensure_ascii=False)


def _arguments(schema: dict[str, Any]) -> str:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for name, spec in properties.items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        parts.append(f"{name}: {kind}" + ("" if name in required else " (optional)"))
    return ", ".join(parts) if parts else "no arguments"


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def content_text(blocks: list[Any]) -> str:
    """Tool call or prompt content as text: text as it is, other content described."""
    from mcp_layer import types as t

    out: list[str] = []
    for block in blocks:
        if isinstance(block, t.TextContent):
            out.append(block.text)
        elif isinstance(block, (t.ImageContent, t.AudioContent)):
            size = len(block.data) * 3 // 4
            out.append(f"[{block.type} {block.mime_type}, about {size} bytes]")
        elif isinstance(block, t.ResourceLink):
            out.append(f"[link {block.uri}" + (f" ({block.name})" if block.name else "") + "]")
        elif isinstance(block, t.EmbeddedResource):
            out.append(_resource_text(block.resource))
        else:
            out.append(f"[{getattr(block, 'type', 'content')}]")
    return "\n".join(out)


def _resource_text(contents: mcp.TextResourceContents | mcp.BlobResourceContents) -> str:
    from mcp_layer import types as t

    if isinstance(contents, t.TextResourceContents):
        return contents.text
    size = len(contents.blob) * 3 // 4
    mime = contents.mime_type or "application/octet-stream"
    return f"[binary {contents.uri}: {mime}, about {size} bytes]"


async def _tools(session: ClientSession, args: argparse.Namespace) -> int:
    tools = await session.list_all_tools()
    if args.json:
        print(json.dumps([json.loads(_dump(tool)) for tool in tools], indent=2))
        return 0
    style = Style(sys.stdout)
    for tool in tools:
        print(f"{style.bold(tool.name)}  {_first_line(tool.description)}")
        print(f"    {_arguments(tool.input_schema)}")
    if not tools:
        print("(no tools)")
    return 0


async def _resources(session: ClientSession, args: argparse.Namespace) -> int:
    caps = session.server_capabilities
    if caps.resources is None:
        resources, templates = [], []
    else:
        resources = await session.list_all_resources()
        templates = await session.list_all_resource_templates()
    if args.json:
        data = {
            "resources": [json.loads(_dump(item)) for item in resources],
            "resourceTemplates": [json.loads(_dump(item)) for item in templates],
        }
        print(json.dumps(data, indent=2))
        return 0
    style = Style(sys.stdout)
    for resource in resources:
        mime = f" ({resource.mime_type})" if resource.mime_type else ""
        print(f"{style.bold(resource.uri)}  {resource.name}{mime}")
        if resource.description:
            print(f"    {_first_line(resource.description)}")
    for template in templates:
        print(f"{style.bold(template.uri_template)}  {template.name} (template)")
    if not resources and not templates:
        print("(no resources)")
    return 0


async def _prompts(session: ClientSession, args: argparse.Namespace) -> int:
    caps = session.server_capabilities
    prompts = [] if caps.prompts is None else await session.list_all_prompts()
    if args.json:
        print(json.dumps([json.loads(_dump(prompt)) for prompt in prompts], indent=2))
        return 0
    style = Style(sys.stdout)
    for prompt in prompts:
        names = [a.name + ("" if a.required else "?") for a in prompt.arguments or []]
        print(f"{style.bold(prompt.name)}({', '.join(names)})  {_first_line(prompt.description)}")
    if not prompts:
        print("(no prompts)")
    return 0


_SHOWN_TOOLS = 12
"""How many tool names an unknown tool's error lists."""


def _tool_names(tools: list[mcp.Tool]) -> str:
    names = [tool.name for tool in tools]
    if not names:
        return "it has no tools"
    shown = ", ".join(names[:_SHOWN_TOOLS])
    if len(names) > _SHOWN_TOOLS:
        shown += f", … ({len(names) - _SHOWN_TOOLS} more: rpcweave mcp tools lists them)"
    return f"its tools: {shown}"


def _accepts_extra(schema: dict[str, Any]) -> bool:
    """Whether a tool's inputSchema takes arguments it does not name.

    JSON Schema's default allows them, but a CLI user who typed an undeclared name
    most likely mistyped one: only a schema that names no properties, or says
    ``additionalProperties`` (or ``patternProperties``) explicitly, takes them."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return True
    extra = schema.get("additionalProperties")
    return extra is True or isinstance(extra, dict) or bool(schema.get("patternProperties"))


def check_arguments(
    tools: list[mcp.Tool], name: str, arguments: dict[str, Any], *, extra: bool
) -> None:
    """Refuse, before the call, an unknown tool, an argument its inputSchema does not
    declare (unless ``extra``) and a missing required argument."""
    tool = next((tool for tool in tools if tool.name == name), None)
    if tool is None:
        raise CLIError(f"no tool {name!r} on this server; {_tool_names(tools)}")
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    properties = schema.get("properties")
    declared = list(properties) if isinstance(properties, dict) else []
    unknown = [key for key in arguments if key not in declared]
    if unknown and not extra and not _accepts_extra(schema):
        names = ", ".join(repr(key) for key in unknown)
        plural = "s" if len(unknown) > 1 else ""
        raise CLIError(
            f"tool {name!r} takes no argument{plural} {names}; its arguments: "
            f"{_arguments(schema)} (--allow-extra sends undeclared arguments anyway)",
            status=2,
        )
    required = schema.get("required")
    missing = [key for key in required or [] if key not in arguments]
    if isinstance(required, list) and missing:
        names = ", ".join(repr(key) for key in missing)
        plural = "s" if len(missing) > 1 else ""
        raise CLIError(
            f"tool {name!r} needs argument{plural} {names}; its arguments: {_arguments(schema)}",
            status=2,
        )


async def _call(
    session: ClientSession,
    args: argparse.Namespace,
    tool: str,
    arguments: dict[str, Any],
    asker: TerminalElicitation | None,
) -> int:
    tools = await session.list_all_tools()
    check_arguments(tools, tool, arguments, extra=args.allow_extra)
    watch = _task_watch(_runs_as_task(tools, tool, task=args.task))
    try:
        # The call's own deadline, which the terminal suspends while the user answers.
        with anyio.CancelScope(deadline=anyio.current_time() + args.timeout) as deadline:
            if asker is not None:
                asker.deadline = deadline
            result = await session.call_tool(
                tool, arguments, timeout=math.inf, as_task=True if args.task else None, **watch
            )
    except Exception:
        if asker is not None and asker.unanswered:  # why it failed: nobody to answer
            raise no_terminal_error(tool, asker.unanswered) from None
        raise
    if deadline.cancelled_caught:
        raise TimeoutError  # said with the target's name by _client
    if asker is not None and asker.unanswered:
        raise no_terminal_error(tool, asker.unanswered)
    if result.is_error:
        text = content_text(list(result.content)) or "no details"
        raise CLIError(f"tool {tool!r} failed: {text}")
    if args.json:
        print(_dump(result))
        return 0
    text = content_text(list(result.content))
    if text:
        print(text)
    if result.structured_content is not None and not text:
        print(json.dumps(result.structured_content, indent=2, ensure_ascii=False))
    return 0


def _runs_as_task(tools: list[mcp.Tool], name: str, *, task: bool) -> bool:
    """Whether the call of tool ``name`` will be a task (its ``execution.taskSupport``)."""
    found = next((t for t in tools if t.name == name), None)
    support = found.execution.task_support if found and found.execution else None
    return support == "required" or (task and support == "optional")


def _task_watch(as_task: bool) -> dict[str, Any]:
    """``call_tool`` callbacks that print a task's status (and, for a task, its progress)
    on stderr; a plain call asks for no progress, as before."""
    seen: list[str] = []

    def on_task_status(task: mcp.Task) -> None:
        if not seen:
            seen.append(task.task_id)
            print(f"task {task.task_id} created", file=sys.stderr, flush=True)
        message = f": {task.status_message}" if task.status_message else ""
        print(f"task {task.status}{message}", file=sys.stderr, flush=True)

    def progress(done: float, total: float | None, message: str | None) -> None:
        amount = f"{done:g}/{total:g}" if total is not None else f"{done:g}"
        print(f"progress {amount}" + (f": {message}" if message else ""), file=sys.stderr)

    if not as_task:
        return {"on_task_status": on_task_status}
    return {"on_task_status": on_task_status, "progress": progress}


async def _read(session: ClientSession, args: argparse.Namespace, words: list[str]) -> int:
    result = await session.read_resource(words[0])
    if args.json:
        print(_dump(result))
        return 0
    for contents in result.contents:
        print(_resource_text(contents))
    return 0


async def _client(args: argparse.Namespace, command: list[str]) -> int:
    needed = {"call": 1, "read": 1}.get(args.mcp_command, 0)
    words = _split_target(args, command, needed)
    if needed == 0 and words:
        raise CLIError(f"unexpected argument: {words[0]!r}", status=2)
    if args.mcp_command == "read" and len(words) != 1:
        raise CLIError("read takes one URI", status=2)
    arguments = parse_assignments(words[1:]) if args.mcp_command == "call" else {}
    title = f"rpcweave mcp {args.mcp_command}"
    asker = TerminalElicitation(words[0]) if args.mcp_command == "call" else None
    with Trace(args.trace, verbose=args.verbose, title=title) as trace:
        try:
            async with open_session(args, command, trace, asker) as session:
                return await _command(session, args, words, arguments, asker)
        except Exception as exc:
            if not is_timeout(exc):
                raise
            raise timeout_error(args.url or repr(" ".join(command)), args.timeout) from None


async def _command(
    session: ClientSession,
    args: argparse.Namespace,
    words: list[str],
    arguments: dict[str, Any],
    asker: TerminalElicitation | None = None,
) -> int:
    if args.mcp_command == "tools":
        return await _tools(session, args)
    if args.mcp_command == "resources":
        return await _resources(session, args)
    if args.mcp_command == "prompts":
        return await _prompts(session, args)
    if args.mcp_command == "call":
        return await _call(session, args, words[0], arguments, asker)
    return await _read(session, args, words)


def _load_server(target: str) -> MCPServer:
    from mcp_layer import MCPServer

    _, server = load_served(
        target,
        "mcp serve",
        "an mcp_layer.MCPServer or a function taking no arguments that returns one",
        lambda value: isinstance(value, MCPServer),
    )
    assert isinstance(server, MCPServer)
    return server


async def _serve(args: argparse.Namespace) -> int:
    from jsonrpc_core import MessageStream, stdio_server

    server = _load_server(args.target)
    with Trace(args.trace, verbose=args.verbose, title=f"MCP server {args.target}") as trace:
        if not args.http:
            async with stdio_server() as stream:
                tapped = trace.wrap(stream, local="server", remote="client", transport="stdio")
                await server.serve(tapped)
            return 0
        app = server.asgi_app()
        serve_connection = app.serve_connection

        async def traced(stream: MessageStream) -> None:
            await serve_connection(
                trace.wrap(stream, local="server", remote="client", transport="http")
            )

        app.serve_connection = traced
        async with listening(app, args.host, args.port) as url:
            print(f"MCP server {server.name!r} listening on {url}/mcp", flush=True)
            await wait_for_signal()
    return 0


async def run(args: argparse.Namespace, command: list[str]) -> int:
    """Run the ``mcp`` subcommand of ``args``."""
    if args.mcp_command == "serve":
        if command:
            raise CLIError("serve takes no command after --", status=2)
        return await _serve(args)
    return await _client(args, command)
