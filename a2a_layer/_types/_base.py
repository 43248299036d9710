"""The base model and the ProtoJSON scalar types every A2A 1.0 model is built from.

Rules every model in `a2a_layer._types` keeps (a maintainer adding a field must too):

1. Wire names are the proto's JSON names: the lowerCamelCase of the proto field name,
   produced by the alias generator; Python attributes keep the proto's snake_case.
2. A field the proto marks ``(google.api.field_behavior) = REQUIRED`` has no default.
   Repeated fields a ProtoJSON writer may omit when empty (absent == empty) are the
   exception: they default to ``[]`` and are always written.
3. Every other message, string, enum and ``optional`` scalar defaults to ``None``, and
   ``None`` never reaches the wire (rpcweave dumps with ``exclude_none=True``).
4. A proto3 ``bool`` without ``optional`` defaults to ``False`` (ProtoJSON: absent ==
   false) and is written as ``false``.
5. ``int32`` fields accept JSON numbers and decimal strings (ProtoJSON reads both) and
   are written as numbers; there are no ``int64`` fields in A2A 1.0.
6. ``bytes`` are base64 in JSON (standard or URL-safe alphabet, padding optional on
   input; standard with padding on output).
7. Timestamps are RFC 3339; input with an offset is normalised to UTC; output is
   ``...Z`` with milliseconds (microseconds when the value has them).
8. Unknown fields are ignored (spec 5.7); unknown enum *values* are rejected, since a
   filter such as ``status=TASK_STATE_RUNNING`` must fail (spec 6.5).
9. A ``oneof`` is told by which member is present; exactly one must be set.
"""

from __future__ import annotations

import base64
import binascii
import enum
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
)
from pydantic.alias_generators import to_camel

__all__ = [
    "MAX_NESTING",
    "A2AModel",
    "Base64Bytes",
    "HistoryLength",
    "Int32",
    "JsonValue",
    "LenientEnum",
    "Struct",
    "Timestamp",
    "format_timestamp",
    "replaced",
    "trusted",
]

MAX_NESTING = 200
"""The deepest nesting of objects and arrays a JSON value in a model may have.

The JSON-RPC and HTTP+JSON parsers stop at 200 levels for a whole request, so nothing
that arrives on the wire comes near it; a value built in Python (or read by a lenient
parser) that goes deeper is refused as a validation error rather than failing later,
when it is copied, stored or serialised (pydantic's serialiser stops at 255 levels).
"""


def _check_nesting(value: Any) -> Any:
    """``value`` unchanged; a `ValueError` if it nests deeper than `MAX_NESTING`."""
    if not isinstance(value, (dict, list)):
        return value
    # Iterative on purpose: a recursive walk would hit the interpreter's recursion limit.
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending:
        current, depth = pending.pop()
        if depth > MAX_NESTING:
            raise ValueError(f"JSON value nested deeper than {MAX_NESTING} levels")
        children = current.values() if isinstance(current, dict) else current
        for child in children:
            if isinstance(child, (dict, list)):
                pending.append((child, depth + 1))
    return value


Struct = Annotated[dict[str, Any], AfterValidator(_check_nesting)]
"""A ``google.protobuf.Struct``: a JSON object (nested at most `MAX_NESTING` levels)."""

JsonValue = Annotated[Any, AfterValidator(_check_nesting)]
"""A ``google.protobuf.Value``: any JSON value (nested at most `MAX_NESTING` levels)."""


class A2AModel(BaseModel):
    """Base of every A2A 1.0 object: camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="ignore",
        # Build validators on first use, not at import: keeps ``import a2a_layer`` cheap.
        defer_build=True,
    )

    def _one_of(self, names: Iterable[str], what: str) -> str:
        """Check that exactly one ``oneof`` member is set; return its name."""
        names = tuple(names)
        present = [n for n in names if getattr(self, n) is not None]
        if len(present) != 1:
            wire = ", ".join(to_camel(n) for n in names)
            found = "none" if not present else ", ".join(to_camel(n) for n in present)
            raise ValueError(f"{what} must have exactly one of {wire} (found {found})")
        return present[0]


_M = TypeVar("_M", bound=BaseModel)
_object_setattr = object.__setattr__
_TEMPLATES: dict[type[BaseModel], tuple[dict[str, Any], tuple[tuple[str, Any], ...]]] = {}


def _template(cls: type[BaseModel]) -> tuple[dict[str, Any], tuple[tuple[str, Any], ...]]:
    """Every field of ``cls`` with its default, in order, and the fields whose default
    comes from a factory (made afresh for each instance)."""
    found = _TEMPLATES.get(cls)
    if found is None:
        fields = cls.model_fields
        template = {name: info.default for name, info in fields.items()}
        factories = tuple(
            (name, info.default_factory)
            for name, info in fields.items()
            if info.default_factory is not None
        )
        found = _TEMPLATES[cls] = (template, factories)
    return found


def trusted(cls: type[_M], /, **values: Any) -> _M:
    """An instance of ``cls`` from values that already have their fields' types.

    What ``cls(**values)`` makes for valid input (same attributes, same
    ``model_fields_set``, same serialisation), without validation: only for values
    the server built itself from validated models and plain ``str``/``bool``/enum
    members, never for input from the wire or the agent's own objects unchecked.
    Validators of ``cls`` do not run, so the caller keeps their rules (a ``oneof``
    has exactly one member). ``values`` name fields of ``cls`` only.
    """
    template, factories = _TEMPLATES.get(cls) or _template(cls)
    fields = template.copy()  # the declared order, which serialisation follows
    if factories:
        for name, factory in factories:
            if name not in values:
                fields[name] = factory()
    fields.update(values)
    obj = cls.__new__(cls)
    _object_setattr(obj, "__dict__", fields)
    _object_setattr(obj, "__pydantic_fields_set__", set(values))
    _object_setattr(obj, "__pydantic_extra__", None)
    _object_setattr(obj, "__pydantic_private__", None)
    return obj


def replaced(model: _M, /, **update: Any) -> _M:
    """``model.model_copy(update=update)`` (a shallow copy), for trusted values only."""
    cls = type(model)
    fields = model.__dict__.copy()
    fields.update(update)
    obj = cls.__new__(cls)
    _object_setattr(obj, "__dict__", fields)
    _object_setattr(obj, "__pydantic_fields_set__", model.__pydantic_fields_set__ | update.keys())
    extra = model.__pydantic_extra__
    _object_setattr(obj, "__pydantic_extra__", None if extra is None else dict(extra))
    private = model.__pydantic_private__
    _object_setattr(obj, "__pydantic_private__", None if private is None else dict(private))
    return obj


# -- int32 ---------------------------------------------------------------------------------

_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1

Int32 = Annotated[int, Field(ge=_INT32_MIN, le=_INT32_MAX)]
"""A proto ``int32``: JSON number or decimal string in, number out."""

HistoryLength = Annotated[int, Field(ge=0, le=_INT32_MAX)]
"""``history_length``: 0 means no history, unset means no limit (spec 3.2.4)."""


# -- bytes ---------------------------------------------------------------------------------


def _decode_base64(value: Any) -> Any:
    if not isinstance(value, str):
        return value  # bytes pass through; anything else fails the bytes validator
    text = value.strip().replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("invalid base64 data") from None


def _encode_base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


Base64Bytes = Annotated[
    bytes,
    BeforeValidator(_decode_base64),
    PlainSerializer(_encode_base64, return_type=str, when_used="json"),
]
"""A proto ``bytes`` field: a base64 string on the wire, `bytes` in Python.

A `str` given in Python is taken as the wire form and decoded; pass `bytes` for raw data.
"""


# -- google.protobuf.Timestamp -------------------------------------------------------------


def _to_utc(value: datetime) -> datetime:
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def format_timestamp(value: datetime) -> str:
    """RFC 3339 in UTC with a ``Z``: milliseconds, or microseconds when present."""
    if value.tzinfo is not timezone.utc:
        value = _to_utc(value)
    if value.year >= 1000:  # four digits: isoformat writes what strftime would
        if value.microsecond % 1000 == 0:
            return value.isoformat(timespec="milliseconds")[:23] + "Z"
        return value.isoformat(timespec="microseconds")[:26] + "Z"
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    micros = value.microsecond
    frac = f"{micros // 1000:03d}" if micros % 1000 == 0 else f"{micros:06d}"
    return f"{text}.{frac}Z"


Timestamp = Annotated[
    datetime,
    AfterValidator(_to_utc),
    PlainSerializer(format_timestamp, return_type=str, when_used="json"),
]
"""A ``google.protobuf.Timestamp``: an aware UTC `datetime` in Python."""


# -- enums ---------------------------------------------------------------------------------


class LenientEnum(str, enum.Enum):
    """A proto enum whose values are the proto names (what ProtoJSON writes).

    Reading is lenient: the proto name in any case, the name without the enum's
    prefix (``WORKING``), the 0.3 lowercase/kebab spelling (``input-required``), an
    alias from ``_aliases()``, or the proto number are all accepted.
    """

    @classmethod
    def _prefix(cls) -> str:
        return ""

    @classmethod
    def _aliases(cls) -> dict[str, str]:
        return {}

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            members = list(cls)
            return members[value] if 0 <= value < len(members) else None
        if not isinstance(value, str):
            return None
        key = value.strip().upper().replace("-", "_").replace(" ", "_")
        alias = cls._aliases().get(value.strip().lower())
        for candidate in (key, cls._prefix() + key, alias):
            if candidate is None:
                continue
            for member in cls:
                if member.value == candidate:
                    return member
        return None
