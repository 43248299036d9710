"""``rpcweave a2a``: read an agent's card, send it work and follow the task, or serve one.

URL is the agent's base URL (its card is at ``URL/.well-known/agent-card.json``; the
card's own URL works too). While a task runs the state is shown live on stderr: a spinner
on a terminal, one line per change otherwise. Results go to stdout.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from ._cli_common import (
    CLIError,
    HelpFormatter,
    add_common_options,
    error_message,
    is_timeout,
    listening,
    load_served,
    timeout_error,
    wait_for_signal,
)
from ._render import StatusLine, Style, indent
from ._trace import Trace

if TYPE_CHECKING:
    from a2a_layer import A2AClient, A2AServer
    from a2a_layer.types import AgentCard, Message, StreamResponse, Task

__all__ = ["add_parser", "describe_event", "run", "state_name"]

_EPILOG = """examples:
  rpcweave a2a serve rpcweave.examples.a2a.coding_agent:CodingAgent --port 9999
  rpcweave a2a card http://127.0.0.1:9999
  rpcweave a2a send http://127.0.0.1:9999 'Write a function that adds two numbers' --stream
  rpcweave a2a send http://127.0.0.1:9999 python --task-id TASK_ID --wait
  rpcweave a2a get http://127.0.0.1:9999 TASK_ID
"""


def add_parser(commands: Any) -> None:
    """Add ``a2a`` and its subcommands to the top-level subparsers."""
    a2a_parser: argparse.ArgumentParser = commands.add_parser(
        "a2a",
        help="Agent2Agent: cards, tasks, serving an agent",
        description="Talk to an A2A agent, or serve one.",
        epilog=_EPILOG,
        formatter_class=HelpFormatter,
    )
    sub = a2a_parser.add_subparsers(dest="a2a_command", metavar="COMMAND", required=True)
    card = sub.add_parser(
        "card", help="show an agent's card", description="Fetch and show an agent's card."
    )
    card.add_argument("url", metavar="URL", help="the agent's base URL (or its card's URL)")
    card.add_argument("--json", action="store_true", help="print the card as JSON")
    add_common_options(card)
    send = sub.add_parser(
        "send",
        help="send a message; follow the task",
        description="Send TEXT to the agent (a new task, or --task-id to continue one, e.g. "
        "to answer an input-required task). Without --wait or --stream the command returns as "
        "soon as the agent accepted the message. --wait polls the task until it ends or needs "
        "input; --stream receives its events as they happen (SSE). The exit status is 1 when "
        "the task failed, was rejected or canceled.",
    )
    send.add_argument("url", metavar="URL", help="the agent's base URL")
    send.add_argument("text", metavar="TEXT", help="the message")
    follow = send.add_mutually_exclusive_group()
    follow.add_argument("--stream", action="store_true", help="stream the task's events (SSE)")
    follow.add_argument("--wait", action="store_true", help="poll until the task ends")
    send.add_argument("--task-id", metavar="ID", help="continue this task")
    send.add_argument("--context-id", metavar="ID", help="the conversation the message is in")
    send.add_argument("--json", action="store_true", help="print results as JSON")
    add_common_options(
        send,
        timeout_help="give up on a call (the card, the send, each poll of --wait, the first "
        "event of --stream and of each resumption) that is not answered within SECONDS in "
        "all, however slowly the agent sends; --wait and --stream follow the task for as "
        "long as it runs (default: %(default)g)",
    )
    get = sub.add_parser("get", help="show a task", description="Fetch a task and show it.")
    get.add_argument("url", metavar="URL", help="the agent's base URL")
    get.add_argument("task_id", metavar="TASK_ID", help="the task's id")
    get.add_argument("--history", type=int, metavar="N", help="include the last N messages")
    get.add_argument("--json", action="store_true", help="print the task as JSON")
    add_common_options(get)
    serve = sub.add_parser(
        "serve",
        help="serve an agent over HTTP",
        description="Serve an agent: MODULE:ATTRIBUTE names an a2a_layer.AgentExecutor "
        "(class or instance), an `async def agent(context, updater)` function, an A2AServer, "
        "or a function returning one of these. The card is the module's `card` or "
        "`build_card()` when it has one, else one made up from the executor. JSON-RPC at /, "
        "HTTP+JSON at /rest, the card at /.well-known/agent-card.json; 127.0.0.1 unless "
        "--host says otherwise. The URL is printed when listening.",
    )
    serve.add_argument("target", metavar="MODULE:ATTRIBUTE", help="the agent to serve")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve.add_argument(
        "--port", type=int, default=9999, help="port (default: %(default)s; 0 picks a free one)"
    )
    serve.add_argument(
        "--grpc-port",
        type=int,
        metavar="N",
        help="also serve the gRPC binding on --host:N (0 picks a free one; the card lists "
        "it; needs the grpc extra: pip install 'rpcweave[grpc]')",
    )
    serve.add_argument(
        "--store", metavar="sqlite:PATH", help="keep tasks in SQLite (default: in memory)"
    )
    serve.add_argument(
        "--allow-private-webhooks",
        action="store_true",
        help="accept push webhooks on loopback, private or link-local addresses (refused by "
        "default: a caller could make the agent POST to your internal network)",
    )
    add_common_options(serve, timeout=False)


# -- showing things ------------------------------------------------------------------------


def state_name(state: Any) -> str:
    """``TASK_STATE_INPUT_REQUIRED`` as ``input-required``."""
    value = getattr(state, "value", str(state))
    return str(value).removeprefix("TASK_STATE_").lower().replace("_", "-")


def _wire(model: Any) -> Any:
    return json.loads(model.model_dump_json(by_alias=True, exclude_none=True))


def describe_event(event: StreamResponse) -> str:
    """One line for a stream or push event."""
    from a2a_layer import text_of

    if event.task is not None:
        return f"task {event.task.id} {state_name(event.task.status.state)}"
    if event.status_update is not None:
        status = event.status_update.status
        note = f": {text_of(status.message)}" if status.message else ""
        return f"status {state_name(status.state)}{note}"
    if event.artifact_update is not None:
        update = event.artifact_update
        flags = (" (append)" if update.append else "") + (
            " (last chunk)" if update.last_chunk else ""
        )
        return f"artifact {update.artifact.name or update.artifact.artifact_id}{flags}"
    assert event.message is not None
    return f"message: {text_of(event.message)}"


def _print_card(card: AgentCard) -> None:
    style = Style(sys.stdout)
    print(f"{style.bold(card.name)} {card.version}: {card.description}")
    caps = card.capabilities
    offered = [
        name
        for name, on in (
            ("streaming", caps.streaming),
            ("push notifications", caps.push_notifications),
            ("extended card", caps.extended_agent_card),
        )
        if on
    ]
    print(f"  capabilities: {', '.join(offered) or 'none'}")
    for interface in card.supported_interfaces:
        print(
            f"  interface: {interface.protocol_binding} {interface.protocol_version} "
            f"at {interface.url}"
        )
    for skill in card.skills:
        print(f"  skill {style.bold(skill.id)}: {skill.description}")
        for example in skill.examples or []:
            print(f"    e.g. {example!r}")


def _print_message(message: Message) -> None:
    from a2a_layer import text_of

    print(text_of(message))


def _print_task(task: Task, *, history: bool = False) -> None:
    from a2a_layer import text_of

    style = Style(sys.stdout)
    state = state_name(task.status.state)
    print(f"task {task.id} {style.bold(state)}")
    if task.context_id:
        print(f"  context {task.context_id}")
    if task.status.message is not None:
        print(f"  {text_of(task.status.message)}")
    for message in (task.history or []) if history else []:
        print(f"  [{state_name(message.role).removeprefix('role-')}] {text_of(message)}")
    for artifact in task.artifacts or []:
        print(style.dim(f"--- {artifact.name or artifact.artifact_id} ---"))
        print(text_of(artifact).rstrip("\n"))


def _outcome(task: Task, url: str) -> int:
    """The exit status for a task's state; a hint when the agent waits for the user."""
    state = task.status.state
    if state.is_interrupted:
        need = "input" if state_name(state) == "input-required" else "authorization"
        print(
            f"the agent needs {need}: answer with "
            f"rpcweave a2a send {url} TEXT --task-id {task.id} --wait",
            file=sys.stderr,
        )
        return 0
    if state.is_terminal and state_name(state) != "completed":
        raise CLIError(f"task {task.id} {state_name(state)}")
    return 0


# -- the client ----------------------------------------------------------------------------


def _card_location(url: str) -> tuple[str, str | None]:
    """(base URL, card path) for an agent's base URL or its card's URL."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CLIError(f"{url!r} is not an http(s) URL", status=2)
    if parts.path.endswith(".json"):
        return f"{parts.scheme}://{parts.netloc}", parts.path
    return url.rstrip("/"), None


@asynccontextmanager
async def open_client(url: str, trace: Trace, *, timeout: float) -> AsyncIterator[A2AClient]:
    """A client of the agent at ``url`` (its card resolved and recorded)."""
    import httpx

    from a2a_layer import CARD_PATH, A2AClient, CardNotFound, resolve_card
    from jsonrpc_core import Deadline, RequestTimeout
    from jsonrpc_core.http import new_async_client

    base, card_path = _card_location(url)
    async with new_async_client(timeout=httpx.Timeout(timeout, read=300.0)) as http:
        trace.record("client", "agent", {"http": f"GET {card_path or CARD_PATH}"})
        try:
            with Deadline(timeout, url, "agent card"):
                card = await resolve_card(http, base, path=card_path)
        except RequestTimeout:
            raise timeout_error(url, timeout) from None
        except CardNotFound:
            raise CLIError(f"no agent card at {url}") from None
        except httpx.HTTPStatusError as exc:
            raise CLIError(f"no agent card at {url}: HTTP {exc.response.status_code}") from None
        except httpx.HTTPError as exc:
            raise CLIError(error_message(exc)) from None
        except ValueError as exc:
            raise CLIError(
                f"{url} does not serve an A2A agent card: {error_message(exc)}"
            ) from None
        trace.record("agent", "client", {"http": "200 OK", "status": 200, "body": _wire(card)})
        client = A2AClient(
            card, http=http, timeout=timeout, tap=trace.tap if trace.active else None
        )
        async with client:
            yield client


def _status_line(args: argparse.Namespace, *, plain: bool) -> StatusLine:
    """The live status: on stdout with the results (stderr for --json, spinner only)."""
    if args.json:
        return StatusLine(sys.stderr, plain=False)
    return StatusLine(sys.stdout, plain=plain)


async def _follow_stream(client: A2AClient, args: argparse.Namespace) -> Task | Message | None:
    status = _status_line(args, plain=False)  # the events say it all off a terminal
    task_id: str | None = args.task_id
    message: Message | None = None
    async with status.running():
        status.set("sending…")
        async for event in client.stream(
            args.text, task_id=args.task_id, context_id=args.context_id
        ):
            status.clear()
            if args.json:
                print(json.dumps(_wire(event)), flush=True)
            else:
                print(describe_event(event), flush=True)
                if event.artifact_update is not None:
                    from a2a_layer import text_of

                    print(indent(text_of(event.artifact_update.artifact), "  │ "), flush=True)
            task_id = task_id or _event_task_id(event)
            if event.message is not None:
                message = event.message
            state = _event_state(event)
            if state is not None:
                status.set(f"task {task_id} {state}")
    if message is not None and task_id is None:
        return message
    return await client.get_task(task_id) if task_id is not None else None


def _event_task_id(event: StreamResponse) -> str | None:
    if event.task is not None:
        return event.task.id
    if event.status_update is not None:
        return event.status_update.task_id
    if event.artifact_update is not None:
        return event.artifact_update.task_id
    return None


def _event_state(event: StreamResponse) -> str | None:
    if event.task is not None:
        return state_name(event.task.status.state)
    if event.status_update is not None:
        return state_name(event.status_update.status.state)
    return None


async def _poll(client: A2AClient, task: Task, *, continued: bool, status: StatusLine) -> Task:
    """Poll the task (with backoff) until it ends or needs input again; the status it had
    when a continuing message was sent does not count."""
    from a2a_layer import text_of

    before = task.status if continued else None
    delay = 0.1
    async with status.running():
        while True:
            state = task.status.state
            if (state.is_terminal or state.is_interrupted) and task.status != before:
                return task  # the caller prints it: not as a status line too
            note = f": {text_of(task.status.message)}" if task.status.message else ""
            status.set(f"task {task.id} {state_name(state)}{note}")
            await anyio.sleep(delay)
            delay = min(delay * 2, 1.0)
            task = await client.get_task(task.id)


async def _send(client: A2AClient, args: argparse.Namespace) -> int:
    from a2a_layer.types import Message

    if args.stream:
        result = await _follow_stream(client, args)
    else:
        result = await client.send(
            args.text, task_id=args.task_id, context_id=args.context_id, return_immediately=True
        )
        if args.wait and not isinstance(result, Message):
            status = _status_line(args, plain=True)
            result = await _poll(client, result, continued=args.task_id is not None, status=status)
    if result is None:
        return 0
    if args.stream:
        pass  # every event is printed already
    elif args.json:
        print(json.dumps(_wire(result), indent=2))
    elif isinstance(result, Message):
        _print_message(result)
    else:
        _print_task(result)
    if isinstance(result, Message):
        return 0
    if not (args.wait or args.stream):
        if not result.status.state.is_terminal and not result.status.state.is_interrupted:
            print(f"follow with: rpcweave a2a get {args.url} {result.id}", file=sys.stderr)
            return 0
    return _outcome(result, args.url)


async def _client_command(args: argparse.Namespace) -> int:
    title = f"rpcweave a2a {args.a2a_command}"
    with Trace(args.trace, verbose=args.verbose, title=title) as trace:
        try:
            async with open_client(args.url, trace, timeout=args.timeout) as client:
                return await _client_step(client, args)
        except Exception as exc:
            if not is_timeout(exc):
                raise
            raise timeout_error(args.url, args.timeout) from None


async def _client_step(client: A2AClient, args: argparse.Namespace) -> int:
    if args.a2a_command == "card":
        if args.json:
            print(json.dumps(_wire(client.card), indent=2))
        else:
            _print_card(client.card)
        return 0
    if args.a2a_command == "get":
        task = await client.get_task(args.task_id, history_length=args.history)
        if args.json:
            print(json.dumps(_wire(task), indent=2))
        else:
            _print_task(task, history=bool(args.history))
        return 0
    return await _send(client, args)


# -- serving -------------------------------------------------------------------------------


def _default_card(name: str, executor: Any) -> AgentCard:
    from a2a_layer.types import AgentCapabilities, AgentCard, AgentSkill

    doc = inspect.getdoc(executor) or ""
    description = doc.strip().splitlines()[0] if doc.strip() else "An agent served by rpcweave."
    return AgentCard(
        name=name,
        description=description,
        version="0.1.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id=name, name=name, description=description, tags=[])],
    )


def _module_card(module: Any) -> AgentCard | None:
    from a2a_layer.types import AgentCard

    card = getattr(module, "card", None)
    if isinstance(card, AgentCard):
        return card
    build = getattr(module, "build_card", None)
    if callable(build):
        built = build()
        if isinstance(built, AgentCard):
            return built
    return None


_ACCEPTS = (
    "an A2A agent function `async def agent(context, updater)`, an a2a_layer.AgentExecutor "
    "(class or instance), an A2AServer, or a function taking no arguments that returns one"
)


def _is_agent_function(value: Any) -> bool:
    if not inspect.iscoroutinefunction(value):
        return False
    try:
        inspect.signature(value).bind(None, None)
    except (TypeError, ValueError):
        return False
    return True


def _servable(value: Any) -> bool:
    from a2a_layer import A2AServer, AgentExecutor

    if inspect.isclass(value):
        return False  # an executor class is called (with no arguments) by load_served
    return isinstance(value, (A2AServer, AgentExecutor)) or _is_agent_function(value)


def build_server(
    target: str, store: str | None, *, allow_private_webhooks: bool = False
) -> A2AServer:
    """The `A2AServer` for ``module:attribute`` (see ``a2a serve --help``)."""
    from a2a_layer import A2AServer, SQLiteTaskStore

    module, value = load_served(target, "a2a serve", _ACCEPTS, _servable)
    if isinstance(value, A2AServer):
        if store:
            raise CLIError("--store cannot change the store of an A2AServer object", 2)
        if allow_private_webhooks and value.push is not None:
            value.push.allow_private_webhooks = True
        return value
    task_store = None
    if store:
        kind, _, path = store.partition(":")
        if kind != "sqlite" or not path:
            raise CLIError(f"--store: expected sqlite:PATH, got {store!r}", status=2)
        task_store = SQLiteTaskStore(Path(path))
    name = target.rpartition(":")[2]
    card = _module_card(module) or _default_card(name, value)
    return A2AServer(card, value, store=task_store, allow_private_webhooks=allow_private_webhooks)


async def _serve(args: argparse.Namespace) -> int:
    from jsonrpc_core import MessageStream

    server = build_server(
        args.target, args.store, allow_private_webhooks=args.allow_private_webhooks
    )
    if args.grpc_port is not None:
        try:
            import a2a_layer._grpc  # noqa: F401
        except ImportError as exc:
            raise CLIError(
                f"--grpc-port needs the grpc extra (pip install 'rpcweave[grpc]'): {exc}", 2
            ) from None
        server.grpc_port, server.grpc_host = args.grpc_port, args.host
    with Trace(args.trace, verbose=args.verbose, title=f"A2A agent {args.target}") as trace:
        serve_connection = server.http.serve_connection

        async def traced(stream: MessageStream) -> None:
            await serve_connection(
                trace.wrap(stream, local="agent", remote="client", transport="http")
            )

        server.http.serve_connection = traced
        async with listening(server.asgi_app(), args.host, args.port) as url:
            print(f"A2A agent {server.card.name!r} listening on {url}", flush=True)
            if server.grpc_target is not None:
                print(f"gRPC (A2A 1.0 and 0.3) on {server.grpc_target}", flush=True)
            if server.push is not None and server.push.allow_private_webhooks:
                print("push: private webhook targets allowed", flush=True)
            await wait_for_signal()
    return 0


async def run(args: argparse.Namespace, command: list[str]) -> int:
    """Run the ``a2a`` subcommand of ``args``."""
    if command:
        raise CLIError("a2a commands take no command after --", status=2)
    if args.a2a_command == "serve":
        return await _serve(args)
    return await _client_command(args)
