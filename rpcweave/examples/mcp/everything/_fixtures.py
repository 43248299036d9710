"""The payloads and schemas the conformance suite checks, and helpers the tools share."""

from __future__ import annotations

import json
from typing import Any

from mcp_layer.types import TextContent

__all__ = [
    "CITIES",
    "JSON_SCHEMA_2020_12_INPUT_SCHEMA",
    "NAME_SCHEMA",
    "SEP1034_DEFAULTS_SCHEMA",
    "SEP1330_ENUMS_SCHEMA",
    "TEST_AUDIO_BASE64",
    "TEST_IMAGE_BASE64",
    "X_MCP_HEADER_SCHEMA",
    "elicitation_summary",
    "sampled_text",
    "text_of",
]

TEST_IMAGE_BASE64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAF"
    "BQIAX8jx0gAAAABJRU5ErkJggg=="
)
"""A 1x1 red PNG pixel."""

TEST_AUDIO_BASE64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""A minimal WAV file."""

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
"""An elicitation form whose every field has a default (SEP-1034)."""

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
"""An elicitation form with each style of enum: titled, untitled, legacy, multi-select
(SEP-1330)."""

CITIES = ["paris", "park", "party", "lisbon", "london", "los angeles", "tokyo", "toronto"]
"""What the completion of the prompt arguments suggests."""

NAME_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}
"""The form most input requests ask with: one required ``name``."""

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
"""An input schema with an ``x-mcp-header`` property (2026-07-28)."""


def elicitation_summary(prefix: str, action: str, content: Any) -> str:
    """``<prefix>: action=<action>, content=<compact JSON>``, the text the suite expects."""
    return f"{prefix}: action={action}, content={json.dumps(content or {}, separators=(',', ':'))}"


def text_of(answer: Any, field: str, default: str) -> str:
    """Field ``field`` of an elicitation answer's content, as text (``default`` if absent)."""
    content = getattr(answer, "content", None) or {}
    value = content.get(field) if isinstance(content, dict) else None
    return str(value) if value is not None else default


def sampled_text(result: Any) -> str:
    """The text of a sampling result (``(no text)`` for other content)."""
    content = result.content
    return content.text if isinstance(content, TextContent) else "(no text)"
