"""What a 2026-07-28 request skips, and what it still does (the per-request fast path).

A 2026-era request carries its envelope, and may carry a ``requestState``. The server
validates each distinct envelope value once, takes the digest of a call's arguments
only when a state is checked or may be sealed, and writes a plain ``tools/call``
result directly. None of that may change an answer: a state is still verified on
every tool (a tampered, foreign or misbound one is refused before anything runs), a
function that changes its arguments before asking can still be resumed, two clients
with different capabilities are told apart, and the direct result is byte for byte
the completed model.

Tests the private units `mcp_layer._era.ValidatedOnce`, `_results` and `_disconnect` on
purpose: the fast path's pieces are what is checked.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import pydantic
import pytest
from mcp2026 import modern_http, server_wire
from mcp_schema import WireChecker, requires_schema

from jsonrpc_core import Response, encode
from mcp_layer import Context, MCPServer, ServerSession
from mcp_layer._era import ValidatedOnce
from mcp_layer._results import to_call_tool_result, to_call_tool_wire
from mcp_layer.types import ClientCapabilities, Implementation

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ELICIT: dict[str, Any] = {"elicitation": {}}
WRAPPED = {"type": "object", "properties": {"result": {}}, "required": ["result"]}


class Runs:
    """How often each tool of `build_server` ran its body."""

    def __init__(self) -> None:
        self.plain = 0
        self.after_question = 0


def build_server(runs: Runs, **options: Any) -> MCPServer:
    server = MCPServer("per-request", "3.0.0", **options)

    @server.tool()
    def plain(text: str) -> str:
        """Takes no Context: it can never ask a question."""
        runs.plain += 1
        return text

    @server.tool()
    async def tags_then_ask(ctx: Context, payload: dict[str, Any]) -> str:
        """Changes its (nested) arguments in place, then asks."""
        payload["tags"].append("seen")
        answer = await ctx.elicit("Your name?", NAME, key="who")
        runs.after_question += 1
        return f"{(answer.content or {}).get('name')}: {','.join(payload['tags'])}"

    return server


@pytest.fixture
def wire() -> Iterator[WireChecker]:
    yield from server_wire()


def _sealed_for(server: MCPServer, tool: str, arguments: dict[str, Any]) -> str:
    """A state the server itself sealed for a call of ``tool`` with ``arguments``."""
    sealer = server.request_state
    inputs = sealer.open_round("tools/call", tool, arguments, None, None, None)
    return sealer.seal(inputs.state([]))


# -- requestState -----------------------------------------------------------------------


@requires_schema
@pytest.mark.anyio
async def test_a_state_sent_to_a_tool_without_a_context_is_still_verified(
    wire: WireChecker,
) -> None:
    runs = Runs()
    server = build_server(runs)
    arguments = {"text": "hi"}
    state = _sealed_for(server, "plain", arguments)
    version, body, mac = state.split(".")
    flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    async with modern_http(server, wire) as client:
        refused = []
        for params in (
            {"arguments": arguments, "requestState": f"{version}.{flipped}.{mac}"},
            {"arguments": arguments, "requestState": "not-a-state"},
            {"arguments": {"text": "other"}, "requestState": state},  # other arguments
            {"arguments": arguments, "requestState": _sealed_for(server, "tags", arguments)},
        ):
            answer = await client.post("tools/call", {"name": "plain", **params})
            refused.append((answer.status, answer.error["code"]))
        assert runs.plain == 0  # refused before anything ran
        accepted = await client.post(
            "tools/call", {"name": "plain", "arguments": arguments, "requestState": state}
        )
    assert refused == [(400, -32602)] * 4
    assert accepted.result["content"] == [{"type": "text", "text": "hi"}]
    assert runs.plain == 1


@requires_schema
@pytest.mark.anyio
async def test_malformed_answers_sent_to_a_tool_without_a_context_are_refused(
    wire: WireChecker,
) -> None:
    runs = Runs()
    async with modern_http(build_server(runs), wire) as client:
        answers = []
        for responses in ({"who": 12345}, ["not", "an", "object"]):
            answer = await client.post(
                "tools/call",
                {"name": "plain", "arguments": {"text": "x"}, "inputResponses": responses},
            )
            answers.append((answer.status, answer.error["code"]))
        unused = await client.post(
            "tools/call",
            {"name": "plain", "arguments": {"text": "x"}, "inputResponses": {"who": {}}},
        )
    assert answers == [(400, -32602)] * 2
    assert unused.result["content"] == [{"type": "text", "text": "x"}]  # nothing asked it
    assert runs.plain == 1


@requires_schema
@pytest.mark.anyio
async def test_a_tool_that_changes_its_arguments_before_asking_can_be_resumed(
    wire: WireChecker,
) -> None:
    runs = Runs()
    arguments = {"payload": {"tags": ["a"]}}
    async with modern_http(build_server(runs), wire) as client:
        first = await client.post(
            "tools/call", {"name": "tags_then_ask", "arguments": arguments}, capabilities=ELICIT
        )
        assert first.result["resultType"] == "input_required"
        retry = await client.post(
            "tools/call",
            {
                "name": "tags_then_ask",
                "arguments": arguments,
                "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": first.result["requestState"],
            },
            capabilities=ELICIT,
        )
    # The state is bound to the arguments as sent, not as the function left them.
    assert retry.result["content"][0]["text"] == "Ada: a,seen"
    assert runs.after_question == 1


# -- the envelope -----------------------------------------------------------------------


@requires_schema
@pytest.mark.anyio
async def test_requests_with_different_capabilities_are_told_apart(wire: WireChecker) -> None:
    runs = Runs()
    arguments: dict[str, Any] = {"payload": {"tags": []}}
    async with modern_http(build_server(runs), wire) as client:
        outcomes = []
        every: list[dict[str, Any]] = [ELICIT, {}, ELICIT, {"elicitation": {"form": {}}}, {}]
        for capabilities in every:
            answer = await client.post(
                "tools/call",
                {"name": "tags_then_ask", "arguments": arguments},
                capabilities=capabilities,
            )
            final = answer.final
            outcomes.append(
                final["result"]["resultType"] if "result" in final else final["error"]["code"]
            )
        invalid = [
            await client.post(
                "tools/call",
                {"name": "plain", "arguments": {"text": "x"}},
                capabilities={"elicitation": 5},
            )
            for _ in range(2)
        ]
    assert outcomes == ["input_required", -32021, "input_required", "input_required", -32021]
    assert [answer.error["code"] for answer in invalid] == [-32602, -32602]
    assert runs.plain == 0


def test_each_distinct_json_value_is_validated_once() -> None:
    capabilities = ValidatedOnce(ClientCapabilities, size=3)
    first = capabilities.validate({"sampling": {}, "experimental": {"x": {"n": 1}}})
    again = capabilities.validate({"sampling": {}, "experimental": {"x": {"n": 1}}})
    other = capabilities.validate({"sampling": {}, "experimental": {"x": {"n": True}}})
    assert again is first
    assert other is not first  # 1 and true are not the same JSON
    assert other.experimental == {"x": {"n": True}}
    for _ in range(2):  # a value that fails is refused every time, never kept
        with pytest.raises(pydantic.ValidationError):
            capabilities.validate({"sampling": 5})
    capabilities.validate({"roots": {}})
    capabilities.validate({"elicitation": {}})  # a fourth value: the table starts again
    assert capabilities.validate({"sampling": {}, "experimental": {"x": {"n": 1}}}) is not first
    info = ValidatedOnce(Implementation)
    assert info.validate({"name": "a", "version": "1"}) == Implementation(name="a", version="1")


# -- the direct result of a plain tools/call ----------------------------------------------

PLAIN_VALUES: list[Any] = [
    "hello",
    "",
    'ünïcode "q"\n',
    0,
    2**70,
    1.5,
    math.nan,
    True,
    {},
    {"a": None},
]


@pytest.mark.parametrize("identify", [True, False], ids=["identified", "anonymous"])
@pytest.mark.parametrize("schema", [None, WRAPPED], ids=["no-schema", "wrapped"])
@pytest.mark.parametrize("value", PLAIN_VALUES, ids=repr)
def test_a_2026_wire_result_encodes_like_the_completed_model(
    value: Any, schema: dict[str, Any] | None, identify: bool
) -> None:
    session = ServerSession(MCPServer("wire", "1.2.3", title="Wire", identify=identify))
    wraps = schema is not None
    wire = to_call_tool_wire(value, output_schema=schema, wraps_result=wraps)
    model = to_call_tool_result(value, output_schema=schema, wraps_result=wraps)
    assert wire is not None
    completed = session.complete_wire(wire)
    assert encode(Response(3, completed)) == encode(Response(3, session.complete_result(model)))


@requires_schema
@pytest.mark.anyio
@pytest.mark.parametrize("identify", [True, False], ids=["identified", "anonymous"])
async def test_a_plain_2026_tool_call_is_a_complete_result(
    wire: WireChecker, identify: bool
) -> None:
    runs = Runs()
    async with modern_http(build_server(runs, identify=identify), wire) as client:
        answer = await client.post("tools/call", {"name": "plain", "arguments": {"text": "hi"}})
    result = answer.result
    assert answer.content_type.startswith("application/json")
    assert list(result) == [
        *(["_meta"] if identify else []),
        "resultType",
        "content",
        "structuredContent",
    ]
    assert result["resultType"] == "complete"
    assert result["structuredContent"] == {"result": "hi"}
    if identify:
        server_info = result["_meta"]["io.modelcontextprotocol/serverInfo"]
        assert server_info == {"name": "per-request", "version": "3.0.0"}
    assert wire.checked["CallToolResult"] == 1


# -- x-mcp-header ------------------------------------------------------------------------


def _header_tool(server: MCPServer, header: str) -> None:
    def located(where: str) -> str:
        return f"at {where}"

    schema = {
        "type": "object",
        "properties": {"where": {"type": "string", "x-mcp-header": header}},
        "required": ["where"],
    }
    server.add_tool(located, input_schema=schema)


@requires_schema
@pytest.mark.anyio
async def test_a_replaced_tool_has_its_new_headers_checked(wire: WireChecker) -> None:
    server = MCPServer("headers")
    _header_tool(server, "Region")
    call = {"name": "located", "arguments": {"where": "eu"}}
    async with modern_http(server, wire) as client:
        first = await client.post("tools/call", call, headers={"Mcp-Param-Region": "eu"})
        missing = await client.post("tools/call", call)
        _header_tool(server, "Zone")  # the same tool, now mirroring its argument elsewhere
        stale = await client.post("tools/call", call, headers={"Mcp-Param-Region": "eu"})
        fresh = await client.post("tools/call", call, headers={"Mcp-Param-Zone": "eu"})
    assert first.result["content"][0]["text"] == "at eu"
    assert (missing.status, missing.error["code"]) == (400, -32020)
    assert (stale.status, stale.error["code"]) == (400, -32020)
    assert "Mcp-Param-Zone" in stale.error["message"]
    assert fresh.result["content"][0]["text"] == "at eu"


# -- the client closing its stream: a watcher only for handlers that wait ----------------


@pytest.mark.anyio
async def test_the_watcher_starts_only_when_the_handler_first_waits() -> None:
    from mcp_layer._disconnect import _on_first_suspension

    started: list[str] = []
    finished: list[str] = []

    async def answers_at_once() -> str:
        return "now"

    async def waits_twice() -> str:
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()
        return "later"

    async def waits_forever() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            finished.append("cleaned up")

    assert await _on_first_suspension(answers_at_once(), lambda: started.append("now")) == "now"
    assert started == []
    assert await _on_first_suspension(waits_twice(), lambda: started.append("later")) == "later"
    assert started == ["later"]
    with anyio.CancelScope() as cancelled:  # a cancellation is thrown into the handler

        def cancel_once_waiting() -> None:
            started.append("forever")
            cancelled.cancel()

        await _on_first_suspension(waits_forever(), cancel_once_waiting)
    assert cancelled.cancelled_caught
    assert started == ["later", "forever"]
    assert finished == ["cleaned up"]


@requires_schema
@pytest.mark.anyio
async def test_handlers_that_wait_answer_and_fail_as_before(wire: WireChecker) -> None:
    server = MCPServer("waits")

    @server.tool()
    async def waits(text: str) -> str:
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.cancel_shielded_checkpoint()
        return text

    @server.tool()
    async def fails_after_waiting() -> str:
        await anyio.lowlevel.checkpoint()
        raise ValueError("late")

    async with modern_http(server, wire) as client:
        answered = await client.post("tools/call", {"name": "waits", "arguments": {"text": "w"}})
        failed = await client.post("tools/call", {"name": "fails_after_waiting", "arguments": {}})
        unknown = await client.post("tools/call", {"name": "nothing", "arguments": {}})
    assert answered.result["content"] == [{"type": "text", "text": "w"}]
    assert answered.result["resultType"] == "complete"
    assert failed.result["isError"] is True
    assert failed.result["content"][0]["text"] == "ValueError: late"
    assert (unknown.status, unknown.error["code"]) == (400, -32602)
