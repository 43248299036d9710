"""Elicitation: the server asks the user, through the client, for input.

Form mode (2025-06-18) sends a flat schema of primitive fields and gets the values back;
URL mode (2025-11-25) sends the user to a URL out of band. A request without ``mode``
is form mode. The eight primitive schema shapes have no single tag member, so
`PrimitiveSchemaDefinition` tells them apart by ``type`` and by which of
``enum``/``enumNames``/``oneOf``/``items.anyOf`` is present; any other ``type`` is
rejected, since a client cannot render a field it does not understand.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, Discriminator, Field, Tag

from ._base import MCPModel, NotificationParams, Result
from ._task_params import TaskAugmentedRequestParams

__all__ = [
    "BooleanSchema",
    "ElicitAction",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitRequestedSchema",
    "ElicitResult",
    "ElicitValue",
    "ElicitationCompleteNotificationParams",
    "EnumOption",
    "LegacyTitledEnumSchema",
    "NumberSchema",
    "PrimitiveSchemaDefinition",
    "StringSchema",
    "TitledMultiSelectEnumSchema",
    "TitledMultiSelectItems",
    "TitledSingleSelectEnumSchema",
    "URLElicitationRequiredErrorData",
    "UntitledMultiSelectEnumSchema",
    "UntitledMultiSelectItems",
    "UntitledSingleSelectEnumSchema",
]


class _FieldSchema(MCPModel):
    """Members every form field schema may have."""

    title: str | None = None
    description: str | None = None


class StringSchema(_FieldSchema):
    """A free-text form field."""

    type: Literal["string"] = "string"
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None
    """A regular expression (shown in the specification's examples, absent in schema.json)."""
    format: Literal["email", "uri", "date", "date-time"] | None = None
    default: str | None = None


class NumberSchema(_FieldSchema):
    """A numeric form field (``number`` or ``integer``)."""

    type: Literal["number", "integer"]
    minimum: int | float | None = None
    maximum: int | float | None = None
    default: int | float | None = None


class BooleanSchema(_FieldSchema):
    """A yes/no form field."""

    type: Literal["boolean"] = "boolean"
    default: bool | None = None


class EnumOption(MCPModel):
    """One option of a titled enum: its value and display label."""

    const: str
    title: str


class UntitledSingleSelectEnumSchema(_FieldSchema):
    """Single selection from values shown as they are."""

    type: Literal["string"] = "string"
    enum: list[str]
    default: str | None = None


class TitledSingleSelectEnumSchema(_FieldSchema):
    """Single selection from options with display titles."""

    type: Literal["string"] = "string"
    one_of: list[EnumOption]
    default: str | None = None


class UntitledMultiSelectItems(MCPModel):
    """The item schema of an untitled multi-select enum."""

    type: Literal["string"] = "string"
    enum: list[str]


class UntitledMultiSelectEnumSchema(_FieldSchema):
    """Multiple selection from values shown as they are."""

    type: Literal["array"] = "array"
    items: UntitledMultiSelectItems
    min_items: int | None = None
    max_items: int | None = None
    default: list[str] | None = None


class TitledMultiSelectItems(MCPModel):
    """The item schema of a titled multi-select enum."""

    any_of: list[EnumOption]


class TitledMultiSelectEnumSchema(_FieldSchema):
    """Multiple selection from options with display titles."""

    type: Literal["array"] = "array"
    items: TitledMultiSelectItems
    min_items: int | None = None
    max_items: int | None = None
    default: list[str] | None = None


class LegacyTitledEnumSchema(_FieldSchema):
    """The 2025-06-18 enum with parallel ``enumNames``; use `TitledSingleSelectEnumSchema`."""

    type: Literal["string"] = "string"
    enum: list[str]
    enum_names: list[str] | None = None
    default: str | None = None


_SCHEMA_TAGS: dict[type[BaseModel], str] = {
    StringSchema: "string",
    NumberSchema: "number",
    BooleanSchema: "boolean",
    UntitledSingleSelectEnumSchema: "enum",
    TitledSingleSelectEnumSchema: "titled_enum",
    UntitledMultiSelectEnumSchema: "multi_enum",
    TitledMultiSelectEnumSchema: "titled_multi_enum",
    LegacyTitledEnumSchema: "legacy_enum",
}


def _has(value: dict[str, Any], wire: str, name: str) -> bool:
    return wire in value or name in value


def _schema_tag(value: Any) -> str | None:
    if not isinstance(value, dict):
        return _SCHEMA_TAGS.get(type(value))
    kind = value.get("type")
    if kind == "string":
        if _has(value, "oneOf", "one_of"):
            return "titled_enum"
        if "enum" in value:
            return "legacy_enum" if _has(value, "enumNames", "enum_names") else "enum"
        return "string"
    if kind in ("number", "integer"):
        return "number"
    if kind == "boolean":
        return "boolean"
    if kind == "array":
        items = value.get("items")
        titled = isinstance(items, dict) and _has(items, "anyOf", "any_of")
        return "titled_multi_enum" if titled else "multi_enum"
    return None


PrimitiveSchemaDefinition: TypeAlias = Annotated[
    Annotated[StringSchema, Tag("string")]
    | Annotated[NumberSchema, Tag("number")]
    | Annotated[BooleanSchema, Tag("boolean")]
    | Annotated[UntitledSingleSelectEnumSchema, Tag("enum")]
    | Annotated[TitledSingleSelectEnumSchema, Tag("titled_enum")]
    | Annotated[UntitledMultiSelectEnumSchema, Tag("multi_enum")]
    | Annotated[TitledMultiSelectEnumSchema, Tag("titled_multi_enum")]
    | Annotated[LegacyTitledEnumSchema, Tag("legacy_enum")],
    Discriminator(
        _schema_tag,
        custom_error_type="elicitation_schema",
        custom_error_message=(
            "a form field's type must be string, number, integer, boolean or array (of enum)"
        ),
    ),
]
"""A form field: string, number, boolean, or a single- or multi-select enum."""


class ElicitRequestedSchema(MCPModel):
    """The restricted JSON Schema of a form: a flat object of primitive fields."""

    schema_: str | None = Field(default=None, alias="$schema")
    type: Literal["object"] = "object"
    properties: dict[str, PrimitiveSchemaDefinition]
    required: list[str] | None = None


class ElicitRequestFormParams(TaskAugmentedRequestParams):
    """Parameters to elicit non-sensitive information through a form in the client."""

    mode: Literal["form"] = "form"
    """Optional on the wire (absent means form); always written by this model."""
    message: str
    requested_schema: ElicitRequestedSchema


class ElicitRequestURLParams(TaskAugmentedRequestParams):
    """Parameters to elicit information out of band, at a URL the user opens."""

    mode: Literal["url"] = "url"
    message: str
    elicitation_id: str
    """Unique within the server; echoed by ``notifications/elicitation/complete``."""
    url: str


def _mode_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        mode = value.get("mode", "form")
        return mode if mode in ("form", "url") else None
    return (
        value.mode if isinstance(value, (ElicitRequestFormParams, ElicitRequestURLParams)) else None
    )


ElicitRequestParams: TypeAlias = Annotated[
    Annotated[ElicitRequestFormParams, Tag("form")] | Annotated[ElicitRequestURLParams, Tag("url")],
    Discriminator(
        _mode_tag,
        custom_error_type="elicitation_mode",
        custom_error_message="'mode' must be 'form' (or absent) or 'url'",
    ),
]
"""Parameters for an ``elicitation/create`` request, form or URL mode."""

ElicitAction: TypeAlias = Literal["accept", "decline", "cancel"]
"""The user's answer: submitted (``accept``), refused (``decline``) or dismissed (``cancel``)."""

ElicitValue: TypeAlias = str | int | float | bool | list[str]
"""A submitted form value.

schema.json allows only integers, but schema.ts (and `NumberSchema` ``"number"``) allow
any number, as did 2025-06-18: floats are accepted and kept.
"""


class ElicitResult(Result):
    """The client's response to an elicitation request."""

    action: ElicitAction
    content: dict[str, ElicitValue] | None = None
    """The submitted values; only with ``accept`` in form mode."""


class ElicitationCompleteNotificationParams(NotificationParams):
    """Parameters for ``notifications/elicitation/complete`` (URL mode finished)."""

    elicitation_id: str


class URLElicitationRequiredErrorData(MCPModel):
    """The ``data`` of a -32042 error: URL elicitations to complete before retrying."""

    elicitations: list[ElicitRequestURLParams]
