"""An `MCPServer` serving MCP 2026-07-28 beside the handshake era (Streamable HTTP, stdio).

Every message the server sends over HTTP is validated against the 2026-07-28 schema
(`SchemaCheckingASGI` with ``revision="2026-07-28"``); the tasks extension, absent from
the core schema, is checked by shape in test_mcp_2026_tasks.py. Bad input gets its
specified error and runs nothing: a tampered or misbound ``requestState``, headers that
disagree with the body, an unknown version, a retry without the answers it needs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp2026 import (
    TASKS,
    VERSION,
    Answer,
    ModernHTTP,
    asgi_client,
    envelope,
    modern_http,
    server_wire,
)
from mcp_schema import SchemaCheckingASGI, WireChecker, requires_schema

from jsonrpc_core import spawn_stdio
from mcp_layer import Context, InputRequest, MCPServer, RequestStateSealer
from mcp_layer.types import TextContent

pytestmark = [pytest.mark.anyio, requires_schema]

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "mcp" / "everything_server.py"

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ELICIT: dict[str, Any] = {"elicitation": {}}
ALL: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}


class Effects:
    """What the tools of `build_server` did, to prove what ran and how often."""

    def __init__(self) -> None:
        self.before_question = 0
        self.after_question = 0
        self.charged = 0
        self.region_runs = 0


def build_server(effects: Effects, **options: Any) -> MCPServer:
    server = MCPServer("rpcweave-2026", "2.0.0", instructions="Both eras.", **options)

    @server.tool()
    async def greet(ctx: Context, greeting: str = "Hello") -> str:
        """Asks a name, then greets."""
        effects.before_question += 1
        answer = await ctx.elicit("Your name?", NAME, key="who")
        effects.after_question += 1
        name = (answer.content or {}).get("name", "nobody")
        return f"{greeting}, {name}!"

    @server.tool()
    async def two_steps(ctx: Context) -> str:
        """Asks twice; charges once, between the questions."""
        first = await ctx.elicit("First?", NAME, key="first")

        def charge() -> str:
            effects.charged += 1
            return "receipt-1"

        receipt = await ctx.once("charge", charge)
        second = await ctx.elicit("Second?", NAME, key="second")
        names = [(a.content or {}).get("name") for a in (first, second)]
        return f"{receipt}: {names[0]} then {names[1]}"

    @server.tool()
    async def everything_at_once(ctx: Context) -> str:
        """Asks for an elicitation, a sampling and the roots in one round."""
        answers = await ctx.ask(
            {
                "name": InputRequest.elicit("Name?", NAME),
                "model": InputRequest.sample("Capital of France?", max_tokens=10),
                "roots": InputRequest.roots(),
            }
        )
        sampled = answers["model"].content
        text = sampled.text if isinstance(sampled, TextContent) else "?"
        roots = ",".join(r.uri for r in answers["roots"].roots)
        return f"{answers['name'].content['name']}|{text}|{roots}"

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
            },
            "required": ["region"],
        }
    )
    def in_region(region: str, count: int = 1) -> str:
        effects.region_runs += 1
        return f"{count} in {region}"

    @server.tool()
    async def chatty(ctx: Context) -> str:
        """Logs at two levels."""
        await ctx.debug("debug line")
        await ctx.warning("warning line")
        return "done"

    @server.tool()
    async def steps(ctx: Context) -> str:
        """Reports progress."""
        for i in (1, 2):
            await ctx.report_progress(i, 2)
        return "stepped"

    @server.resource("test://doc", mime_type="text/plain")
    def doc() -> str:
        return "a document"

    @server.prompt()
    async def interview(ctx: Context) -> str:
        """Asks a name first."""
        answer = await ctx.elicit("Who is interviewed?", NAME, key="subject")
        return f"Interview {(answer.content or {}).get('name')}"

    return server


@pytest.fixture
def wire() -> Iterator[WireChecker]:
    yield from server_wire()


def text(answer: Answer) -> str:
    return str(answer.result["content"][0]["text"])


# -- discovery, envelope, versions ---------------------------------------------------


async def test_discover_names_the_server_its_versions_and_capabilities(wire: WireChecker) -> None:
    server = build_server(Effects(), cache_ttl_ms=60_000)
    async with modern_http(server, wire) as client:
        answer = await client.post("server/discover")
    assert answer.status == 200 and answer.content_type.startswith("application/json")
    result = answer.result
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == [VERSION]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {
        "name": "rpcweave-2026",
        "version": "2.0.0",
    }
    assert result["instructions"] == "Both eras."
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts"}
    assert "extensions" not in result["capabilities"]  # no task-supporting tool here
    assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")
    assert wire.checked["DiscoverResult"] == 1


async def test_results_carry_result_type_server_info_and_cache_hints(wire: WireChecker) -> None:
    async with modern_http(build_server(Effects(), cache_ttl_ms=5_000), wire) as client:
        listed = await client.post("tools/list")
        read = await client.post("resources/read", {"uri": "test://doc"})
        called = await client.post("tools/call", {"name": "in_region", "arguments": {}})
    for answer in (listed, read):
        assert answer.result["resultType"] == "complete"
        assert answer.result["ttlMs"] == 5_000
    assert listed.result["cacheScope"] == "public"
    assert read.result["cacheScope"] == "private"  # a read may be the caller's own data
    assert "ttlMs" not in called.result  # tools/call is not cacheable
    assert called.result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "rpcweave-2026"


@pytest.mark.parametrize(
    ("meta", "missing"),
    [
        ({}, "protocolVersion"),
        ({"io.modelcontextprotocol/clientCapabilities": {}}, "protocolVersion"),
        ({"io.modelcontextprotocol/protocolVersion": VERSION}, "clientCapabilities"),
    ],
)
async def test_a_request_without_its_envelope_is_invalid_params(
    wire: WireChecker, meta: dict[str, Any], missing: str
) -> None:
    effects = Effects()
    async with modern_http(build_server(effects), wire) as client:
        answer = await client.post(
            "tools/call", {"name": "in_region", "arguments": {"region": "eu"}}, meta=meta
        )
        bare = await client.post("server/discover", omit_meta=True)
    assert answer.status == 400
    assert answer.error["code"] == -32602 and missing in answer.error["message"]
    assert answer.final["id"] == 1  # the request's own id, not null
    assert bare.status == 400 and bare.error["code"] == -32602
    assert effects.region_runs == 0


async def test_an_unknown_version_is_refused_with_the_supported_ones(wire: WireChecker) -> None:
    effects = Effects()
    async with modern_http(build_server(effects), wire) as client:
        answer = await client.post(
            "tools/call",
            {"name": "in_region", "arguments": {"region": "eu"}},
            meta=envelope(version="2099-01-01"),
            headers={"MCP-Protocol-Version": "2099-01-01", "Mcp-Param-Region": "eu"},
        )
    assert answer.status == 400
    assert answer.error["code"] == -32022
    assert answer.error["data"] == {"supported": [VERSION], "requested": "2099-01-01"}
    assert effects.region_runs == 0


async def test_methods_the_modern_era_removed_are_not_found(wire: WireChecker) -> None:
    async with modern_http(build_server(Effects()), wire) as client:
        for method in ("initialize", "ping", "logging/setLevel", "resources/subscribe"):
            answer = await client.post(method, {"uri": "test://doc", "level": "info"})
            assert (answer.status, answer.error["code"]) == (404, -32601), method
        unknown = await client.post("no/such/method")
        assert (unknown.status, unknown.error["code"]) == (404, -32601)
        tasks = await client.post("tasks/get", {"taskId": "x"})
        assert (tasks.status, tasks.error["code"]) == (404, -32601)  # no tasks extension here


# -- headers -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"MCP-Protocol-Version": "2025-11-25"},
        {"MCP-Protocol-Version": None},
        {"Mcp-Method": "tools/list"},
        {"Mcp-Method": "Tools/Call"},
        {"Mcp-Method": None},
        {"Mcp-Name": "greet"},
        {"Mcp-Name": None},
        {"Mcp-Param-Region": "us-east1"},
        {"Mcp-Param-Region": None},
        {"Mcp-Param-Region": "=?base64?ZXU?="},  # "eu", but non-canonical padding
        {"Mcp-Param-Region": "=?base64?ZX!1?="},
        {"Mcp-Param-Count": "3"},
    ],
)
async def test_headers_that_disagree_with_the_body_are_refused(
    wire: WireChecker, headers: dict[str, str | None]
) -> None:
    effects = Effects()
    params = {"name": "in_region", "arguments": {"region": "eu", "count": 2}}
    base = {"Mcp-Param-Region": "eu", "Mcp-Param-Count": "2"}
    async with modern_http(build_server(effects), wire) as client:
        answer = await client.post("tools/call", params, headers={**base, **headers})
    assert answer.status == 400
    assert answer.error["code"] == -32020
    assert answer.final["id"] == 1
    assert effects.region_runs == 0


async def test_matching_headers_are_accepted_in_any_case_and_encoding(wire: WireChecker) -> None:
    effects = Effects()
    async with modern_http(build_server(effects), wire) as client:
        plain = await client.post(
            "tools/call",
            {"name": "in_region", "arguments": {"region": "eu", "count": 2}},
            headers={"mcp-param-region": " eu ", "MCP-PARAM-COUNT": "2.0"},
        )
        encoded = await client.post(
            "tools/call",
            {"name": "in_region", "arguments": {"region": "Zürich"}},
            headers={"Mcp-Param-Region": "=?base64?WsO8cmljaA==?="},
        )
        absent = await client.post(
            "tools/call", {"name": "in_region", "arguments": {"region": None}}
        )
    assert text(plain) == "2 in eu"
    assert text(encoded) == "1 in Zürich"
    # A null argument needs no header: the request passes, and the tool refuses it.
    assert absent.status == 200 and absent.result["isError"] is True
    assert effects.region_runs == 2


async def test_get_and_delete_are_not_part_of_the_modern_era() -> None:
    async with asgi_client(build_server(Effects()).asgi_app()) as http:
        response = await http.get(
            "/mcp", headers={"accept": "text/event-stream", "mcp-protocol-version": VERSION}
        )
        assert response.status_code == 405
        assert response.headers["allow"] == "POST"
        deleted = await http.delete("/mcp", headers={"mcp-protocol-version": VERSION})
        assert deleted.status_code == 405


# -- multi round-trip requests ----------------------------------------------------------


async def test_input_required_then_complete(wire: WireChecker) -> None:
    effects = Effects()
    async with modern_http(build_server(effects), wire) as client:
        first = await client.post(
            "tools/call", {"name": "greet", "arguments": {}}, capabilities=ELICIT
        )
        assert first.status == 200
        result = first.result
        assert result["resultType"] == "input_required"
        assert result["inputRequests"]["who"]["method"] == "elicitation/create"
        assert result["inputRequests"]["who"]["params"]["message"] == "Your name?"
        assert "ttlMs" not in result  # an interim result is not cacheable
        retry = await client.post(
            "tools/call",
            {
                "name": "greet",
                "arguments": {},
                "inputResponses": {"who": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": result["requestState"],
            },
            capabilities=ELICIT,
        )
    assert text(retry) == "Hello, Ada!"
    assert (effects.before_question, effects.after_question) == (2, 1)
    assert wire.checked["InputRequiredResult"] == 1


async def test_a_tampered_request_state_is_refused_before_anything_runs(
    wire: WireChecker,
) -> None:
    effects = Effects()
    async with modern_http(build_server(effects), wire) as client:
        first = await client.post(
            "tools/call", {"name": "greet", "arguments": {}}, capabilities=ELICIT
        )
        state = first.result["requestState"]
        version, body, mac = state.split(".")
        flipped = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
        for tampered in (f"{version}.{flipped}.{mac}", state + "x", "not-a-state", ""):
            answer = await client.post(
                "tools/call",
                {
                    "name": "greet",
                    "arguments": {},
                    "inputResponses": {"who": {"action": "accept", "content": {"name": "Eve"}}},
                    "requestState": tampered,
                },
                capabilities=ELICIT,
            )
            assert answer.status == 400, tampered
            assert answer.error["code"] == -32602
    assert (effects.before_question, effects.after_question) == (1, 0)


async def test_a_state_is_bound_to_its_request_and_to_its_server(wire: WireChecker) -> None:
    effects = Effects()
    server = build_server(effects)
    async with modern_http(server, wire) as client:
        first = await client.post(
            "tools/call", {"name": "greet", "arguments": {}}, capabilities=ELICIT
        )
        state = first.result["requestState"]
        answer = {"who": {"action": "accept", "content": {"name": "Mallory"}}}
        # The same state on other arguments, another tool, another method.
        other_arguments = await client.post(
            "tools/call",
            {
                "name": "greet",
                "arguments": {"greeting": "Bye"},
                "inputResponses": answer,
                "requestState": state,
            },
            capabilities=ELICIT,
        )
        other_prompt = await client.post(
            "prompts/get",
            {"name": "interview", "inputResponses": answer, "requestState": state},
            capabilities=ELICIT,
        )
    assert other_arguments.error["code"] == -32602
    assert other_prompt.error["code"] == -32602
    # Another server (another key) does not open it either.
    stranger = build_server(Effects())
    async with modern_http(stranger, wire) as client:
        elsewhere = await client.post(
            "tools/call",
            {"name": "greet", "arguments": {}, "inputResponses": answer, "requestState": state},
            capabilities=ELICIT,
        )
    assert elsewhere.error["code"] == -32602
    assert effects.after_question == 0


async def test_an_expired_state_is_refused() -> None:
    now = [1_000_000.0]
    sealer = RequestStateSealer(b"k" * 32, ttl=60, clock=lambda: now[0])
    token = sealer.seal({"m": "tools/call"})
    assert sealer.unseal(token)["m"] == "tools/call"
    now[0] += 61
    with pytest.raises(Exception, match="expired"):
        sealer.unseal(token)
    with pytest.raises(ValueError, match="16 bytes"):
        RequestStateSealer(b"short")


async def test_a_shared_key_lets_another_instance_continue(wire: WireChecker) -> None:
    key = b"a shared secret of the deployment"
    first_instance, second_instance = Effects(), Effects()
    async with modern_http(build_server(first_instance, request_state_key=key), wire) as client:
        first = await client.post(
            "tools/call", {"name": "greet", "arguments": {}}, capabilities=ELICIT
        )
    async with modern_http(build_server(second_instance, request_state_key=key), wire) as client:
        retry = await client.post(
            "tools/call",
            {
                "name": "greet",
                "arguments": {},
                "inputResponses": {"who": {"action": "accept", "content": {"name": "Bo"}}},
                "requestState": first.result["requestState"],
            },
            capabilities=ELICIT,
        )
    assert text(retry) == "Hello, Bo!"


async def test_a_retry_without_the_answers_asks_again(wire: WireChecker) -> None:
    effects = Effects()
    async with modern_http(build_server(effects), wire) as client:
        first = await client.post(
            "tools/call", {"name": "greet", "arguments": {}}, capabilities=ELICIT
        )
        state = first.result["requestState"]
        for responses in (None, {}, {"someone-else": {"action": "accept", "content": {}}}):
            params: dict[str, Any] = {"name": "greet", "arguments": {}, "requestState": state}
            if responses is not None:
                params["inputResponses"] = responses
            again = await client.post("tools/call", params, capabilities=ELICIT)
            assert again.result["resultType"] == "input_required"
            assert list(again.result["inputRequests"]) == ["who"]
        malformed = await client.post(
            "tools/call",
            {
                "name": "greet",
                "arguments": {},
                "requestState": state,
                "inputResponses": {"who": {"action": "maybe"}},
            },
            capabilities=ELICIT,
        )
        not_an_object = await client.post(
            "tools/call",
            {"name": "greet", "arguments": {}, "inputResponses": {"who": 12345}},
            capabilities=ELICIT,
        )
    assert malformed.error["code"] == -32602 and "inputResponses.who" in malformed.error["message"]
    assert not_an_object.error["code"] == -32602
    assert effects.after_question == 0  # nothing after the question ever ran


async def test_answers_carry_over_rounds_and_once_runs_once(wire: WireChecker) -> None:
    effects = Effects()
    async with modern_http(build_server(effects), wire) as client:
        params: dict[str, Any] = {"name": "two_steps", "arguments": {}}
        answers = {"first": "Ada", "second": "Grace"}
        result: dict[str, Any] = {}
        for _round in range(3):
            answer = await client.post("tools/call", params, capabilities=ELICIT)
            result = answer.result
            if result["resultType"] == "complete":
                break
            (key,) = result["inputRequests"]
            params = {
                "name": "two_steps",
                "arguments": {},
                # Only the new answer: the earlier ones travel in the state.
                "inputResponses": {key: {"action": "accept", "content": {"name": answers[key]}}},
                "requestState": result["requestState"],
            }
    assert result["content"][0]["text"] == "receipt-1: Ada then Grace"
    assert effects.charged == 1


async def test_several_questions_in_one_round(wire: WireChecker) -> None:
    async with modern_http(build_server(Effects()), wire) as client:
        first = await client.post(
            "tools/call", {"name": "everything_at_once", "arguments": {}}, capabilities=ALL
        )
        requests = first.result["inputRequests"]
        assert {key: r["method"] for key, r in requests.items()} == {
            "name": "elicitation/create",
            "model": "sampling/createMessage",
            "roots": "roots/list",
        }
        retry = await client.post(
            "tools/call",
            {
                "name": "everything_at_once",
                "arguments": {},
                "requestState": first.result["requestState"],
                "inputResponses": {
                    "name": {"action": "accept", "content": {"name": "Ada"}},
                    "model": {
                        "role": "assistant",
                        "content": {"type": "text", "text": "Paris"},
                        "model": "m",
                    },
                    "roots": {"roots": [{"uri": "file:///w"}]},
                    "unasked": {"ignored": True},
                },
            },
            capabilities=ALL,
        )
    assert text(retry) == "Ada|Paris|file:///w"


async def test_a_missing_client_capability_is_reported_by_name(wire: WireChecker) -> None:
    effects = Effects()
    async with modern_http(build_server(effects), wire) as client:
        answer = await client.post("tools/call", {"name": "everything_at_once", "arguments": {}})
        partial = await client.post(
            "tools/call", {"name": "everything_at_once", "arguments": {}}, capabilities=ELICIT
        )
    assert answer.status == 400
    assert answer.error["code"] == -32021
    assert answer.error["data"]["requiredCapabilities"] == {
        "elicitation": {},
        "sampling": {},
        "roots": {},
    }
    assert partial.error["data"]["requiredCapabilities"] == {"sampling": {}, "roots": {}}


async def test_prompts_ask_for_input_too(wire: WireChecker) -> None:
    async with modern_http(build_server(Effects()), wire) as client:
        first = await client.post("prompts/get", {"name": "interview"}, capabilities=ELICIT)
        retry = await client.post(
            "prompts/get",
            {
                "name": "interview",
                "inputResponses": {"subject": {"action": "accept", "content": {"name": "Ada"}}},
                "requestState": first.result["requestState"],
            },
            capabilities=ELICIT,
        )
    assert first.result["resultType"] == "input_required"
    assert retry.result["messages"][0]["content"]["text"] == "Interview Ada"


# -- logging, progress, cancellation ----------------------------------------------------


async def test_log_messages_only_for_requests_that_ask(wire: WireChecker) -> None:
    async with modern_http(build_server(Effects()), wire) as client:
        silent = await client.post("tools/call", {"name": "chatty", "arguments": {}})
        warned = await client.post(
            "tools/call", {"name": "chatty", "arguments": {}}, log_level="warning"
        )
        stepped = await client.post(
            "tools/call",
            {"name": "steps", "arguments": {}, "_meta": {"progressToken": "p1"}},
        )
    assert silent.notifications == []
    assert silent.content_type.startswith("application/json")  # nothing came before it
    assert [n["params"]["data"] for n in warned.notifications] == ["warning line"]
    assert warned.content_type.startswith("text/event-stream")
    assert [n["params"]["progress"] for n in stepped.notifications] == [1, 2]


async def test_closing_the_stream_cancels_the_request() -> None:
    started, cancelled = anyio.Event(), anyio.Event()
    server = MCPServer("cancel")

    @server.tool()
    async def forever(ctx: Context) -> str:
        await ctx.report_progress(0)  # commits the answer to SSE
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        return "never"

    async with asgi_client(server.asgi_app()) as http:
        client = ModernHTTP(http)
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "forever",
                    "arguments": {},
                    "_meta": {**envelope(), "progressToken": 1},
                },
            }
        ).encode()
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": VERSION,
            "mcp-method": "tools/call",
            "mcp-name": "forever",
        }
        with anyio.fail_after(10):
            async with client.http.stream("POST", "/mcp", content=body, headers=headers) as r:
                assert r.headers["content-type"].startswith("text/event-stream")
                await started.wait()
            await cancelled.wait()


# -- subscriptions --------------------------------------------------------------------


async def test_listen_acknowledges_then_delivers_what_was_asked(wire: WireChecker) -> None:
    server = build_server(Effects())
    received: list[dict[str, Any]] = []
    async with asgi_client(SchemaCheckingASGI(server.asgi_app(), wire)) as http:
        client = ModernHTTP(http)
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": "sub-1",
                "method": "subscriptions/listen",
                "params": {
                    "_meta": envelope(),
                    "notifications": {
                        "toolsListChanged": True,
                        "resourceSubscriptions": ["test://doc"],
                        "promptsListChanged": True,
                    },
                },
            }
        ).encode()
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": VERSION,
            "mcp-method": "subscriptions/listen",
        }
        from jsonrpc_core.http import SSEDecoder

        with anyio.fail_after(10):
            async with client.http.stream("POST", "/mcp", content=body, headers=headers) as r:
                decoder = SSEDecoder()
                chunks = r.aiter_bytes()
                pending: list[dict[str, Any]] = []  # one body chunk may hold several events

                async def next_message() -> dict[str, Any]:
                    while not pending:
                        pending.extend(
                            dict(json.loads(event.data))
                            for event in decoder.feed(await chunks.__anext__())
                            if event.data
                        )
                    return pending.pop(0)

                received.append(await next_message())
                await server.notify_resources_changed()  # not asked for
                await server.notify_resource_updated("test://other")  # not this one
                await server.notify_tools_changed()
                await server.notify_resource_updated("test://doc")
                received.append(await next_message())
                received.append(await next_message())
                await server.subscriptions.close()  # shutdown: a graceful end
                received.append(await next_message())
    ack, tools, updated, end = received
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourceSubscriptions": ["test://doc"],
    }
    assert tools["method"] == "notifications/tools/list_changed"
    assert updated == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": "sub-1"},
            "uri": "test://doc",
        },
    }
    for message in (ack, tools):
        assert message["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"
    assert end["id"] == "sub-1"
    assert end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1"


async def test_listening_for_tasks_needs_the_extension(wire: WireChecker) -> None:
    async with modern_http(build_server(Effects()), wire) as client:
        answer = await client.post("subscriptions/listen", {"notifications": {"taskIds": ["t"]}})
    assert answer.status == 400 and answer.error["code"] == -32021
    assert answer.error["data"]["requiredCapabilities"] == {"extensions": {TASKS: {}}}


# -- both eras, one server -------------------------------------------------------------


async def test_one_endpoint_serves_both_eras() -> None:
    from mcp_layer import connect_http

    server = build_server(Effects())
    async with asgi_client(server.asgi_app()) as http:
        with anyio.fail_after(20):
            async with connect_http("http://127.0.0.1/mcp", client=http) as legacy:
                assert legacy.protocol_version == "2025-11-25"
                assert legacy.stream.session_id  # type: ignore[attr-defined]
                modern_client = ModernHTTP(http)
                discovered = await modern_client.post("server/discover")
                assert discovered.result["supportedVersions"] == [VERSION]
                # A stray session id on a 2026 request is ignored.
                called = await modern_client.post(
                    "tools/call",
                    {"name": "in_region", "arguments": {"region": "eu"}},
                    headers={
                        "Mcp-Param-Region": "eu",
                        "Mcp-Session-Id": legacy.stream.session_id,  # type: ignore[attr-defined]
                    },
                )
                assert text(called) == "1 in eu"
                listed = await legacy.list_all_tools()
                assert "greet" in {tool.name for tool in listed}
                assert legacy.server is not None


async def test_one_process_serves_both_eras_over_stdio() -> None:
    async def exchange(process: Any, message: dict[str, Any]) -> dict[str, Any]:
        await process.send_raw((json.dumps(message) + "\n").encode())
        while True:
            received = await process.receive()
            payload = received.payload
            if getattr(payload, "id", None) == message["id"]:
                return dict(json.loads(payload_json(payload)))

    with anyio.fail_after(30):
        async with spawn_stdio([sys.executable, str(EVERYTHING), "--stdio"]) as process:
            discovered = await exchange(
                process,
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "server/discover",
                    "params": {"_meta": envelope()},
                },
            )
            assert discovered["result"]["supportedVersions"] == [VERSION]
            initialized = await exchange(
                process,
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "old", "version": "1"},
                    },
                },
            )
            assert initialized["result"]["protocolVersion"] == "2025-11-25"
            first = await exchange(
                process,
                {
                    "jsonrpc": "2.0",
                    "id": 3,
                    "method": "tools/call",
                    "params": {
                        "name": "test_input_required_result_elicitation",
                        "arguments": {},
                        "_meta": envelope(ELICIT),
                    },
                },
            )
            assert first["result"]["resultType"] == "input_required"
            removed = await exchange(
                process,
                {"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"_meta": envelope()}},
            )
            assert removed["error"]["code"] == -32601
            pinged = await exchange(process, {"jsonrpc": "2.0", "id": 5, "method": "ping"})
            assert pinged["result"] == {}


def payload_json(payload: Any) -> str:
    from jsonrpc_core import encode

    return encode(payload).decode()


async def test_a_posted_cancellation_cannot_reach_another_clients_request() -> None:
    started, release = anyio.Event(), anyio.Event()
    server = MCPServer("shared")

    @server.tool()
    async def slow() -> str:
        started.set()
        await release.wait()
        return "finished"

    async with asgi_client(server.asgi_app()) as http:
        client = ModernHTTP(http)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as task_group:
                answers: list[Answer] = []

                async def call() -> None:
                    answers.append(await client.post("tools/call", {"name": "slow"}, request_id=1))

                task_group.start_soon(call)
                await started.wait()
                # Another client names id 1 (ids are remapped on the shared connection).
                cancel = await client.send_raw(
                    json.dumps(
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/cancelled",
                            "params": {"requestId": 1, "_meta": envelope()},
                        }
                    ).encode(),
                    {
                        "content-type": "application/json",
                        "accept": "application/json, text/event-stream",
                        "mcp-protocol-version": VERSION,
                        "mcp-method": "notifications/cancelled",
                    },
                )
                assert cancel.status == 202
                release.set()
    assert text(answers[0]) == "finished"
