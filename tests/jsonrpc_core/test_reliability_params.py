"""Fuzzing every params model of every layer (MCP, ACP stable and unstable, A2A 1.0 and
0.3): random JSON and near-valid mutations of a valid value either validate or raise
`InvalidParams` whose message names the offending field, never another exception.

A crash here (``TypeError``, ``KeyError``, ``RecursionError``, ``OverflowError`` ...) is a
request that would reach a server as -32603 instead of -32602, or worse. Sizes are kept
small for CI; ``RPCWEAVE_SOAK=1`` runs ten times more examples with 10 MB strings. The
number of inputs checked is printed at the end of the module (``pytest -s``).

Reads the layers' private method tables (`a2a_layer._methods`, `_compat03`,
`mcp_layer._methods`) on purpose: every params model of every method is fuzzed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from soak.kit import (
    FIELD_ERROR,
    Descriptor,
    all_descriptors,
    deep,
    descriptor_id,
    example_for,
    json_values,
    mutations,
)

from a2a_layer._compat03 import params_from_v03
from a2a_layer._methods import METHODS_V03_TO_V10
from jsonrpc_core import InvalidParams, MethodNotFound

SOAK = os.environ.get("RPCWEAVE_SOAK") == "1"
SCALE = 10 if SOAK else 1
LONG = 10 * 1024 * 1024 if SOAK else 1024 * 1024
# The deepest nesting that reaches a params model over the wire: the JSON-RPC parser
# stops near 200 levels, the HTTP+JSON binding's json.loads near 1000.
DEEPEST = 900
DESCRIPTORS = all_descriptors()
COUNTS: dict[str, int] = {"inputs": 0, "invalid": 0}


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    print(
        f"\nparams fuzzing: {COUNTS['inputs']} inputs over {len(DESCRIPTORS)} descriptors "
        f"and {len(V03_METHODS)} A2A 0.3 methods, {COUNTS['invalid']} refused with -32602"
    )


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples * SCALE,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def check(descriptor: Descriptor, raw: Any) -> None:
    """The oracle: validates, or `InvalidParams` naming a field; nothing else."""
    COUNTS["inputs"] += 1
    try:
        descriptor.validate_params(raw)
    except InvalidParams as exc:
        COUNTS["invalid"] += 1
        assert FIELD_ERROR.match(exc.message), exc.message
        assert len(exc.to_object()["message"]) <= 4096, "the error must not echo huge inputs"


def test_every_layer_declares_descriptors_with_examples() -> None:
    layers = {layer for layer, _ in DESCRIPTORS}
    assert layers == {"mcp", "acp", "acp-unstable", "a2a"}
    assert len(DESCRIPTORS) >= 80
    for item in DESCRIPTORS:
        assert example_for(item[1]), f"no valid example for {descriptor_id(item)}"


def _mutate(valid: Any) -> st.SearchStrategy[Any]:
    return mutations(valid, LONG)


@pytest.mark.parametrize("item", DESCRIPTORS, ids=descriptor_id)
def test_params_model_fuzz(item: tuple[str, Descriptor]) -> None:
    """Random JSON, mutations of valid params, then extreme shapes in place of the whole
    params and of each top-level member of a valid value."""
    _, descriptor = item
    examples = example_for(descriptor)

    @_settings(40)
    @given(st.one_of(json_values(), st.sampled_from(examples).flatmap(_mutate)))
    def run(raw: Any) -> None:
        check(descriptor, raw)

    run()
    extremes: list[Any] = [
        deep(DEEPEST),
        10**5000,
        -(10**5000),
        1e308 * 10,
        "z" * LONG,
        ["z" * 1000] * 1000,
        {str(i): i for i in range(5000)},
    ]
    for raw in extremes:
        check(descriptor, raw)
    for valid in examples:
        if isinstance(valid, dict):
            for key in list(valid):
                for extreme in extremes:
                    check(descriptor, {**valid, key: extreme})


V03_METHODS = sorted(METHODS_V03_TO_V10)
V03_VALID: list[Any] = [
    {
        "message": {
            "kind": "message",
            "messageId": "m",
            "role": "user",
            "parts": [{"kind": "text", "text": "hi"}, {"kind": "data", "data": {"a": 1}}],
        }
    },
    {"id": "t-1", "historyLength": 1},
    {"taskId": "t-1", "pushNotificationConfig": {"url": "https://example.com/hook"}},
    {"id": "t-1", "pushNotificationConfigId": "c-1"},
]


def check_v03(method: str, raw: Any) -> None:
    COUNTS["inputs"] += 1
    try:
        params_from_v03(method, raw)
    except InvalidParams as exc:
        COUNTS["invalid"] += 1
        assert exc.message.startswith("Invalid params"), exc.message
        assert len(exc.to_object()["message"]) <= 4096, "the error must not echo huge inputs"
    except MethodNotFound:
        pytest.fail(f"{method} is a 0.3 method")


@pytest.mark.parametrize("method", V03_METHODS)
def test_a2a_v03_bridge_never_crashes(method: str) -> None:
    """The 0.3 -> 1.0 rewrite runs before validation: it must cope with any shape."""

    @_settings(60)
    @given(st.one_of(json_values(), st.sampled_from(V03_VALID).flatmap(_mutate)))
    def run(raw: Any) -> None:
        check_v03(method, raw)

    run()
    for extreme in (deep(DEEPEST), 10**5000, "z" * LONG):
        check_v03(method, extreme)
        check_v03(method, {"message": extreme})
        check_v03(method, {"message": {**V03_VALID[0]["message"], "parts": extreme}})


@pytest.mark.anyio
async def test_errors_never_echo_huge_values() -> None:
    """pydantic quotes some inputs (a discriminator tag) and handlers quote method names:
    the error sent back stays short either way."""
    import anyio

    from jsonrpc_core import Peer, Request, encode, memory_pair
    from mcp_layer._methods import COMPLETION_COMPLETE

    huge = "t" * LONG
    with pytest.raises(InvalidParams) as caught:
        COMPLETION_COMPLETE.validate_params(
            {"ref": {"type": huge}, "argument": {"name": "a", "value": "b"}}
        )
    assert len(caught.value.message) < 1024
    assert len(MethodNotFound("Method not found: " + huge).to_object()["message"]) <= 4096
    client, server = memory_pair()
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(Peer(server).run)
        await client.send(Request(1, huge, {}))
        with anyio.fail_after(10):
            answer = await client.receive()
        assert len(encode(answer.payload)) < 5000  # type: ignore[arg-type]
        task_group.cancel_scope.cancel()
