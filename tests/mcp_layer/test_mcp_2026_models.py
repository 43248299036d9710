"""The 2026-07-28 objects of `mcp_layer.types` against the official 2026-07-28 schema.

Each instance of tests/mcp2026_cases.py, written as rpcweave writes the wire, validates
against its definition and parses back equal; the tasks extension's objects (absent
from the core schema) are checked against SEP-2663's shapes. Also here: the method
table of the era, and the error classes of its three new codes.

Tests the private units `mcp_layer._methods` and `_errors.HTTP_STATUS_BY_CODE` on purpose:
the method tables and the HTTP status of each error are checked against the spec.
"""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
import pytest
from mcp2026_cases import CASES, VERSION
from mcp_schema import load_schema, requires_schema

from jsonrpc_core import MethodNotFound
from mcp_layer import (
    MCP_ERRORS,
    HeaderMismatch,
    MissingRequiredClientCapability,
    UnsupportedProtocolVersion,
)
from mcp_layer import _methods as M
from mcp_layer import types as T
from mcp_layer._errors import HTTP_STATUS_BY_CODE

pytestmark = requires_schema


def wire(obj: Any) -> Any:
    return json.loads(pydantic_core.to_json(obj, by_alias=True, exclude_none=True))


def _case_id(case: tuple[str | None, T.MCPModel]) -> str:
    return f"{case[0] or 'extension'}:{type(case[1]).__name__}"


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_instance_validates_and_round_trips(case: tuple[str | None, T.MCPModel]) -> None:
    definition, instance = case
    data = wire(instance)
    if definition is not None:
        assert load_schema(VERSION).problems(definition, data) == []
    again = type(instance).model_validate(data)
    assert wire(again) == data


TASK_KEYS = {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"}


@pytest.mark.parametrize("case", [c for c in CASES if c[0] is None], ids=_case_id)
def test_extension_objects_have_the_sep_2663_shape(case: tuple[str | None, T.MCPModel]) -> None:
    _, instance = case
    data = wire(instance)
    if isinstance(instance, T.TaskV2):
        assert TASK_KEYS <= set(data)
        assert "ttl" not in data and "pollInterval" not in data  # the 2025-11-25 names
        assert data["status"] in ("working", "input_required", "completed", "cancelled", "failed")
    if isinstance(instance, T.CreateTaskResultV2):
        assert data["resultType"] == "task" and "task" not in data  # flat, no wrapper


def test_an_unlimited_task_ttl_is_written_as_null() -> None:
    task = T.TaskV2(task_id="t", status="working", created_at="x", last_updated_at="x")
    assert wire(task)["ttlMs"] is None


def test_the_modern_method_table_matches_the_schema() -> None:
    schema = load_schema(VERSION)
    core = {m for m in M.MODERN_CLIENT_REQUESTS if not m.startswith("tasks/")}
    assert core == set(schema.requests["client"])
    assert schema.requests["server"] == {}  # no server-to-client requests in this era


@pytest.mark.parametrize(
    ("error", "code", "status"),
    [
        (HeaderMismatch("Header mismatch: x"), -32020, 400),
        (MissingRequiredClientCapability.for_capabilities({"sampling": {}}), -32021, 400),
        (UnsupportedProtocolVersion.for_version("1999-01-01", [VERSION]), -32022, 400),
        (MethodNotFound(), -32601, 404),
    ],
)
def test_the_new_error_codes(error: Any, code: int, status: int) -> None:
    assert error.code == code
    assert HTTP_STATUS_BY_CODE[code] == status
    received = MCP_ERRORS.from_object(error.to_object())
    assert type(received) is type(error)
    definitions = {
        -32020: "HeaderMismatchError",
        -32021: "MissingRequiredClientCapabilityError",
        -32022: "UnsupportedProtocolVersionError",
    }
    if code in definitions:
        message = {"jsonrpc": "2.0", "id": 1, "error": error.to_object()}
        assert load_schema(VERSION).problems(definitions[code], message) == []


def test_error_accessors() -> None:
    missing = MissingRequiredClientCapability.for_capabilities({"roots": {}})
    assert missing.required_capabilities == {"roots": {}}
    unsupported = MCP_ERRORS.from_object(
        {"code": -32022, "message": "no", "data": {"supported": ["a", 1], "requested": "b"}}
    )
    assert isinstance(unsupported, UnsupportedProtocolVersion)
    assert unsupported.supported == ["a"]
    assert UnsupportedProtocolVersion("bare").supported == []
