"""A coding agent served over A2A: it writes a small function, asking for the language first.

    python -m rpcweave.examples.a2a.coding_agent --port 9999 [--store sqlite:coding.db]

The flow a client sees (the research agent in ``research_agent.py`` drives it)::

    "Write a function that reverses a string"
        -> WORKING "Reading the request"
        -> INPUT_REQUIRED "Which language should I use: python or javascript?"
    "python" (same task)
        -> WORKING "Writing python code"
        -> artifact reverse.py, streamed in chunks (append), then test_reverse.py
        -> COMPLETED

A request that names the language ("... in javascript") skips the question. Streaming
and push notifications are declared in the card; tasks survive a restart with
``--store sqlite:PATH``. No model is called: the code comes from small templates, so the
demo is deterministic.
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

import anyio

from a2a_layer import A2AServer, AgentExecutor, ExecutionContext, SQLiteTaskStore, TaskUpdater
from a2a_layer.types import AgentCapabilities, AgentCard, AgentSkill, Role

LANGUAGES = ("python", "javascript")


@dataclass(frozen=True)
class Template:
    """One function the agent knows how to write, in each language."""

    name: str
    python: str
    javascript: str
    python_test: str
    javascript_test: str


TEMPLATES = {
    "reverse": Template(
        "reverse",
        'def reverse(text: str) -> str:\n    """The characters of text in reverse order."""\n'
        "    return text[::-1]\n",
        "export function reverse(text) {\n  return [...text].reverse().join('');\n}\n",
        "from reverse import reverse\n\n\ndef test_reverse():\n"
        '    assert reverse("abc") == "cba"\n',
        "import { reverse } from './reverse.js';\nconsole.assert(reverse('abc') === 'cba');\n",
    ),
    "add": Template(
        "add",
        'def add(a: float, b: float) -> float:\n    """The sum of a and b."""\n    return a + b\n',
        "export function add(a, b) {\n  return a + b;\n}\n",
        "from add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        "import { add } from './add.js';\nconsole.assert(add(2, 3) === 5);\n",
    ),
    "fibonacci": Template(
        "fibonacci",
        'def fibonacci(n: int) -> int:\n    """The n-th Fibonacci number."""\n'
        "    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
        "export function fibonacci(n) {\n  let [a, b] = [0, 1];\n"
        "  for (let i = 0; i < n; i++) [a, b] = [b, a + b];\n  return a;\n}\n",
        "from fibonacci import fibonacci\n\n\ndef test_fibonacci():\n"
        "    assert fibonacci(10) == 55\n",
        "import { fibonacci } from './fibonacci.js';\nconsole.assert(fibonacci(10) === 55);\n",
    ),
}

_KEYWORDS = {"reverse": "reverse", "add": "add", "sum": "add", "fibonacci": "fibonacci"}


def pick_template(request: str) -> Template:
    """The template a request asks for (``add`` when nothing matches)."""
    lowered = request.lower()
    for keyword, name in _KEYWORDS.items():
        if keyword in lowered:
            return TEMPLATES[name]
    return TEMPLATES["add"]


def pick_language(text: str) -> str | None:
    """The language named in ``text``, if any."""
    words = set(re.findall(r"[a-z]+", text.lower()))
    for language in LANGUAGES:
        if language in words:
            return language
    return "javascript" if "js" in words else None


class CodingAgent(AgentExecutor):
    """Writes the function of a request; asks for the language when not told.

    ``delay`` is the pause between streamed chunks (to make streaming visible).
    """

    def __init__(self, delay: float = 0.05, chunk_lines: int = 2) -> None:
        self.delay = delay
        self.chunk_lines = chunk_lines

    async def execute(self, context: ExecutionContext, updater: TaskUpdater) -> None:
        history = context.history
        first_request = next((m for m in history if m.role is Role.USER), context.message)
        request = "".join(p.text or "" for p in first_request.parts)
        language = pick_language(context.text) or pick_language(request)
        if language is None:
            await updater.start_work("Reading the request")
            await updater.requires_input("Which language should I use: python or javascript?")
            return
        template = pick_template(request)
        await updater.start_work(f"Writing {language} code")
        suffix = "py" if language == "python" else "js"
        code = getattr(template, language)
        test = getattr(template, f"{language}_test")
        await self._stream_file(updater, f"{template.name}.{suffix}", code)
        test_name = f"test_{template.name}.{suffix}"
        await updater.add_artifact(test, name=test_name, description="A test for the function")
        await updater.complete(f"Wrote {template.name}.{suffix} and {test_name}")

    async def _stream_file(self, updater: TaskUpdater, name: str, code: str) -> None:
        lines = code.splitlines(keepends=True)
        chunks = [
            "".join(lines[i : i + self.chunk_lines]) for i in range(0, len(lines), self.chunk_lines)
        ]
        artifact_id: str | None = None
        for index, chunk in enumerate(chunks):
            if self.delay:
                await anyio.sleep(self.delay)
            artifact_id = await updater.add_artifact(
                chunk,
                artifact_id=artifact_id,
                name=name,
                description="The requested function",
                append=index > 0,
                last_chunk=index == len(chunks) - 1,
            )


def build_card() -> AgentCard:
    """The coding agent's card (interfaces are filled in by the server)."""
    return AgentCard(
        name="Coding Agent",
        description="Writes small functions in python or javascript, with a test.",
        version="1.0.0",
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/x-python", "text/javascript", "text/plain"],
        skills=[
            AgentSkill(
                id="write-function",
                name="Write a function",
                description="Writes a function and its test; asks for the language if needed.",
                tags=["code", "python", "javascript"],
                examples=["Write a function that reverses a string"],
            )
        ],
    )


def build_server(
    *,
    store_path: Path | None = None,
    delay: float = 0.05,
    url: str | None = None,
    allow_private_webhooks: bool = False,
) -> A2AServer:
    """The coding agent server (JSON-RPC at ``/``, HTTP+JSON at ``/rest``).

    ``allow_private_webhooks`` lets push configs name loopback or private addresses
    (refused by default), e.g. a demo's receiver on 127.0.0.1.
    """
    store = SQLiteTaskStore(store_path) if store_path is not None else None
    return A2AServer(
        build_card(),
        CodingAgent(delay=delay),
        store=store,
        url=url,
        allow_private_webhooks=allow_private_webhooks,
    )


async def _serve(server: A2AServer, host: str, port: int) -> None:
    from jsonrpc_core import running_server

    async with running_server(server.asgi_app(), host=host, port=port) as url:
        print(f"Coding agent listening on {url}", flush=True)
        await anyio.sleep_forever()


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description="An A2A coding agent.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9999, help="0 picks a free port")
    parser.add_argument("--store", default=None, help="sqlite:PATH (default: in memory)")
    parser.add_argument("--delay", type=float, default=0.05, help="seconds between chunks")
    parser.add_argument(
        "--allow-private-webhooks",
        action="store_true",
        help="accept push webhooks on loopback or private addresses (refused by default)",
    )
    args = parser.parse_args(argv)
    store_path = None
    if args.store:
        kind, _, path = args.store.partition(":")
        if kind != "sqlite" or not path:
            raise SystemExit("--store: expected sqlite:PATH")
        store_path = Path(path)
    try:
        anyio.run(
            _serve,
            build_server(
                store_path=store_path,
                delay=args.delay,
                allow_private_webhooks=args.allow_private_webhooks,
            ),
            args.host,
            args.port,
        )
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
