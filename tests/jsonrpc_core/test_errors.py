"""The error tree and the code <-> class table."""

from __future__ import annotations

import pytest

from jsonrpc_core import (
    InternalError,
    InvalidParams,
    InvalidRequest,
    JsonRpcError,
    MethodNotFound,
    ParseError,
    RequestCancelled,
    ServerError,
    error_class_for_code,
    error_from_object,
)


@pytest.mark.parametrize(
    ("code", "cls"),
    [
        (-32700, ParseError),
        (-32600, InvalidRequest),
        (-32601, MethodNotFound),
        (-32602, InvalidParams),
        (-32603, InternalError),
        (-32800, RequestCancelled),
        (-32000, ServerError),
        (-32050, ServerError),
        (1234, ServerError),
    ],
)
def test_code_maps_to_class(code: int, cls: type[JsonRpcError]) -> None:
    assert error_class_for_code(code) is cls
    err = error_from_object({"code": code, "message": "m"})
    assert type(err) is cls
    assert err.code == code


def test_data_is_carried_both_ways() -> None:
    err = error_from_object({"code": -32602, "message": "bad", "data": {"field": "a"}})
    assert err.to_object() == {"code": -32602, "message": "bad", "data": {"field": "a"}}
    assert error_from_object({"code": -32602, "message": "bad", "data": None}).to_object() == {
        "code": -32602,
        "message": "bad",
        "data": None,
    }
    assert not InvalidParams().has_data
    assert InvalidParams().to_object() == {"code": -32602, "message": "Invalid params"}


def test_explicit_code_overrides_class_default() -> None:
    err = JsonRpcError("custom", code=-32042)
    assert err.to_object() == {"code": -32042, "message": "custom"}
    assert JsonRpcError.code == -32000


@pytest.mark.parametrize("obj", ["text", {"message": "no code"}, {"code": "1", "message": "x"}])
def test_malformed_error_objects_still_become_errors(obj: object) -> None:
    err = error_from_object(obj)
    assert isinstance(err, InternalError)
    assert "Malformed" in err.message


def test_each_protocol_keeps_its_own_codes() -> None:
    from jsonrpc_core import STANDARD_ERRORS, ErrorTable

    mcp_like = ErrorTable("mcp-like", parent=STANDARD_ERRORS)
    a2a_like = ErrorTable("a2a-like", parent=STANDARD_ERRORS)

    @mcp_like.register
    class ResourceMissing(JsonRpcError):
        code = -32002

    @a2a_like.register
    class TaskNotCancelable(JsonRpcError):
        code = -32002

    raw = {"code": -32002, "message": "m", "data": [1]}
    assert type(mcp_like.from_object(raw)) is ResourceMissing
    assert type(a2a_like.from_object(raw)) is TaskNotCancelable
    assert type(error_from_object(raw)) is ServerError
    assert type(mcp_like.from_object({"code": -32601, "message": "x"})) is MethodNotFound
    refined = a2a_like.refine(error_from_object(raw))
    assert type(refined) is TaskNotCancelable
    assert refined.data == [1]
