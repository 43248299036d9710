"""Lenient in, strict out: how the schema's ``x-deserialize-*`` hints are honoured.

ACP's schema.json (protocolVersion 1) carries exactly two deserialisation hints, always on an
object property (249 and 27 occurrences in the stable schema):

``x-deserialize-default-on-error``
    A value that fails validation is replaced by the property's default instead of failing
    the whole message. `DefaultOnError` does this by raising ``PydanticUseDefault``, so the
    field's own default applies (``None``, ``False``, ``[]``, ``{}`` or a default capabilities
    object, as the schema's ``default`` says). ``_meta`` carries the hint on every type, so
    `ACPModel` declares it once. A handful of *required* arrays also carry the hint
    (``Plan.entries``, ``NewSessionRequest.mcpServers``, ``ListSessionsResponse.sessions``, ...):
    there `EmptyOnError` turns a malformed value into ``[]``; a missing one is still an error.

``x-deserialize-skip-invalid-items``
    Array items that fail validation are dropped and the rest of the array survives (always
    paired with the first hint). `SkipInvalidItems` validates the array once; only when that
    fails does it drop the items the errors point at and validate the survivors again.

Aliases for the common shapes: ``OrDefault[T]`` (first hint), ``ItemsOrDefault[T]`` (both
hints, optional array), ``ItemsOrEmpty[T]`` (both hints, required array) and ``Clearable[T]``
(a patch field where ``null`` means "clear", see Rule 4).

Rules this package keeps beyond the hints (maintainers: keep them):

Rule 1. Unknown fields are kept: every model has ``extra="allow"`` and re-emits them as received.
Rule 2. A tagged union is *open* where the schema or the protocol's evolution says so: the
    schema's explicit ``other`` variants (elicitation modes, actions and property schemas,
    multi-select items), ``session/update``, auth methods and MCP servers (new kinds appear
    in schema.unstable.json first) parse an unknown tag into an ``Unknown*`` model that keeps
    the raw data. Closed unions (content blocks, tool call content, permission outcomes,
    config options, plan contents, NES suggestions) reject unknown tags, and the
    skip-invalid-items hint then drops such an item from its array.
Rule 3. Leniency applies to every validation, including models built in Python; typed
    constructors and mypy are what keep output strict, and the tests validate every model we
    emit against schema.json.
Rule 4. ``None`` never reaches the wire (rpcweave serialises with ``exclude_none=True``);
    where ``null`` means something ("set to null to clear": ``SessionInfoUpdate``, unstable
    ``CompactionUpdate``) the field is ``Clearable`` and the `CLEAR` sentinel serialises as
    ``null``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Final, TypeVar, Union

from pydantic import BaseModel, Discriminator, Tag, ValidationError, WrapValidator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticUseDefault, core_schema

__all__ = [
    "CLEAR",
    "ClearType",
    "Clearable",
    "DefaultOnError",
    "EmptyOnError",
    "ItemsOrDefault",
    "ItemsOrEmpty",
    "OrDefault",
    "SkipInvalidItems",
    "null_means_clear",
    "tagged_union",
]

T = TypeVar("T")


def _default_on_error(value: Any, handler: Callable[[Any], Any]) -> Any:
    try:
        return handler(value)
    except ValidationError:
        raise PydanticUseDefault() from None


def _empty_on_error(value: Any, handler: Callable[[Any], Any]) -> Any:
    try:
        return handler(value)
    except ValidationError:
        return []


def _skip_invalid_items(value: Any, handler: Callable[[Any], Any]) -> Any:
    try:
        return handler(value)
    except ValidationError as exc:
        if not isinstance(value, list):
            raise
        # Item errors are located by their index first; anything else concerns the array.
        bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
        if not bad or not all(isinstance(i, int) for i in bad):
            raise
        return handler([item for i, item in enumerate(value) if i not in bad])


DefaultOnError: Final = WrapValidator(_default_on_error)
"""``x-deserialize-default-on-error``: an invalid value falls back to the field's default."""

EmptyOnError: Final = WrapValidator(_empty_on_error)
"""``x-deserialize-default-on-error`` on a required array: an invalid value becomes ``[]``."""

SkipInvalidItems: Final = WrapValidator(_skip_invalid_items)
"""``x-deserialize-skip-invalid-items``: invalid array items are dropped."""

OrDefault = Annotated[T, DefaultOnError]
ItemsOrDefault = Annotated[list[T], SkipInvalidItems, DefaultOnError]
ItemsOrEmpty = Annotated[list[T], SkipInvalidItems, EmptyOnError]


class ClearType:
    """Type of `CLEAR`: an explicit ``null`` that means "clear this value"."""

    _instance: ClearType | None = None

    def __new__(cls) -> ClearType:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "CLEAR"

    def __bool__(self) -> bool:
        return False

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: Callable[[Any], core_schema.CoreSchema]
    ) -> core_schema.CoreSchema:
        return core_schema.is_instance_schema(
            cls,
            serialization=core_schema.plain_serializer_function_ser_schema(lambda _: None),
        )


CLEAR: Final = ClearType()
"""Sent as ``null`` where the schema gives ``null`` a meaning of its own ("set to null to clear");
an absent field stays ``None``."""


def null_means_clear(value: Any, handler: Callable[[Any], Any]) -> Any:
    """Wrap validator: a received ``null`` becomes `CLEAR` (absent stays ``None``)."""
    return CLEAR if value is None else handler(value)


Clearable = Annotated[T | ClearType | None, WrapValidator(null_means_clear)]
"""A patch field: absent is ``None`` (unchanged), ``null`` is `CLEAR`, else the new value.

``T`` must not contain `DefaultOnError`: ``PydanticUseDefault`` cannot escape a union member.
Put the hint outside: ``OrDefault[Clearable[T]]``."""


_MISSING: Any = object()


def tagged_union(
    attr: str,
    *variants: type[BaseModel],
    untagged: type[BaseModel] | None = None,
    unknown: type[BaseModel] | None = None,
    aliases: Mapping[str, type[BaseModel]] | None = None,
) -> Any:
    """A union of models told apart by the string field ``attr`` (its camelCase alias on the wire).

    Each variant declares ``attr`` with its tag as the default (``type: Literal["text"] =
    "text"``). ``untagged`` takes objects without the tag (e.g. stdio MCP servers);
    ``unknown`` takes objects with an unrecognised tag (``None`` makes them an error);
    ``aliases`` adds tags for a variant that does not declare the field itself.
    The discriminator is a callable, so unknown tags never reach pydantic's tag table.
    """
    wire = to_camel(attr)
    by_tag: dict[str, str] = {}
    members: dict[str, type[BaseModel]] = {}
    for cls in variants:
        tag = cls.model_fields[attr].default
        if not isinstance(tag, str):
            raise TypeError(f"{cls.__name__}.{attr} needs a string tag as its default")
        by_tag[tag] = cls.__name__
        members[cls.__name__] = cls
    for tag, cls in (aliases or {}).items():
        by_tag[tag] = cls.__name__
        members[cls.__name__] = cls
    for extra in (untagged, unknown):
        if extra is not None:
            members[extra.__name__] = extra
    by_class = {cls: name for name, cls in members.items()}
    untagged_name = untagged.__name__ if untagged is not None else None
    unknown_name = unknown.__name__ if unknown is not None else None

    def pick(value: Any) -> str | None:
        # Runs for every tagged value received (twice per streamed text chunk): the common
        # case, a dict with a known camelCase tag, is answered first.
        if isinstance(value, dict):
            tag = value.get(wire, _MISSING)
            if tag is _MISSING:
                tag = value.get(attr, _MISSING)
        else:
            name = by_class.get(type(value))
            if name is not None:
                return name
            tag = getattr(value, attr, _MISSING)
        if type(tag) is str:
            name = by_tag.get(tag)
            return name if name is not None else unknown_name
        if tag is _MISSING or tag is None:
            return untagged_name
        name = by_tag.get(tag) if isinstance(tag, str) else None
        return name if name is not None else unknown_name

    choices = tuple(Annotated[cls, Tag(name)] for name, cls in members.items())
    expected = ", ".join(repr(t) for t in by_tag)
    return Annotated[
        Union[choices],  # noqa: UP007 - built from a tuple at runtime
        Discriminator(
            pick,
            custom_error_type="acp_union_tag",
            custom_error_message=f"'{wire}' must be one of {expected}",
        ),
    ]
