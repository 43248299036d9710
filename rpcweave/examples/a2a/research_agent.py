"""A research agent that delegates coding work to another agent over A2A.

    python -m rpcweave.examples.a2a.research_agent          # starts a coding agent too
    python -m rpcweave.examples.a2a.research_agent --agent http://127.0.0.1:9999 --mode stream

It discovers the coding agent from its card, sends it work, and follows the task
through WORKING -> INPUT_REQUIRED (answered in the same task) -> COMPLETED, then prints
the artifacts. Three ways of following the task are shown:

* ``stream``: SendStreamingMessage, events as they happen (SSE);
* ``poll``: SendMessage with returnImmediately, then GetTask with backoff;
* ``push``: a webhook this agent serves receives the task's events (token checked,
  duplicates ignored), and GetTask fetches the result. The webhook listens on
  127.0.0.1, which an A2A server refuses by default: the coding agent started here
  allows private webhook targets; one started apart needs ``--allow-private-webhooks``.
"""

from __future__ import annotations

import argparse
import secrets
from collections.abc import Callable

import anyio

from a2a_layer import A2AClient, PushReceiver, text_of
from a2a_layer.types import StreamResponse, Task, TaskPushNotificationConfig, TaskState

REQUEST = "Write a function that reverses a string"
ANSWER = "python"

Printer = Callable[[str], None]


def describe(event: StreamResponse) -> str:
    """One line for a stream or push event."""
    if event.task is not None:
        return f"task {event.task.id[:8]} {event.task.status.state.name}"
    if event.status_update is not None:
        status = event.status_update.status
        note = f": {text_of(status.message)}" if status.message else ""
        return f"status {status.state.name}{note}"
    if event.artifact_update is not None:
        update = event.artifact_update
        flags = (" (append)" if update.append else "") + (" (last)" if update.last_chunk else "")
        return f"artifact {update.artifact.name}{flags}: {text_of(update.artifact)!r}"
    assert event.message is not None
    return f"message: {text_of(event.message)}"


def print_artifacts(task: Task, say: Printer) -> None:
    """Each artifact of a finished task, in full."""
    for artifact in task.artifacts or []:
        say(f"--- {artifact.name} ---")
        say(text_of(artifact).rstrip())


async def follow_by_streaming(client: A2AClient, say: Printer) -> Task:
    """Stream the request, answer the question in the same task, stream the rest."""
    task_id = context_id = None
    async for event in client.stream(REQUEST):
        say("  " + describe(event))
        if event.task is not None:
            task_id, context_id = event.task.id, event.task.context_id
    assert task_id is not None
    say(f"  answering {ANSWER!r} in task {task_id[:8]}")
    async for event in client.stream(ANSWER, task_id=task_id, context_id=context_id):
        say("  " + describe(event))
    return await client.get_task(task_id)


async def follow_by_polling(client: A2AClient, say: Printer) -> Task:
    """Send without waiting, poll with backoff, answer, poll again."""
    first = await client.send(REQUEST, return_immediately=True)
    assert isinstance(first, Task)
    say(f"  sent; task {first.id[:8]} is {first.status.state.name}")
    task = await client.wait(first.id, timeout=30)
    say(f"  polled: {task.status.state.name}: {text_of(task.status.message)}")
    await client.send(ANSWER, task_id=task.id, return_immediately=True)
    task = await client.wait(task.id, timeout=30, since=task)
    say(f"  polled: {task.status.state.name}")
    return task


async def follow_by_push(client: A2AClient, say: Printer) -> Task:
    """Serve a webhook, have the agent push the task's events to it."""
    from jsonrpc_core import running_server

    token = secrets.token_urlsafe(16)
    receiver = PushReceiver(token=token)
    async with running_server(receiver.asgi_app()) as webhook:
        push = TaskPushNotificationConfig(url=webhook + "/a2a/webhook", token=token)
        first = await client.send(REQUEST, push=push, return_immediately=True)
        assert isinstance(first, Task)
        say(f"  sent with webhook {webhook}/a2a/webhook; task {first.id[:8]}")
        events = receiver.events()
        with anyio.fail_after(30):
            answered = False
            async for event in events:
                say("  pushed " + describe(event))
                update = event.status_update
                if update is None:
                    continue
                if update.status.state is TaskState.INPUT_REQUIRED and not answered:
                    answered = True
                    await client.send(ANSWER, task_id=first.id, return_immediately=True)
                elif update.status.state.is_terminal:
                    break
        if receiver.duplicates:
            say(f"  ({receiver.duplicates} duplicate deliveries ignored)")
    return await client.get_task(first.id)


MODES = {"stream": follow_by_streaming, "poll": follow_by_polling, "push": follow_by_push}


async def research(agent_url: str, modes: list[str], say: Printer = print) -> dict[str, Task]:
    """Discover the coding agent and run the chosen modes; the final task of each."""
    results: dict[str, Task] = {}
    async with A2AClient.connect(agent_url) as client:
        card = client.card
        say(f"Discovered {card.name!r} v{card.version}: {card.description}")
        for skill in card.skills:
            say(f"  skill {skill.id}: {skill.description}")
        interface = client.interface
        say(f"  using {interface.protocol_binding} {interface.protocol_version} at {interface.url}")
        for mode in modes:
            if mode == "push" and not card.capabilities.push_notifications:
                say("push: the agent does not support push notifications; skipped")
                continue
            say(f"[{mode}] {REQUEST!r}")
            task = await MODES[mode](client, say)
            say(f"[{mode}] task {task.id[:8]} {task.status.state.name}")
            print_artifacts(task, say)
            results[mode] = task
    return results


async def _main(args: argparse.Namespace) -> None:
    modes = list(MODES) if args.mode == "all" else [args.mode]
    if args.agent:
        await research(args.agent, modes)
        return
    from jsonrpc_core import running_server
    from rpcweave.examples.a2a.coding_agent import build_server

    server = build_server(delay=args.delay, allow_private_webhooks=True)
    async with running_server(server.asgi_app()) as url:
        print(f"(started a coding agent at {url})")
        print("push: private webhook targets allowed (loopback receivers)")
        await research(url, modes)


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description="A research agent that delegates over A2A.")
    parser.add_argument("--agent", help="the coding agent's base URL (default: start one)")
    parser.add_argument("--mode", choices=[*MODES, "all"], default="all")
    parser.add_argument("--delay", type=float, default=0.05, help="chunk delay of a started agent")
    anyio.run(_main, parser.parse_args(argv))


if __name__ == "__main__":
    main()
