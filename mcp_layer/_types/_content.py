"""Content blocks: what tools return, prompts contain and sampling exchanges.

Blocks are told apart by their ``type`` member. A block whose ``type`` this revision
does not know (a newer peer's ``"video"``, say) becomes an `UnknownContent` that keeps
every member and is written back unchanged, instead of failing the whole message: a
client can skip what it cannot show, and a proxy forwards it intact. A block with a
known ``type`` but a wrong shape, or with no string ``type`` at all, is rejected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Field, Tag

from ._base import MCPModel
from ._common import Annotations
from ._resources import Resource, ResourceContentsBlock

__all__ = [
    "UNKNOWN_CONTENT_TAG",
    "AudioContent",
    "ContentBlock",
    "EmbeddedResource",
    "ImageContent",
    "ResourceLink",
    "TextContent",
    "UnknownContent",
    "content_discriminator",
]

UNKNOWN_CONTENT_TAG = "<unknown>"
"""The union tag of `UnknownContent` (never a real ``type`` value)."""


class TextContent(MCPModel):
    """Text provided to or from an LLM."""

    type: Literal["text"] = "text"
    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ImageContent(MCPModel):
    """An image provided to or from an LLM."""

    type: Literal["image"] = "image"
    data: str
    """The base64-encoded image data."""
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class AudioContent(MCPModel):
    """Audio provided to or from an LLM (since 2025-03-26)."""

    type: Literal["audio"] = "audio"
    data: str
    """The base64-encoded audio data."""
    mime_type: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class ResourceLink(Resource):
    """A readable resource, linked from a prompt or tool call result (since 2025-06-18)."""

    type: Literal["resource_link"] = "resource_link"


class EmbeddedResource(MCPModel):
    """The contents of a resource, embedded into a prompt or tool call result."""

    type: Literal["resource"] = "resource"
    resource: ResourceContentsBlock
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = Field(default=None, alias="_meta")


class UnknownContent(MCPModel):
    """A content block of a ``type`` this revision does not define; all members are kept."""

    type: str


def content_discriminator(known: frozenset[str]) -> Callable[[Any], str | None]:
    """A union tag function: the block's ``type`` if known, else `UNKNOWN_CONTENT_TAG`.

    Returns ``None`` (a validation error) when there is no string ``type``.
    """

    def tag(value: Any) -> str | None:
        kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
        if not isinstance(kind, str):
            return None
        return kind if kind in known else UNKNOWN_CONTENT_TAG

    return tag


ContentBlock: TypeAlias = Annotated[
    Annotated[TextContent, Tag("text")]
    | Annotated[ImageContent, Tag("image")]
    | Annotated[AudioContent, Tag("audio")]
    | Annotated[ResourceLink, Tag("resource_link")]
    | Annotated[EmbeddedResource, Tag("resource")]
    | Annotated[UnknownContent, Tag(UNKNOWN_CONTENT_TAG)],
    Discriminator(
        content_discriminator(frozenset({"text", "image", "audio", "resource_link", "resource"})),
        custom_error_type="content_type",
        custom_error_message="a content block needs a string 'type' member",
    ),
]
"""A content block of a tool result, prompt message or embedded tool result."""
