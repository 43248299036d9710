"""Turning a plain Python function into an MCP tool or prompt.

Rules:

1. The input schema comes from the signature, through one pydantic model per function:
   parameter names, type hints, defaults, and descriptions from the docstring (Google or
   Sphinx style). A parameter annotated with `Context` is injected, never part of the
   schema. The model is built at the function's first call; when every parameter has a
   plain type (``str``, ``int``, ``float``, ``bool``, lists and ``dict[str, ...]`` of
   those), the schema pydantic would generate from it is written out directly, so that
   declaring a tool builds nothing.
2. Arguments are validated once per call: against that model, or, when the user gave a
   raw JSON Schema, with jsonschema (compiled once) and passed through as they are.
3. A typed return (a model, a TypedDict, a dataclass, or a primitive wrapped as
   ``{"result": ...}``) yields an output schema and ``structuredContent``. A return
   type that is or contains one of ``unstructured_types`` (MCP content blocks,
   ``Image``, ``CallToolResult``) is content, not data: it never yields a schema.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import typing
from collections.abc import Callable
from typing import Any, get_type_hints

import pydantic
from pydantic import BaseModel, ConfigDict, create_model

__all__ = ["FunctionSignature", "docstring_summary", "parse_docstring_params"]

_GOOGLE_ARGS = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^\s*[A-Z][A-Za-z ]+:\s*$")
_GOOGLE_PARAM = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")
_SPHINX_PARAM = re.compile(r"^\s*:param\s+(?:[\w\[\], ]+\s+)?(\w+)\s*:\s*(.*)$")


def docstring_summary(doc: str | None) -> str | None:
    """The docstring's description: everything before its first section."""
    if not doc:
        return None
    lines: list[str] = []
    for line in inspect.cleandoc(doc).splitlines():
        if _GOOGLE_ARGS.match(line) or _SECTION.match(line) or line.strip().startswith(":"):
            break
        lines.append(line)
    text = "\n".join(lines).strip()
    return text or None


def parse_docstring_params(doc: str | None) -> dict[str, str]:
    """Parameter descriptions from a Google-style ``Args:`` section or Sphinx ``:param:``."""
    if not doc:
        return {}
    result: dict[str, str] = {}
    in_args = False
    current: str | None = None
    for line in inspect.cleandoc(doc).splitlines():
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            result[sphinx.group(1)] = sphinx.group(2).strip()
            current = None
            continue
        if _GOOGLE_ARGS.match(line):
            in_args, current = True, None
            continue
        if in_args and _SECTION.match(line):
            in_args, current = False, None
            continue
        if not in_args:
            continue
        google = _GOOGLE_PARAM.match(line)
        indent = len(line) - len(line.lstrip())
        if google and indent <= 4:
            current = google.group(1).lstrip("*")
            result[current] = google.group(3).strip()
        elif current is not None and line.strip():
            result[current] = (result[current] + " " + line.strip()).strip()
    return result


class _ArgumentsBase(BaseModel):
    # Deferred: a tool's validator is built at its first call, not when it is declared.
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="ignore", defer_build=True)


def _is_structured_type(annotation: Any) -> bool:
    if inspect.isclass(annotation):
        if issubclass(annotation, BaseModel) or dataclasses.is_dataclass(annotation):
            return True
        if typing.is_typeddict(annotation):
            return True
    return False


class FunctionSignature:
    """What a function takes and gives, as MCP needs it (built once per function)."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        context_type: type | Callable[[], type | None] | None,
        input_schema: dict[str, Any] | None = None,
        structured_output: bool | None = None,
        output_schema: dict[str, Any] | None = None,
        unstructured_types: tuple[type, ...] = (),
    ) -> None:
        self.func = func
        self.unstructured_types = unstructured_types
        self.is_async = inspect.iscoroutinefunction(func)
        signature = inspect.signature(func)
        try:
            hints = get_type_hints(func, include_extras=True)
        except (NameError, TypeError):
            hints = {}
        if context_type is not None and not isinstance(context_type, type):
            context_type = context_type()  # asked after the hints: resolving them may load it
        docs = parse_docstring_params(func.__doc__)
        self.context_param: str | None = None
        self.param_names: list[str] = []
        fields: dict[str, Any] = {}
        for name, param in signature.parameters.items():
            annotation = hints.get(name, param.annotation)
            if annotation is inspect.Parameter.empty:
                annotation = Any
            if (
                context_type is not None
                and inspect.isclass(annotation)
                and issubclass(annotation, context_type)
            ):
                self.context_param = name
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[name] = (annotation, default, docs.get(name))
            self.param_names.append(name)
        self._model_name = f"{getattr(func, '__name__', 'function')}Arguments"
        self._fields = fields
        self._arguments_model: type[BaseModel] | None = None
        self.raw_input_schema = input_schema
        self._validator: Any = None
        if input_schema is not None:
            self.input_schema = input_schema
        else:
            schema = _plain_arguments_schema(fields)
            if schema is None:
                schema = self.arguments_model.model_json_schema()
                schema.pop("title", None)
                schema.setdefault("properties", {})
                schema["type"] = "object"
            self.input_schema = schema
        self.output_schema, self.wraps_result = self._output(
            hints.get("return", signature.return_annotation), structured_output, output_schema
        )

    @property
    def arguments_model(self) -> type[BaseModel]:
        """The pydantic model the arguments are validated against (built on first use)."""
        model = self._arguments_model
        if model is None:
            fields: dict[str, Any] = {
                name: (annotation, pydantic.Field(default, description=description))
                for name, (annotation, default, description) in self._fields.items()
            }
            model = create_model(self._model_name, __base__=_ArgumentsBase, **fields)
            self._arguments_model = model
        return model

    def _output(
        self, annotation: Any, structured: bool | None, given: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, bool]:
        if given is not None:
            return given, False
        if structured is False or annotation in (inspect.Signature.empty, None, type(None)):
            return None, False
        if self.unstructured_types and _mentions(annotation, self.unstructured_types):
            return None, False
        if _is_structured_type(annotation):
            schema = pydantic.TypeAdapter(annotation).json_schema()
            return schema, False
        if structured is None and not _is_wrappable(annotation):
            return None, False
        plain = _plain_schema(annotation)
        if plain is not None:
            return {"type": "object", "properties": {"result": plain}, "required": ["result"]}, True
        try:
            inner = pydantic.TypeAdapter(annotation).json_schema()
        except pydantic.PydanticUserError:
            return None, False
        schema = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
        return schema, True

    def validate(self, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """Validated keyword arguments; raises `ArgumentsError` naming each bad field."""
        arguments = arguments or {}
        if self.raw_input_schema is not None:
            if self._validator is None:
                import jsonschema

                cls = jsonschema.validators.validator_for(self.raw_input_schema)
                self._validator = cls(self.raw_input_schema)
            errors = sorted(self._validator.iter_errors(arguments), key=lambda e: list(e.path))
            if errors:
                raise ArgumentsError(
                    "; ".join(
                        f"{'.'.join(str(p) for p in e.path) or '(arguments)'}: {e.message}"
                        for e in errors[:8]
                    )
                )
            return dict(arguments)
        try:
            model = self.arguments_model.model_validate(arguments)
        except pydantic.ValidationError as exc:
            raise ArgumentsError(
                "; ".join(
                    f"{'.'.join(str(p) for p in err['loc']) or '(arguments)'}: {err['msg']}"
                    for err in exc.errors(include_url=False)[:8]
                )
            ) from None
        return {name: getattr(model, name) for name in self.param_names}


class ArgumentsError(ValueError):
    """The arguments do not fit the function's input schema."""


def _mentions(annotation: Any, types: tuple[type, ...]) -> bool:
    """Whether ``annotation`` is one of ``types`` or has one among its type arguments."""
    if inspect.isclass(annotation) and typing.get_origin(annotation) is None:
        try:
            if issubclass(annotation, types):
                return True
        except TypeError:  # not a real class after all (a generic alias on Python 3.10)
            pass
    return any(_mentions(arg, types) for arg in typing.get_args(annotation))


_PLAIN_TYPES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _plain_schema(annotation: Any) -> dict[str, Any] | None:
    """The JSON Schema pydantic generates for ``annotation``, written out directly for
    ``str``, ``int``, ``float``, ``bool`` and ``list``/``dict[str, ...]`` of those; None
    for anything else (pydantic builds those). Saves a schema build per tool at start-up.
    """
    try:
        json_type = _PLAIN_TYPES.get(annotation)
    except TypeError:  # an unhashable annotation is never a plain type
        return None
    if json_type is not None:
        return {"type": json_type}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is list and len(args) == 1:
        items = _plain_schema(args[0])
        return None if items is None else {"items": items, "type": "array"}
    if origin is dict and len(args) == 2 and args[0] is str:
        values = _plain_schema(args[1])
        return None if values is None else {"additionalProperties": values, "type": "object"}
    return None


def _plain_arguments_schema(
    fields: dict[str, tuple[Any, Any, str | None]],
) -> dict[str, Any] | None:
    """The input schema pydantic would generate for an arguments model whose fields all
    have `_plain_schema` types and scalar defaults (same members, same key order); None
    when any field needs pydantic (which then also reports unusable names or types)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, (annotation, default, description) in fields.items():
        schema = _plain_schema(annotation)
        if schema is None or name.startswith(("_", "model_")) or hasattr(BaseModel, name):
            return None
        member: dict[str, Any] = dict(schema)
        if default is ...:
            required.append(name)
        elif type(default) in (str, int, bool) or (
            type(default) is float and math.isfinite(default)
        ):
            member["default"] = default
        else:
            return None
        if description is not None:
            member["description"] = description
        member["title"] = name.title().replace("_", " ").strip()
        properties[name] = {key: member[key] for key in sorted(member)}
    result: dict[str, Any] = {"properties": properties}
    if required:
        result["required"] = required
    result["type"] = "object"
    return result


def _is_wrappable(annotation: Any) -> bool:
    origin = typing.get_origin(annotation) or annotation
    return origin in (int, float, str, bool, list, dict, tuple, set)
