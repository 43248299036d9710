"""The schemas `FunctionSignature` writes without pydantic are exactly pydantic's.

Tools whose parameters and return are plain types (``str``, ``int``, ``float``,
``bool``, lists and string-keyed dicts of those) get their input and output schemas
written out directly, and their pydantic argument model is built at the first call.
These tests hold that shortcut to what pydantic generates, key order included.

Tests the private unit `mcp_layer._functions` on purpose: the schemas it writes are
compared with pydantic's.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable
from typing import Annotated, Any, Optional

import pydantic
import pytest

from mcp_layer import Context
from mcp_layer._functions import (
    ArgumentsError,
    FunctionSignature,
    _plain_arguments_schema,
    _plain_schema,
)


def _pydantic_input_schema(signature: FunctionSignature) -> dict[str, Any]:
    schema = signature.arguments_model.model_json_schema()
    schema.pop("title", None)
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text: same members, same order."""
    return json.dumps(a) == json.dumps(b)


def plain_tool(query: str, limit: int = 10, ratio: float = 0.5, exact: bool = False) -> str:
    """Search.

    Args:
        query: What to look for.
        limit: The most matches.
        exact:
    """
    return query


def containers(
    items: list[str], counts: dict[str, int], nested: list[list[float]]
) -> dict[str, list[bool]]:
    """No docs for the arguments."""
    return {}


def snake_names(case_sensitive: bool, x1y: int = -3, long_name_here: str = 'q"uote') -> int:
    return 0


def no_params() -> float:
    return 1.0


def with_context(text: str, ctx: Context) -> list[int]:
    return []


PLAIN_FUNCS: list[Callable[..., Any]] = [
    plain_tool,
    containers,
    snake_names,
    no_params,
    with_context,
]


@pytest.mark.parametrize("func", PLAIN_FUNCS, ids=lambda f: f.__name__)
def test_plain_input_schema_is_pydantics(func: Callable[..., Any]) -> None:
    signature = FunctionSignature(func, context_type=Context)
    assert signature._arguments_model is None  # not built at declaration
    assert _same(signature.input_schema, _pydantic_input_schema(signature))


@pytest.mark.parametrize(
    "annotation",
    [str, int, float, bool, list[str], dict[str, int], list[dict[str, list[float]]]],
    ids=str,
)
def test_plain_output_schema_is_pydantics(annotation: Any) -> None:
    assert _same(_plain_schema(annotation), pydantic.TypeAdapter(annotation).json_schema())


@pytest.mark.parametrize("func", PLAIN_FUNCS, ids=lambda f: f.__name__)
def test_plain_output_schema_matches_pydantic_path(func: Callable[..., Any]) -> None:
    signature = FunctionSignature(func, context_type=Context)
    inner = pydantic.TypeAdapter(typing.get_type_hints(func)["return"]).json_schema()
    expected = {"type": "object", "properties": {"result": inner}, "required": ["result"]}
    assert signature.wraps_result
    assert _same(signature.output_schema, expected)


class Point(pydantic.BaseModel):
    x: int


def _fields(func: Callable[..., Any]) -> dict[str, Any]:
    return FunctionSignature(func, context_type=Context)._fields


@pytest.mark.parametrize(
    "annotation",
    [
        *(Any, Optional[int], int | None, list, dict, dict[int, str], Point, bytes),  # noqa: UP045
        *(tuple[int, int], Annotated[int, pydantic.Field(ge=0)], typing.Literal["a"], "str"),
    ],
    ids=str,
)
def test_other_types_go_through_pydantic(annotation: Any) -> None:
    assert _plain_schema(annotation) is None


def test_names_and_defaults_pydantic_must_see() -> None:
    def private(_x: int) -> None: ...
    def shadowing(json: str) -> None: ...
    def reserved(model_x: str) -> None: ...
    def none_default(x: str = None) -> None: ...  # type: ignore[assignment]  # noqa: RUF013
    def list_default(x: list[int] = [1]) -> None: ...  # noqa: B006
    def inf_default(x: float = float("inf")) -> None: ...

    for func in (private, shadowing, reserved, none_default, list_default, inf_default):
        fields: dict[str, tuple[Any, Any, str | None]] = {
            name: (typing.get_type_hints(func)[name], param.default, None)
            for name, param in inspect.signature(func).parameters.items()
        }
        assert _plain_arguments_schema(fields) is None, func.__name__
    with pytest.raises(pydantic.PydanticUserError):  # still refused, at declaration
        FunctionSignature(private, context_type=Context)


def test_deferred_model_still_validates_like_pydantic() -> None:
    signature = FunctionSignature(plain_tool, context_type=Context)
    assert signature.validate({"query": "q", "limit": "5"}) == {
        "query": "q",
        "limit": 5,
        "ratio": 0.5,
        "exact": False,
    }
    with pytest.raises(ArgumentsError, match="limit"):
        signature.validate({"query": "q", "limit": "many"})
    with pytest.raises(ArgumentsError, match="query"):
        signature.validate({})
    assert _fields(plain_tool)["query"] == (str, ..., "What to look for.")
