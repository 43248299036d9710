"""The MCP "everything" server: every fixture the official conformance suite expects.

The suite (npm ``@modelcontextprotocol/conformance``) connects as a client and calls
tools, resources and prompts by fixed names (``test_simple_text``,
``test://static-text``, ``test_simple_prompt``, ...). This server declares each of them
with `mcp_layer`'s public API only, plus a few more that exercise the rest of the
protocol (structured output, resource links, roots, URL elicitation, list-changed and
resource-updated notifications).

Streamable HTTP at http://127.0.0.1:PORT/mcp:  python examples/mcp/everything_server.py --port 3001
stdio:                                         python examples/mcp/everything_server.py --stdio

Over HTTP the server keeps an event store, so SSE streams can be resumed with
``Last-Event-ID`` (``test_reconnection`` closes its stream on purpose to show it).
"""

from __future__ import annotations

import argparse
import base64
import json
from typing import Any

import anyio
from pydantic import BaseModel

from jsonrpc_core import InMemoryEventStore
from mcp_layer import Audio, Context, Image, MCPServer, ServerSession
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
    _declare_notification_tools(server)
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
