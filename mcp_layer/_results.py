"""Turning what a tool, resource or prompt function returns into MCP objects."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pydantic
import pydantic_core

from .types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ContentBlock,
    EmbeddedResource,
    GetPromptResult,
    ImageContent,
    PromptMessage,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

__all__ = [
    "UNSTRUCTURED_RETURN_TYPES",
    "Audio",
    "Image",
    "to_call_tool_result",
    "to_call_tool_wire",
    "to_content",
    "to_prompt_result",
    "to_resource_contents",
]

_CONTENT_TYPES = (TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource)


@dataclasses.dataclass
class _Media:
    data: bytes | None = None
    path: str | Path | None = None
    mime_type: str | None = None

    def _payload(self, default: str) -> tuple[str, str]:
        raw = self.data
        mime = self.mime_type
        if raw is None:
            if self.path is None:
                raise ValueError("give data or a path")
            raw = Path(self.path).read_bytes()
            if not mime:
                import mimetypes  # ~60 KiB, for files only

                mime = mimetypes.guess_type(str(self.path))[0]
        return base64.b64encode(raw).decode("ascii"), mime or default


class Image(_Media):
    """Return this from a tool to send an image (bytes or a file path)."""

    def to_content(self) -> ImageContent:
        """The MCP image content block."""
        data, mime = self._payload("image/png")
        return ImageContent(data=data, mime_type=mime)


class Audio(_Media):
    """Return this from a tool to send audio (bytes or a file path)."""

    def to_content(self) -> AudioContent:
        """The MCP audio content block."""
        data, mime = self._payload("audio/wav")
        return AudioContent(data=data, mime_type=mime)


UNSTRUCTURED_RETURN_TYPES: tuple[type, ...] = (*_CONTENT_TYPES, Image, Audio, CallToolResult)
"""Return types that are tool content rather than data: they never get an output schema."""


def _json_text(value: Any) -> str:
    return pydantic_core.to_json(value, by_alias=True, exclude_none=True, indent=2).decode()


def to_content(value: Any) -> list[ContentBlock]:
    """Content blocks for any returned value (strings as text, objects as JSON text)."""
    if value is None:
        return []
    if isinstance(value, _CONTENT_TYPES):
        return [value]
    if isinstance(value, (Image, Audio)):
        return [value.to_content()]
    if isinstance(value, str):
        return [TextContent(text=value)]
    if isinstance(value, (list, tuple)):
        blocks: list[ContentBlock] = []
        for item in value:
            blocks.extend(to_content(item))
        return blocks
    return [TextContent(text=_json_text(value))]


def _structured(value: Any) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return pydantic.TypeAdapter(type(value)).dump_python(value, mode="json")
    return pydantic_core.to_jsonable_python(value)


def to_call_tool_result(
    value: Any, *, output_schema: dict[str, Any] | None, wraps_result: bool
) -> CallToolResult:
    """The ``tools/call`` result for a tool function's return value."""
    if isinstance(value, CallToolResult):
        return value
    content = to_content(value)
    if output_schema is None:
        return CallToolResult(content=content)
    structured = _structured(value)
    if wraps_result:
        structured = {"result": structured}
    return CallToolResult(content=content, structured_content=structured)


_WIRE_SCALARS = (int, float, bool, dict)


def to_call_tool_wire(
    value: Any, *, output_schema: dict[str, Any] | None, wraps_result: bool
) -> dict[str, Any] | None:
    """The wire form of `to_call_tool_result` for a plain value (a ``str``, ``int``,
    ``float``, ``bool`` or ``dict``), written directly; None for anything else.

    Encoded, it is byte for byte what the model would be (same members, same order),
    without building and validating a `TextContent` and a `CallToolResult` per call.
    """
    kind = type(value)
    if kind is str:
        text = value
    elif kind in _WIRE_SCALARS:
        text = _json_text(value)
    else:
        return None
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if output_schema is not None:
        if not wraps_result:
            return None
        result["structuredContent"] = {"result": pydantic_core.to_jsonable_python(value)}
    return result


def to_resource_contents(
    uri: str, value: Any, mime_type: str | None
) -> list[TextResourceContents | BlobResourceContents]:
    """Resource contents for a resource function's return value."""
    if isinstance(value, (TextResourceContents, BlobResourceContents)):
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        contents: list[TextResourceContents | BlobResourceContents] = []
        for item in value:
            contents.extend(to_resource_contents(uri, item, mime_type))
        return contents
    if isinstance(value, (bytes, bytearray)):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [
            BlobResourceContents(
                uri=uri, blob=blob, mime_type=mime_type or "application/octet-stream"
            )
        ]
    if isinstance(value, str):
        return [TextResourceContents(uri=uri, text=value, mime_type=mime_type or "text/plain")]
    return [
        TextResourceContents(
            uri=uri, text=_json_text(value), mime_type=mime_type or "application/json"
        )
    ]


def to_prompt_result(value: Any, description: str | None) -> GetPromptResult:
    """The ``prompts/get`` result for a prompt function's return value."""
    if isinstance(value, GetPromptResult):
        return value
    items = value if isinstance(value, (list, tuple)) else [value]
    messages: list[PromptMessage] = []
    for item in items:
        if isinstance(item, PromptMessage):
            messages.append(item)
        elif isinstance(item, dict):
            messages.append(PromptMessage.model_validate(item))
        else:
            for block in to_content(item):
                messages.append(PromptMessage(role="user", content=block))
    return GetPromptResult(description=description, messages=messages)
