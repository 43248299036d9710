"""Test helpers for acp_layer: a schema check of everything one side sends, and connections.

`SchemaCheck` is a `jsonrpc_core.WireTap` sink. It records what crosses one side's stream
and validates every message *that side sent* against ACP's official schema.json: request
and notification params by method (the schema's ``x-method`` definitions), results against
the response type of the request they answer, and error objects against ``Error``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import cache
from pathlib import Path
from typing import Any

import _specs
import anyio
import jsonschema

from acp_layer import Agent, Client, ClientConnection, connect_agent, serve_agent
from jsonrpc_core import TapRecord, WireTap, memory_pair

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "acp/v1/schema.json"
FIXTURES = Path(__file__).resolve().parent
DEMO_AGENT = ROOT / "examples" / "acp" / "demo_agent.py"

# The wire checks accept the schema of the npm SDK (a later revision) when no copy of the
# reference one is found: what we send must be valid against it too (tests/_specs.py).
requires_acp_schema = _specs.requires(SCHEMA, packaged=True)
"""Mark: the test checks ACP traffic against schema.json (found by tests/_specs.py)."""


@cache
def _schema() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_specs.read(SCHEMA, packaged=True))
    return doc


@cache
def _types_by_method() -> dict[str, dict[str, str]]:
    """method -> {"params": def name, "result": def name}."""
    table: dict[str, dict[str, str]] = {}
    for name, definition in _schema()["$defs"].items():
        method = definition.get("x-method")
        if method is not None:
            kind = "result" if name.endswith("Response") else "params"
            table.setdefault(method, {})[kind] = name
    return table


@cache
def _validator(def_name: str) -> Any:
    root = {"$ref": f"#/$defs/{def_name}", "$defs": _schema()["$defs"]}
    return jsonschema.validators.validator_for(_schema())(root)


def schema_errors(def_name: str, value: Any) -> list[str]:
    """Why ``value`` is not a valid ``def_name`` (empty when it is)."""
    errors = sorted(_validator(def_name).iter_errors(value), key=str)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:5]]


class SchemaCheck:
    """Records one side's traffic; `assert_valid` checks everything that side sent."""

    def __init__(self) -> None:
        self.records: list[TapRecord] = []
        self.received_methods: dict[Any, str] = {}
        self.problems: list[str] = []
        self.checked = 0
        self.changed = anyio.Event()

    def tap(self) -> WireTap:
        """A tap feeding this check."""
        return WireTap(self)

    def __call__(self, record: TapRecord) -> None:
        self.records.append(record)
        message = record.message
        if record.direction == "receive":
            if isinstance(message, dict) and "method" in message and "id" in message:
                self.received_methods[message["id"]] = message["method"]
        else:
            self._check(message)
        self.changed.set()
        self.changed = anyio.Event()

    def _check(self, message: Any) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            self.problems.append(f"not a JSON-RPC 2.0 object: {message!r:.200}")
            return
        self.checked += 1
        if "method" in message:
            method = message["method"]
            if method.startswith("_"):
                return
            def_name = _types_by_method().get(method, {}).get("params")
            if def_name is None:
                self.problems.append(f"method {method!r} is not in schema.json")
                return
            problems = schema_errors(def_name, message.get("params"))
        elif "error" in message:
            problems = schema_errors("Error", message["error"])
        else:
            method = self.received_methods.get(message.get("id"), "")
            def_name = _types_by_method().get(method, {}).get("result")
            if def_name is None:
                return  # the answer to an extension method
            problems = schema_errors(def_name, message.get("result"))
        for problem in problems:
            self.problems.append(f"{message.get('method', message.get('id'))}: {problem}")

    def assert_valid(self) -> None:
        """Fail on any message this side sent that the schema rejects."""
        assert self.checked, "nothing was sent"
        assert not self.problems, "\n".join(self.problems)

    def sent(self, method: str | None = None) -> list[dict[str, Any]]:
        """Messages sent by this side (of ``method``, when given)."""
        out = [r.message for r in self.records if r.direction == "send"]
        return [m for m in out if method is None or m.get("method") == method]

    def received(self, method: str | None = None) -> list[dict[str, Any]]:
        """Messages received by this side (of ``method``, when given)."""
        out = [r.message for r in self.records if r.direction == "receive"]
        return [m for m in out if method is None or m.get("method") == method]

    def answer_to(self, request_id: Any, direction: str = "send") -> dict[str, Any] | None:
        """The response with ``request_id`` sent (or received) by this side, if any."""
        for record in self.records:
            message = record.message
            if (
                record.direction == direction
                and isinstance(message, dict)
                and "method" not in message
                and message.get("id") == request_id
            ):
                return message
        return None

    async def wait_for(self, predicate: Any, timeout: float = 10) -> None:
        """Wait until ``predicate(self)`` holds (bounded)."""
        with anyio.fail_after(timeout):
            while not predicate(self):
                await self.changed.wait()


@asynccontextmanager
async def connected(
    agent: Agent,
    client: Client,
    *,
    initialize: bool = True,
    unstable: bool = False,
) -> AsyncIterator[tuple[ClientConnection, SchemaCheck, SchemaCheck]]:
    """Our agent and our client over an in-memory pair, both sides schema-checked."""
    agent_check, client_check = SchemaCheck(), SchemaCheck()
    client_end, agent_end = memory_pair()
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(
            lambda: serve_agent(agent, agent_end, unstable=unstable, tap=agent_check.tap())
        )
        async with connect_agent(
            client, client_end, initialize=initialize, unstable=unstable, tap=client_check.tap()
        ) as conn:
            yield conn, agent_check, client_check
        task_group.cancel_scope.cancel()


def load_demo_agent() -> Any:
    """The demo agent example, imported as a module."""
    import importlib.util
    import sys

    name = "example_acp_demo_agent"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DEMO_AGENT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def check_demo_report(report: dict[str, Any], workspace: Path) -> None:
    """What a foreign client must have seen from our demo agent."""
    assert report["initialize"]["protocolVersion"] == 1
    assert report["initialize"]["agentInfo"]["name"] == "rpcweave-demo-agent"
    assert (report["hello"], report["commands"], report["cancelled"]) == (
        "end_turn",
        "end_turn",
        "cancelled",
    )
    updates = report["updates"]
    kinds = [u["sessionUpdate"] for u in updates]
    assert kinds[0] == "available_commands_update"
    assert {"agent_message_chunk", "tool_call", "tool_call_update", "plan"} <= set(kinds)
    assert updates[1]["content"]["text"] == "hello from the SDK"
    calls = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert [c["kind"] for c in calls] == ["read", "edit", "execute", "execute", "think"]
    assert calls[2]["content"][0]["type"] == "terminal"
    finals = {
        u["toolCallId"]: u
        for u in updates
        if u["sessionUpdate"] == "tool_call_update" and u.get("status") != "in_progress"
    }
    read, write, timed_out, echo, sleep = (finals[c["toolCallId"]] for c in calls)
    assert read["content"][0]["content"]["text"] == "notes\n"
    assert write["status"] == "completed" and write["content"][0]["type"] == "diff"
    assert timed_out["status"] == "failed" and timed_out["rawOutput"]["timedOut"] is True
    assert echo["status"] == "completed" and "hi\n" in echo["content"][1]["content"]["text"]
    assert sleep["status"] == "failed"  # reported before the cancelled answer
    assert report["permission_requests"] == 1
    assert report["out_txt"] == "written by demo"
    assert (workspace / "out.txt").read_text() == "written by demo"
    calls_made = report["calls"]
    assert calls_made.count("terminal/create") == 2 and calls_made.count("terminal/release") == 2
    assert "terminal/kill" in calls_made
