"""Content blocks: text, image, audio, resource links and embedded resources (docs/content.mdx).

ACP reuses MCP's content shapes so agents can forward MCP tool output unchanged. A
`ContentBlock` is told apart by ``type``; the union is closed (an unknown ``type`` is an
error, or a dropped item where the array skips invalid items).
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from ._base import ACPModel, Int64
from ._lenient import ItemsOrDefault, OrDefault, tagged_union

__all__ = [
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "ContentBlock",
    "EmbeddedResource",
    "EmbeddedResourceResource",
    "ImageContent",
    "ResourceLink",
    "Role",
    "TextContent",
    "TextResourceContents",
]

Role = Literal["assistant", "user"]
"""The sender or recipient of messages and data in a conversation."""


class Annotations(ACPModel):
    """Optional annotations that inform the client how objects are used or displayed."""

    audience: ItemsOrDefault[Role] | None = None
    last_modified: OrDefault[str | None] = None
    priority: OrDefault[float | None] = None


class TextContent(ACPModel):
    """Text provided to or from an LLM (plain text or Markdown)."""

    type: Literal["text"] = "text"
    text: str
    annotations: OrDefault[Annotations | None] = None


class ImageContent(ACPModel):
    """An image provided to or from an LLM (needs the ``image`` prompt capability)."""

    type: Literal["image"] = "image"
    data: str
    """Base64-encoded image data."""
    mime_type: str
    uri: OrDefault[str | None] = None
    annotations: OrDefault[Annotations | None] = None


class AudioContent(ACPModel):
    """Audio provided to or from an LLM (needs the ``audio`` prompt capability)."""

    type: Literal["audio"] = "audio"
    data: str
    """Base64-encoded audio data."""
    mime_type: str
    annotations: OrDefault[Annotations | None] = None


class ResourceLink(ACPModel):
    """A resource the agent can read, included in a prompt or tool call result."""

    type: Literal["resource_link"] = "resource_link"
    name: str
    uri: str
    title: OrDefault[str | None] = None
    description: OrDefault[str | None] = None
    mime_type: OrDefault[str | None] = None
    size: OrDefault[Int64 | None] = None
    annotations: OrDefault[Annotations | None] = None


class TextResourceContents(ACPModel):
    """Text-based resource contents."""

    uri: str
    text: str
    mime_type: OrDefault[str | None] = None


class BlobResourceContents(ACPModel):
    """Binary resource contents (base64 in ``blob``)."""

    uri: str
    blob: str
    mime_type: OrDefault[str | None] = None


EmbeddedResourceResource: TypeAlias = TextResourceContents | BlobResourceContents
"""Resource content that can be embedded in a message: text or binary."""


class EmbeddedResource(ACPModel):
    """The contents of a resource, embedded into a prompt or tool call result."""

    type: Literal["resource"] = "resource"
    resource: EmbeddedResourceResource
    annotations: OrDefault[Annotations | None] = None


if TYPE_CHECKING:
    ContentBlock: TypeAlias = (
        TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource
    )
else:
    ContentBlock = tagged_union(
        "type", TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource
    )
"""Displayable content in prompts, message chunks and tool calls, told apart by ``type``."""
