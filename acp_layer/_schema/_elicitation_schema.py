"""The restricted JSON Schema of a form elicitation (``requestedSchema``).

A form is a flat object whose properties are primitives, single-select enums (``enum`` or
titled ``oneOf``) or multi-select arrays. Property schemas and multi-select item kinds are
open unions, as in the schema: an unknown ``type`` parses as an ``Unknown*`` model that keeps
the raw schema, which a client must not render as a known control.
"""

from typing import TYPE_CHECKING, Literal, TypeAlias

from pydantic import Field

from ._base import ACPModel, Int64, UInt32, UInt64
from ._lenient import ItemsOrDefault, OrDefault, tagged_union

__all__ = [
    "BooleanPropertySchema",
    "ElicitationPropertySchema",
    "ElicitationSchema",
    "ElicitationSchemaType",
    "EnumOption",
    "IntegerPropertySchema",
    "MultiSelectItems",
    "MultiSelectPropertySchema",
    "NumberPropertySchema",
    "StringFormat",
    "StringMultiSelectItems",
    "StringPropertySchema",
    "TitledMultiSelectItems",
    "UnknownMultiSelectItems",
    "UnknownPropertySchema",
]

StringFormat = Literal["email", "uri", "date", "date-time"]
"""String format types for string properties in elicitation schemas."""

ElicitationSchemaType = Literal["object"]
"""Type discriminator for elicitation schemas: always ``"object"``."""


class EnumOption(ACPModel):
    """A titled enum option with a const value, human-readable title, and optional description."""

    const: str
    title: str
    description: OrDefault[str | None] = None


class StringPropertySchema(ACPModel):
    """Schema for string properties (a single-select enum when ``enum`` or ``one_of`` is set)."""

    type: Literal["string"] = "string"
    title: OrDefault[str | None] = None
    description: OrDefault[str | None] = None
    min_length: UInt32 | None = None
    max_length: UInt32 | None = None
    pattern: str | None = None
    format: StringFormat | None = None
    default: OrDefault[str | None] = None
    enum: list[str] | None = None
    """Values of an untitled single-select enum."""
    one_of: list[EnumOption] | None = None
    """Options of a titled single-select enum."""


class NumberPropertySchema(ACPModel):
    """Schema for number (floating-point) properties in an elicitation form."""

    type: Literal["number"] = "number"
    title: OrDefault[str | None] = None
    description: OrDefault[str | None] = None
    minimum: float | None = None
    maximum: float | None = None
    default: OrDefault[float | None] = None


class IntegerPropertySchema(ACPModel):
    """Schema for integer properties in an elicitation form."""

    type: Literal["integer"] = "integer"
    title: OrDefault[str | None] = None
    description: OrDefault[str | None] = None
    minimum: Int64 | None = None
    maximum: Int64 | None = None
    default: OrDefault[Int64 | None] = None


class BooleanPropertySchema(ACPModel):
    """Schema for boolean properties in an elicitation form."""

    type: Literal["boolean"] = "boolean"
    title: OrDefault[str | None] = None
    description: OrDefault[str | None] = None
    default: OrDefault[bool | None] = None


class StringMultiSelectItems(ACPModel):
    """String item schema for multi-select enum properties."""

    type: Literal["string"] = "string"
    enum: list[str]


class TitledMultiSelectItems(ACPModel):
    """Items definition for titled multi-select enum properties (no ``type`` on the wire)."""

    any_of: list[EnumOption]


class UnknownMultiSelectItems(ACPModel):
    """Custom or future typed multi-select items; the raw data is kept."""

    type: str


if TYPE_CHECKING:
    MultiSelectItems: TypeAlias = (
        StringMultiSelectItems | TitledMultiSelectItems | UnknownMultiSelectItems
    )
else:
    MultiSelectItems = tagged_union(
        "type",
        StringMultiSelectItems,
        untagged=TitledMultiSelectItems,
        unknown=UnknownMultiSelectItems,
    )
"""Items for a multi-select (array) property schema."""


class MultiSelectPropertySchema(ACPModel):
    """Schema for multi-select (array) properties in an elicitation form."""

    type: Literal["array"] = "array"
    items: MultiSelectItems
    title: OrDefault[str | None] = None
    description: OrDefault[str | None] = None
    min_items: UInt64 | None = None
    max_items: UInt64 | None = None
    default: ItemsOrDefault[str] | None = None


class UnknownPropertySchema(ACPModel):
    """Custom or future elicitation property schema; the raw schema is kept."""

    type: str


if TYPE_CHECKING:
    ElicitationPropertySchema: TypeAlias = (
        StringPropertySchema
        | NumberPropertySchema
        | IntegerPropertySchema
        | BooleanPropertySchema
        | MultiSelectPropertySchema
        | UnknownPropertySchema
    )
else:
    ElicitationPropertySchema = tagged_union(
        "type",
        StringPropertySchema,
        NumberPropertySchema,
        IntegerPropertySchema,
        BooleanPropertySchema,
        MultiSelectPropertySchema,
        unknown=UnknownPropertySchema,
    )
"""Property schema for elicitation form fields, told apart by ``type``."""


class ElicitationSchema(ACPModel):
    """Type-safe elicitation schema for requesting structured user input."""

    type: OrDefault[ElicitationSchemaType] = "object"
    title: OrDefault[str | None] = None
    description: OrDefault[str | None] = None
    properties: dict[str, ElicitationPropertySchema] = Field(default_factory=dict)
    required: list[str] | None = None
