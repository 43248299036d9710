"""Tools answering with each kind of content the suite checks."""

from __future__ import annotations

import base64
import json
from typing import Any

from pydantic import BaseModel

from mcp_layer import Audio, Image, MCPServer
from mcp_layer.types import (
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)

from ._fixtures import JSON_SCHEMA_2020_12_INPUT_SCHEMA, TEST_AUDIO_BASE64, TEST_IMAGE_BASE64

__all__ = ["WeatherReport", "declare_content_tools"]


class WeatherReport(BaseModel):
    """A structured tool result (its JSON Schema becomes the tool's ``outputSchema``)."""

    city: str
    temperature_celsius: float
    conditions: str


def declare_content_tools(server: MCPServer) -> None:
    """Text, image, audio, embedded resource, mixed content, a resource link, a tool error,
    structured output and a raw JSON Schema 2020-12 input schema."""

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
