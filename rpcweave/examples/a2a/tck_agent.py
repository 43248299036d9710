"""An A2A agent for conformance kits: its behaviour is chosen by the messageId prefix.

    python -m rpcweave.examples.a2a.tck_agent --port 9999 [--store sqlite:tasks.db] [--push]
        [--grpc-port 50051]

JSON-RPC at the root URL, HTTP+JSON under ``/rest``, gRPC on ``--grpc-port`` when given
(the ``grpc`` extra; the card then lists it), the card at
``/.well-known/agent-card.json`` (streaming declared; push with ``--push``, which also
allows private webhook targets: conformance kits run their webhook receivers on
loopback, which an A2A server refuses by default). The README's "A2A TCK by hand" says
how to run the public TCK (a2aproject/a2a-tck, branch 1.0-dev) against it with its
webhook receiver on 127.0.0.1. The contract, by messageId prefix:

==============================  ===============================================
``tck-complete-task``           completed, status message "Hello from TCK"
``tck-artifact-text``           text artifact "Generated text content"
``tck-artifact-file-url``       url part https://example.com/output.txt
``tck-artifact-file``           raw bytes, filename output.txt, text/plain
``tck-artifact-data``           data part {"key": "value", "count": 42}
``tck-message-response``        a direct Message "Direct message response"
``tck-input-required``          input-required
``tck-reject-task``             rejected
``tck-stream-001/003``,         working, a text artifact, completed
``tck-stream-ordering-001``
``tck-stream-002``              completed only
``tck-stream-artifact-text``    working, a text artifact, completed
``tck-stream-artifact-file``    working, a file artifact, completed
``tck-stream-artifact-chunked`` working, "chunk-1 " then "chunk-2" (appended,
                                last chunk), completed
``test-resubscribe-message-id`` working, 4 s later completed
anything else                   completed
==============================  ===============================================
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import anyio

from a2a_layer import (
    A2AServer,
    ExecutionContext,
    SQLiteTaskStore,
    TaskStore,
    TaskUpdater,
)
from a2a_layer.types import AgentCapabilities, AgentCard, AgentSkill, Part

RESUBSCRIBE_DELAY = 4.0


def _file_part() -> Part:
    return Part(raw=b"Generated file content", filename="output.txt", media_type="text/plain")


async def tck_agent(context: ExecutionContext, updater: TaskUpdater) -> None:
    """The conformance contract of the module docstring."""
    mid = context.message.message_id
    if mid.startswith("tck-complete-task"):
        await updater.complete("Hello from TCK")
    elif mid.startswith("tck-artifact-text"):
        await updater.add_artifact("Generated text content", name="text")
        await updater.complete()
    elif mid.startswith("tck-artifact-file-url"):
        part = Part(
            url="https://example.com/output.txt", filename="output.txt", media_type="text/plain"
        )
        await updater.add_artifact(part, name="file-url")
        await updater.complete()
    elif mid.startswith("tck-artifact-file"):
        await updater.add_artifact(_file_part(), name="file")
        await updater.complete()
    elif mid.startswith("tck-artifact-data"):
        await updater.add_artifact(Part(data={"key": "value", "count": 42}), name="data")
        await updater.complete()
    elif mid.startswith("tck-message-response"):
        await updater.reply("Direct message response")
    elif mid.startswith("tck-input-required"):
        await updater.requires_input("Please provide more input")
    elif mid.startswith("tck-reject-task"):
        await updater.reject("Task rejected")
    elif mid.startswith(("tck-stream-001", "tck-stream-003", "tck-stream-ordering-001")):
        await updater.start_work()
        await updater.add_artifact("Stream content", name="stream")
        await updater.complete()
    elif mid.startswith("tck-stream-002"):
        await updater.complete()
    elif mid.startswith("tck-stream-artifact-text"):
        await updater.start_work()
        await updater.add_artifact("Streamed text content", name="text")
        await updater.complete()
    elif mid.startswith("tck-stream-artifact-file"):
        await updater.start_work()
        await updater.add_artifact(_file_part(), name="file")
        await updater.complete()
    elif mid.startswith("tck-stream-artifact-chunked"):
        await updater.start_work()
        artifact_id = await updater.add_artifact("chunk-1 ", name="chunked")
        await updater.add_artifact(
            "chunk-2", artifact_id=artifact_id, name="chunked", append=True, last_chunk=True
        )
        await updater.complete()
    elif mid.startswith("test-resubscribe-message-id"):
        await updater.start_work()
        await anyio.sleep(RESUBSCRIBE_DELAY)
        await updater.complete()
    else:
        await updater.complete(f"Done: {context.text}" if context.text else "Done")


def build_card(*, push: bool = False) -> AgentCard:
    """The card (interfaces are filled in by the server from the request's host)."""
    return AgentCard(
        name="rpcweave TCK agent",
        description="Answers by messageId prefix, for A2A conformance kits.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=push),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain", "application/json"],
        skills=[
            AgentSkill(
                id="tck",
                name="Conformance behaviours",
                description="Completes, streams, asks for input or rejects by messageId prefix.",
                tags=["tck", "conformance"],
            )
        ],
    )


def open_store(spec: str | None) -> TaskStore | None:
    """``sqlite:PATH`` -> a SQLite store; ``None`` or ``memory`` -> in memory."""
    if spec is None or spec == "memory":
        return None
    kind, _, path = spec.partition(":")
    if kind != "sqlite" or not path:
        raise SystemExit(f"--store: expected sqlite:PATH or memory, got {spec!r}")
    return SQLiteTaskStore(Path(path))


PRIVATE_PUSH_NOTICE = "push: private webhook targets allowed (loopback receivers)"


def build_server(
    *,
    store: TaskStore | None = None,
    push: bool = False,
    url: str | None = None,
    grpc_port: int | None = None,
    host: str = "127.0.0.1",
) -> A2AServer:
    """The TCK agent server: JSON-RPC at ``/``, HTTP+JSON at ``/rest``.

    With ``push`` it declares push notifications and allows private webhook targets
    (the kits' receivers listen on loopback). With ``grpc_port`` (0: any free port) it
    also serves the gRPC binding on ``host``.
    """
    return A2AServer(
        build_card(push=push),
        tck_agent,
        store=store,
        url=url,
        rpc_path="/",
        rest_path="/rest",
        allow_private_webhooks=push,
        grpc_port=grpc_port,
        grpc_host=host,
    )


async def _serve(server: A2AServer, host: str, port: int) -> None:
    from jsonrpc_core import running_server

    async with running_server(server.asgi_app(), host=host, port=port) as url:
        print(f"TCK agent listening on {url}", flush=True)
        if server.grpc_target is not None:
            print(f"gRPC (A2A 1.0 and 0.3) on {server.grpc_target}", flush=True)
        if server.push is not None and server.push.allow_private_webhooks:
            print(PRIVATE_PUSH_NOTICE, flush=True)
        await anyio.sleep_forever()


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9999, help="0 picks a free port")
    parser.add_argument("--store", default=None, help="sqlite:PATH (default: in memory)")
    parser.add_argument(
        "--push",
        action="store_true",
        help="declare push notifications (and allow private webhook targets)",
    )
    parser.add_argument(
        "--grpc-port",
        type=int,
        default=None,
        metavar="N",
        help="also serve the gRPC binding on --host:N (0 picks a free port; the grpc extra)",
    )
    args = parser.parse_args(argv)
    server = build_server(
        store=open_store(args.store), push=args.push, grpc_port=args.grpc_port, host=args.host
    )
    try:
        anyio.run(_serve, server, args.host, args.port)
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
