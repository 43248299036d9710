"""One record per A2A method: every binding's table is derived from `A2A_METHODS`.

Tests the private unit `a2a_layer._methods` (and `_service.A2AService`'s operations) on
purpose: the derived tables are the unit under test.
"""

from __future__ import annotations

import re

from _specs import find

from a2a_layer._methods import (
    A2A_METHODS,
    GET_TASK,
    HTTP_ROUTE_ALIASES_V10,
    HTTP_ROUTES_V10,
    METHODS_V03_TO_V10,
    METHODS_V10,
    METHODS_V10_TO_V03,
    STREAMING_METHODS,
    STREAMING_METHODS_V03,
    A2AMethod,
)
from a2a_layer._service import A2AService
from jsonrpc_core import RequestType

_RPC = re.compile(r"rpc (\w+)\((\w+)\) returns \((stream )?([\w.]+)\)")


def proto_rpcs() -> dict[str, tuple[str, bool, str]]:
    proto = find("a2a/v1.0/a2a.proto")
    text = proto.read_text() if proto is not None else ""
    return {m[1]: (m[2], bool(m[3]), m[4].rsplit(".", 1)[-1]) for m in _RPC.finditer(text)}


def test_each_proto_rpc_is_one_record_with_its_types_and_streaming_flag() -> None:
    rpcs = proto_rpcs() or {m.grpc: ("", m.streaming, "") for m in A2A_METHODS}
    assert sorted(m.grpc for m in A2A_METHODS) == sorted(rpcs)
    for record in A2A_METHODS:
        request, streaming, response = rpcs[record.grpc]
        assert record.streaming is streaming
        if request:
            assert record.params_type.__name__ == request
            assert record.result_type.__name__ == response
        assert isinstance(record, RequestType)  # the JSON-RPC descriptor itself
        assert record.operation.__qualname__.startswith(A2AService.__name__ + ".")


def test_binding_tables_are_derived_from_the_records() -> None:
    assert list(METHODS_V10.values()) == list(A2A_METHODS)
    assert STREAMING_METHODS == {m.method for m in A2A_METHODS if m.streaming}
    assert STREAMING_METHODS_V03 == {"message/stream", "tasks/resubscribe"}
    assert METHODS_V10_TO_V03 == {m.method: m.v03 for m in A2A_METHODS if m.v03}
    assert "ListTasks" not in METHODS_V10_TO_V03  # 0.3 JSON-RPC has no ListTasks
    assert METHODS_V03_TO_V10["agent/authenticatedExtendedCard"] == "GetExtendedAgentCard"
    routed = {r.method for r in HTTP_ROUTES_V10}
    assert routed == set(METHODS_V10)
    assert all(r.method == "SubscribeToTask" for r in HTTP_ROUTE_ALIASES_V10)
    # Every route has its tenant form right after it.
    for plain, tenanted in zip(HTTP_ROUTES_V10[::2], HTTP_ROUTES_V10[1::2], strict=True):
        assert tenanted.path == "/{tenant}" + plain.path
        assert tenanted.method == plain.method


def test_custom_verb_routes_match_before_the_plain_task_route() -> None:
    from a2a_layer._methods import match_http_route

    found = match_http_route("POST", "/tasks/t1:cancel")
    assert found is not None and found[0].method == "CancelTask"
    found = match_http_route("GET", "/tasks/t1:subscribe")
    assert found is not None and found[0].method == "SubscribeToTask"
    found = match_http_route("GET", "/tasks/t1")
    assert found is not None and found[0].method == "GetTask"


def test_a_record_types_the_client_call() -> None:
    record: A2AMethod[object, object] = GET_TASK  # type: ignore[assignment]
    assert record.result_type.__name__ == "Task"
    assert repr(GET_TASK) == "A2AMethod('GetTask')"
