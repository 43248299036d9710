"""Resources, prompts and completions."""

from __future__ import annotations

import base64
import json
from typing import Any

from mcp_layer import Context, MCPServer
from mcp_layer.types import (
    Completion,
    CompletionArgument,
    EmbeddedResource,
    ImageContent,
    PromptMessage,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
    TextResourceContents,
)

from ._fixtures import CITIES, TEST_IMAGE_BASE64, text_of

__all__ = ["declare_completions", "declare_prompts", "declare_resources"]


def declare_resources(server: MCPServer) -> None:
    """Static text and binary resources, a template and a resource to subscribe to."""

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


def declare_prompts(server: MCPServer) -> None:
    """Prompts with no argument, with arguments, with an embedded resource, with an image,
    and one that asks the user first (2026-07-28)."""

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
        return f"Use this context: {text_of(answer, 'context', 'none')}"

    @server.prompt(title="Prompt With Image", description="A prompt that includes image content")
    def test_prompt_with_image() -> list[Any]:
        return [
            ImageContent(data=TEST_IMAGE_BASE64, mime_type="image/png"),
            "Please analyze the image above.",
        ]


def declare_completions(server: MCPServer) -> None:
    """Completion of the prompt arguments (cities) and of the template's ``id``."""

    @server.completion()
    def complete(ref: Any, argument: CompletionArgument, context: Any) -> Completion:
        """Suggest cities for the prompt arguments and ids for the template variable."""
        if isinstance(ref, PromptReference) and ref.name == "test_prompt_with_arguments":
            candidates = CITIES
        elif isinstance(ref, ResourceTemplateReference) and argument.name == "id":
            candidates = [str(n) for n in range(1, 6)]
        else:
            candidates = []
        values = [c for c in candidates if c.startswith(argument.value.lower())]
        return Completion(values=values, total=len(values), has_more=False)
