"""The MCP "everything" server: every fixture the official conformance suite expects.

The suite (npm ``@modelcontextprotocol/conformance``) connects as a client and calls
tools, resources and prompts by fixed names (``test_simple_text``,
``test://static-text``, ``test_simple_prompt``, ...). This server declares each of them
with `mcp_layer`'s public API only, plus a few more that exercise the rest of the
protocol (structured output, resource links, roots, URL elicitation, list-changed and
resource-updated notifications).

Streamable HTTP at http://127.0.0.1:PORT/mcp:
    python -m rpcweave.examples.mcp.everything_server --port 3001
stdio:
    python -m rpcweave.examples.mcp.everything_server --stdio

Over HTTP the server keeps an event store, so SSE streams can be resumed with
``Last-Event-ID`` (``test_reconnection`` closes its stream on purpose to show it).

The server speaks both protocol eras. The 2026-07-28 fixtures (multi round-trip
requests: ``test_input_required_result_*``; ``test_missing_capability``,
``test_x_mcp_header``, ...) use the same `Context` API as the handshake-era ones: in
the 2026 era a question to the client becomes an input request of an
``InputRequiredResult``, and the tool runs again once the client answered.
"""

from __future__ import annotations

import argparse
import base64
import json
from typing import Any

import anyio
from pydantic import BaseModel

from jsonrpc_core import InMemoryEventStore, InternalError
from mcp_layer import Audio, Context, Image, InputRequest, MCPServer, ServerSession
from mcp_layer.types import (
    Completion,
    CompletionArgument,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    PromptReference,
    ResourceLink,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

__all__ = [
    "JSON_SCHEMA_2020_12_INPUT_SCHEMA",
    "RETRY_INTERVAL_MS",
    "TEST_AUDIO_BASE64",
    "TEST_IMAGE_BASE64",
    "build_server",
    "main",
]

TEST_IMAGE_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAF"
    "BQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red PNG pixel."""

TEST_AUDIO_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""A minimal WAV file."""

RETRY_INTERVAL_MS = 500
"""The ``retry`` the server asks SSE clients to wait before they resume a closed stream."""

JSON_SCHEMA_2020_12_INPUT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}
"""A raw JSON Schema 2020-12 input schema (SEP-1613): every keyword must reach clients."""

SEP1034_DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}

SEP1330_ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}

_CITIES = ["paris", "park", "party", "lisbon", "london", "los angeles", "tokyo", "toronto"]


class WeatherReport(BaseModel):
    """A structured tool result (its JSON Schema becomes the tool's ``outputSchema``)."""

    city: str
    temperature_celsius: float
    conditions: str


def _elicitation_summary(prefix: str, action: str, content: Any) -> str:
    return f"{prefix}: action={action}, content={json.dumps(content or {}, separators=(',', ':'))}"


def build_server() -> MCPServer:
    """The everything server, with every fixture declared."""
    server = MCPServer(
        "mcp-conformance-test-server",
        "1.0.0",
        title="rpcweave everything server",
        instructions="Fixtures for the MCP conformance suite; every tool is safe to call.",
    )
    _declare_content_tools(server)
    _declare_interactive_tools(server)
    _declare_elicitation_tools(server)
    _declare_notification_tools(server)
    _declare_input_required_tools(server)
    _declare_era_2026_tools(server)
    _declare_task_tools(server)
    _declare_resources(server)
    _declare_prompts(server)

    @server.completion()
    def complete(ref: Any, argument: CompletionArgument, context: Any) -> Completion:
        """Suggest cities for the prompt arguments and ids for the template variable."""
        if isinstance(ref, PromptReference) and ref.name == "test_prompt_with_arguments":
            candidates = _CITIES
        elif isinstance(ref, ResourceTemplateReference) and argument.name == "id":
            candidates = [str(n) for n in range(1, 6)]
        else:
            candidates = []
        values = [c for c in candidates if c.startswith(argument.value.lower())]
        return Completion(values=values, total=len(values), has_more=False)

    async def roots_changed(session: ServerSession) -> None:
        await session.send_log("info", "Client roots changed", logger="everything-server")

    server.on_roots_changed = roots_changed
    return server


def _declare_content_tools(server: MCPServer) -> None:
    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def test_simple_text() -> str:
        """Tests simple text content response"""
        return "This is a simple text response for testing."

    @server.tool()
    def test_image_content() -> Image:
        """Tests image content response"""
        return Image(data=base64.b64decode(TEST_IMAGE_BASE64), mime_type="image/png")

    @server.tool()
    def test_audio_content() -> Audio:
        """Tests audio content response"""
        return Audio(data=base64.b64decode(TEST_AUDIO_BASE64), mime_type="audio/wav")

    @server.tool()
    def test_embedded_resource() -> EmbeddedResource:
        """Tests embedded resource content response"""
        return EmbeddedResource(
            resource=TextResourceContents(
                uri="test://embedded-resource",
                mime_type="text/plain",
                text="This is an embedded resource content.",
            )
        )

    @server.tool()
    def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
        """Tests response with multiple content types (text, image, resource)"""
        return [
            TextContent(text="Multiple content types test:"),
            ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png"),
            EmbeddedResource(
                resource=TextResourceContents(
                    uri="test://mixed-content-resource",
                    mime_type="application/json",
                    text=json.dumps({"test": "data", "value": 123}),
                )
            ),
        ]

    @server.tool()
    def test_resource_link() -> list[TextContent | ResourceLink]:
        """Tests resource link content response"""
        return [
            TextContent(text="A link to the static text resource:"),
            ResourceLink(
                uri="test://static-text",
                name="static-text",
                mime_type="text/plain",
                description="A static text resource for testing",
            ),
        ]

    @server.tool()
    def test_error_handling() -> str:
        """Tests error response handling"""
        raise RuntimeError("This tool intentionally returns an error for testing")

    @server.tool(structured_output=True)
    def test_structured_output(city: str = "Paris") -> WeatherReport:
        """Tests structured content with an output schema.

        Args:
            city: The city to report on.
        """
        return WeatherReport(city=city, temperature_celsius=21.5, conditions="sunny")

    @server.tool(
        description="Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
        input_schema=JSON_SCHEMA_2020_12_INPUT_SCHEMA,
    )
    def json_schema_2020_12_tool(**arguments: Any) -> str:
        return f"JSON Schema 2020-12 tool called with: {json.dumps(arguments)}"


def _declare_interactive_tools(server: MCPServer) -> None:
    """Logging, progress, a dropped SSE stream and sampling during a call."""

    @server.tool()
    async def test_tool_with_logging(ctx: Context) -> str:
        """Tests tool that emits log messages during execution"""
        await ctx.info("Tool execution started")
        await anyio.sleep(0.05)
        await ctx.info("Tool processing data")
        await anyio.sleep(0.05)
        await ctx.info("Tool execution completed")
        return "Tool with logging executed successfully"

    @server.tool()
    async def test_tool_with_progress(ctx: Context) -> str:
        """Tests tool that reports progress notifications"""
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
            if step < 100:
                await anyio.sleep(0.05)
        return str(ctx.progress_token)

    @server.tool()
    async def test_reconnection(ctx: Context) -> str:
        """Tests SSE stream disconnection and client reconnection (SEP-1699). Server will
        close the stream mid-call and send the result after client reconnects."""
        ctx.close_sse_stream()
        await anyio.sleep(0.1)
        return (
            "Reconnection test completed successfully. If you received this, the client "
            "properly reconnected after stream closure."
        )

    @server.tool()
    async def test_sampling(prompt: str, ctx: Context) -> str:
        """Tests server-initiated sampling (LLM completion request)

        Args:
            prompt: The prompt to send to the LLM
        """
        result = await ctx.sample(prompt, max_tokens=100)
        content = result.content
        text = content.text if isinstance(content, TextContent) else "No response"
        return f"LLM response: {text}"


def _declare_elicitation_tools(server: MCPServer) -> None:
    """Elicitation (form and URL modes) and roots, asked of the client during a call."""

    @server.tool()
    async def test_elicitation(message: str, ctx: Context) -> str:
        """Tests server-initiated elicitation (user input request)

        Args:
            message: The message to show the user
        """
        schema = {
            "type": "object",
            "properties": {"response": {"type": "string", "description": "User's response"}},
            "required": ["response"],
        }
        result = await ctx.elicit(message, schema)
        return _elicitation_summary("User response", result.action, result.content)

    @server.tool()
    async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
        """Tests elicitation with default values per SEP-1034"""
        result = await ctx.elicit(
            "Please review and update the form fields with defaults", SEP1034_DEFAULTS_SCHEMA
        )
        return _elicitation_summary("Elicitation completed", result.action, result.content)

    @server.tool()
    async def test_elicitation_sep1330_enums(ctx: Context) -> str:
        """Tests elicitation with enum schema improvements per SEP-1330"""
        result = await ctx.elicit(
            "Please select options from the enum fields", SEP1330_ENUMS_SCHEMA
        )
        return _elicitation_summary("Elicitation completed", result.action, result.content)

    @server.tool()
    async def test_url_elicitation(ctx: Context) -> str:
        """Tests URL-mode elicitation: asks the user to visit a page"""
        result = await ctx.elicit_url(
            "Please authorize the conformance test", "https://example.com/authorize", "auth-1"
        )
        return f"URL elicitation: action={result.action}"

    @server.tool()
    async def test_list_roots(ctx: Context) -> str:
        """Tests roots/list: returns the client's roots as JSON text"""
        roots = await ctx.list_roots()
        return json.dumps([{"uri": r.uri, "name": r.name} for r in roots])


def _declare_notification_tools(server: MCPServer) -> None:
    @server.tool()
    async def test_trigger_tool_change() -> str:
        """Sends notifications/tools/list_changed to every client"""
        await server.notify_tools_changed()
        return "Mutation triggered"

    @server.tool()
    async def test_trigger_prompt_change() -> str:
        """Sends notifications/prompts/list_changed to every client"""
        await server.notify_prompts_changed()
        return "Mutation triggered"

    @server.tool()
    async def test_trigger_resource_change() -> str:
        """Sends notifications/resources/list_changed to every client"""
        await server.notify_resources_changed()
        return "Mutation triggered"

    @server.tool()
    async def test_trigger_resource_update(uri: str = "test://watched-resource") -> str:
        """Sends notifications/resources/updated to the clients subscribed to ``uri``

        Args:
            uri: The resource that changed.
        """
        await server.notify_resource_updated(uri)
        return f"Update sent for {uri}"


def _declare_resources(server: MCPServer) -> None:
    @server.resource(
        "test://static-text",
        name="static-text",
        title="Static Text Resource",
        description="A static text resource for testing",
        mime_type="text/plain",
    )
    def static_text() -> str:
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary",
        name="static-binary",
        title="Static Binary Resource",
        description="A static binary resource (image) for testing",
        mime_type="image/png",
    )
    def static_binary() -> bytes:
        return base64.b64decode(TEST_IMAGE_BASE64)

    @server.resource(
        "test://template/{id}/data",
        name="template",
        title="Resource Template",
        description="A resource template with parameter substitution",
        mime_type="application/json",
    )
    def template(id: str) -> str:
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})

    @server.resource(
        "test://watched-resource",
        name="watched-resource",
        title="Watched Resource",
        description="A resource clients can subscribe to",
        mime_type="text/plain",
    )
    def watched_resource() -> str:
        return "Watched resource content"


NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}

X_MCP_HEADER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {
            "type": "string",
            "description": "Where to run; mirrored into the Mcp-Param-Region header",
            "x-mcp-header": "Region",
        },
        "query": {"type": "string", "description": "What to run"},
    },
    "required": ["region"],
}


def _text_of(answer: Any, field: str, default: str) -> str:
    content = getattr(answer, "content", None) or {}
    value = content.get(field) if isinstance(content, dict) else None
    return str(value) if value is not None else default


def _sampled_text(result: Any) -> str:
    content = result.content
    return content.text if isinstance(content, TextContent) else "(no text)"


def _declare_input_required_tools(server: MCPServer) -> None:
    """2026-07-28 fixtures: multi round-trip requests (``InputRequiredResult``)."""

    @server.tool()
    async def test_input_required_result_elicitation(ctx: Context) -> str:
        """Asks the user's name (MRTR elicitation), then greets them"""
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {_text_of(answer, 'name', 'stranger')}!"

    @server.tool()
    async def test_input_required_result_sampling(ctx: Context) -> str:
        """Asks the client's model a question (MRTR sampling)"""
        result = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return f"Sampling response: {_sampled_text(result)}"

    @server.tool()
    async def test_input_required_result_list_roots(ctx: Context) -> str:
        """Asks the client for its roots (MRTR roots/list)"""
        roots = await ctx.list_roots(key="client_roots")
        return "Client roots: " + ", ".join(root.uri for root in roots)

    @server.tool()
    async def test_input_required_result_request_state(ctx: Context) -> str:
        """Asks for a confirmation, carrying its state in a sealed requestState"""
        schema = {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
        }
        answer = await ctx.elicit("Please confirm", schema, key="confirm")
        verdict = "state-ok" if ctx.resumed else "state-missing"
        return f"{verdict}: confirmed={_text_of(answer, 'ok', 'false')}"

    @server.tool()
    async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
        """Asks for a name, a greeting and the roots at once"""
        answers = await ctx.ask(
            {
                "user_name": InputRequest.elicit("What is your name?", NAME_SCHEMA),
                "greeting": InputRequest.sample("Generate a greeting", max_tokens=50),
                "client_roots": InputRequest.roots(),
            }
        )
        name = _text_of(answers["user_name"], "name", "stranger")
        greeting = _sampled_text(answers["greeting"])
        roots = ", ".join(root.uri for root in answers["client_roots"].roots)
        return f"{greeting} {name} (roots: {roots})"

    @server.tool()
    async def test_input_required_result_multi_round(ctx: Context) -> str:
        """Asks two questions, one round each"""
        first = await ctx.elicit("Step 1: What is your name?", NAME_SCHEMA, key="step1")
        color_schema = {
            "type": "object",
            "properties": {"color": {"type": "string"}},
            "required": ["color"],
        }
        second = await ctx.elicit("Step 2: What is your favorite color?", color_schema, key="step2")
        name = _text_of(first, "name", "stranger")
        return f"{name} likes {_text_of(second, 'color', 'no color')}"

    @server.tool()
    async def test_input_required_result_tampered_state(ctx: Context) -> str:
        """Asks for a confirmation; a tampered requestState is refused (-32602)"""
        answer = await ctx.elicit("Please confirm", NAME_SCHEMA, key="confirm")
        return f"Confirmed by {_text_of(answer, 'name', 'nobody')}"


def _declare_era_2026_tools(server: MCPServer) -> None:
    """2026-07-28 fixtures: capabilities per request, headers, logging."""

    @server.tool()
    async def test_input_required_result_capabilities(ctx: Context) -> str:
        """Asks only what the client's capabilities allow"""
        declared = ctx.client_capabilities
        requests: dict[str, InputRequest] = {}
        if declared.elicitation is not None:
            requests["user_name"] = InputRequest.elicit("What is your name?", NAME_SCHEMA)
        if declared.sampling is not None:
            requests["greeting"] = InputRequest.sample("Generate a greeting", max_tokens=50)
        if declared.roots is not None:
            requests["client_roots"] = InputRequest.roots()
        if not requests:
            return "The client declared no capability to ask with"
        answers = await ctx.ask(requests)
        return "Answered: " + ", ".join(sorted(answers))

    @server.tool()
    async def test_missing_capability(ctx: Context) -> str:
        """Needs sampling: a client that does not declare it gets -32021"""
        result = await ctx.sample("Say hello", max_tokens=20)
        return f"Sampled: {_sampled_text(result)}"

    @server.tool()
    async def test_streaming_elicitation(ctx: Context) -> str:
        """Asks the user a question, in the 2026 era as an InputRequiredResult"""
        await ctx.info("About to ask the user")
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {_text_of(answer, 'name', 'stranger')}!"

    @server.tool()
    async def test_logging_tool(ctx: Context) -> str:
        """Logs at info level (only to clients that asked for log messages)"""
        await ctx.info("Logging tool started")
        await ctx.debug("Logging tool details")
        return "Logging tool executed"

    @server.tool(
        description="Runs a query in a region mirrored into an Mcp-Param-Region header",
        input_schema=X_MCP_HEADER_SCHEMA,
    )
    def test_x_mcp_header(region: str, query: str = "") -> str:
        return f"Ran {query or 'nothing'!r} in {region}"


def _declare_task_tools(server: MCPServer) -> None:
    """Tasks extension fixtures (``io.modelcontextprotocol/tasks``, SEP-2663)."""

    @server.tool()
    def greet(name: str = "World") -> str:
        """Greets someone (never a task)

        Args:
            name: Who to greet.
        """
        return f"Hello, {name}!"

    @server.tool(task_support="optional")
    async def slow_compute(seconds: float = 1.0, label: str = "") -> str:
        """Sleeps, then answers; a task for clients of the tasks extension

        Args:
            seconds: How long to work.
            label: A name for the computation.
        """
        await anyio.sleep(seconds)
        return f"Computed {label or 'something'} in {seconds:g} s"

    @server.tool(task_support="required")
    async def failing_job() -> str:
        """Always fails (a tool error) after about a second; only runs as a task"""
        await anyio.sleep(1)
        raise RuntimeError("the job failed on purpose")

    @server.tool(task_support="optional")
    async def protocol_error_job() -> str:
        """Fails with a protocol error (the task ends failed)"""
        await anyio.sleep(0.1)
        raise InternalError("the job broke down on purpose")

    confirm_schema = {
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}},
        "required": ["confirm"],
    }

    @server.tool(task_support="optional")
    async def confirm_delete(ctx: Context, filename: str = "file.txt") -> str:
        """Asks for a confirmation (a task waits for tasks/update), then deletes nothing

        Args:
            filename: The file to pretend to delete.
        """
        answer = await ctx.elicit(f"Delete {filename}?", confirm_schema, key="confirm")
        confirmed = answer.action == "accept" and _text_of(answer, "confirm", "false") == "True"
        return f"{filename}: {'deleted' if confirmed else 'kept'}"

    @server.tool(task_support="optional")
    async def multi_input(ctx: Context) -> str:
        """Asks two questions at once"""
        answers = await ctx.ask(
            {
                "first": InputRequest.elicit("First name?", NAME_SCHEMA),
                "second": InputRequest.elicit("Second name?", NAME_SCHEMA),
            }
        )
        names = [_text_of(answers[key], "name", "?") for key in ("first", "second")]
        return "Got " + " and ".join(names)

    @server.tool(task_support="required", task_start="explicit")
    async def test_tool_with_task(ctx: Context) -> str:
        """Asks a name (multi round-trip), then goes on as a task to greet"""
        answer = await ctx.elicit("What is your name?", NAME_SCHEMA, key="user_name")
        await ctx.start_task()
        await anyio.sleep(0.2)
        return f"Hello, {_text_of(answer, 'name', 'stranger')}, from a task!"


def _declare_prompts(server: MCPServer) -> None:
    @server.prompt(title="Simple Test Prompt", description="A simple prompt without arguments")
    def test_simple_prompt() -> str:
        return "This is a simple prompt for testing."

    @server.prompt(title="Prompt With Arguments", description="A prompt with required arguments")
    def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
        """Args:
        arg1: First test argument
        arg2: Second test argument
        """
        return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"

    @server.prompt(
        title="Prompt With Embedded Resource",
        description="A prompt that includes an embedded resource",
    )
    def test_prompt_with_embedded_resource(resourceUri: str) -> list[PromptMessage]:
        """Args:
        resourceUri: URI of the resource to embed
        """
        resource = TextResourceContents(
            uri=resourceUri, mime_type="text/plain", text="Embedded resource content for testing."
        )
        return [
            PromptMessage(role="user", content=EmbeddedResource(resource=resource)),
            PromptMessage(
                role="user", content=TextContent(text="Please process the embedded resource above.")
            ),
        ]

    @server.prompt(
        title="Prompt Needing Input",
        description="A prompt that asks the user for context first (2026-07-28 MRTR)",
    )
    async def test_input_required_result_prompt(ctx: Context) -> str:
        schema = {
            "type": "object",
            "properties": {"context": {"type": "string"}},
            "required": ["context"],
        }
        answer = await ctx.elicit("What context should the prompt use?", schema, key="user_context")
        return f"Use this context: {_text_of(answer, 'context', 'none')}"

    @server.prompt(title="Prompt With Image", description="A prompt that includes image content")
    def test_prompt_with_image() -> list[Any]:
        return [
            ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png"),
            "Please analyze the image above.",
        ]


def main(argv: list[str] | None = None) -> None:
    """Serve the everything server over Streamable HTTP (default) or stdio."""
    parser = argparse.ArgumentParser(description="MCP everything server (conformance fixtures)")
    parser.add_argument("--stdio", action="store_true", help="serve on stdin/stdout")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3001)
    args = parser.parse_args(argv)
    server = build_server()
    if args.stdio:
        server.run("stdio")
        return
    server.run(
        "http",
        host=args.host,
        port=args.port,
        event_store=InMemoryEventStore(),
        retry_interval_ms=RETRY_INTERVAL_MS,
    )


if __name__ == "__main__":
    main()
