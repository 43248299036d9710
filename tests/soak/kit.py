"""Shared pieces of the reliability and security suites (and the soak scripts).

* `all_descriptors`: every request and notification descriptor each layer declares.
* `example_for`: a valid params value for a descriptor, synthesised from its model's
  JSON Schema (required members only, then every member), checked by validating it.
* `json_values`, `mutations`: hypothesis strategies for random JSON and for corrupting
  a valid value (wrong types, missing members, huge numbers, deep nesting, long strings).
* `rss_kib`: a process's resident set size from ``/proc/PID/status``.
* `TcpProxy`: a TCP forwarder on 127.0.0.1 whose connections a test can cut.

Nothing here asserts on wall-clock time; every loop is bounded in count.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pydantic
from anyio.abc import SocketStream, TaskGroup
from hypothesis import strategies as st

from jsonrpc_core import InvalidParams, NotificationType, RequestType

Descriptor = RequestType[Any, Any] | NotificationType[Any]

FIELD_ERROR = re.compile(r"^Invalid params: params(\.[^:;]+)?: ")
"""What an `InvalidParams` message from a params model starts with (it names the field)."""


# --- descriptors --------------------------------------------------------------------------


def all_descriptors() -> list[tuple[str, Descriptor]]:
    """``(layer, descriptor)`` for every typed descriptor of every layer, once each."""
    import a2a_layer._methods as a2a_methods
    import acp_layer._methods as acp_methods
    import acp_layer._methods_unstable as acp_unstable
    import mcp_layer._methods as mcp_methods

    found: list[tuple[str, Descriptor]] = []
    seen: set[int] = set()
    for layer, module in (
        ("mcp", mcp_methods),
        ("acp", acp_methods),
        ("acp-unstable", acp_unstable),
        ("a2a", a2a_methods),
    ):
        # Every name, the lazily exported ones too (`install_lazy_exports`): `vars` alone
        # holds only those something asked for already, so the list (and the tests made
        # from it) would depend on which test modules were imported before.
        names = [*vars(module), *getattr(module, "__all__", ())]
        for value in (getattr(module, name) for name in dict.fromkeys(names)):
            if isinstance(value, (RequestType, NotificationType)) and id(value) not in seen:
                if value.params_type is None:
                    continue
                seen.add(id(value))
                found.append((layer, value))
    return found


def descriptor_id(item: tuple[str, Descriptor]) -> str:
    layer, descriptor = item
    kind = "req" if isinstance(descriptor, RequestType) else "note"
    params = getattr(descriptor.params_type, "__name__", "union")
    return f"{layer}:{kind}:{descriptor.method}:{params}"


# --- valid examples from the JSON Schema --------------------------------------------------

_FORMATS = {
    "date-time": "2025-01-01T00:00:00Z",
    "date": "2025-01-01",
    "uri": "https://example.com/x",
    "uri-reference": "https://example.com/x",
    "email": "a@example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "byte": "aGVsbG8=",
    "base64": "aGVsbG8=",
}


def _resolve(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while "$ref" in schema and seen < 50:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
        seen += 1
    return schema


def _synth(schema: Any, defs: dict[str, Any], full: bool, depth: int) -> Any:
    if not isinstance(schema, dict):
        return {}
    schema = _resolve(schema, defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    if "default" in schema and not full and schema["default"] is not None:
        return copy.deepcopy(schema["default"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [o for o in schema[key] if _resolve(o, defs).get("type") != "null"]
            return _synth((options or schema[key])[0], defs, full, depth + 1)
    if "allOf" in schema:
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            merged.update(_resolve(part, defs))
        return _synth(merged, defs, full, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object" or (kind is None and "properties" in schema):
        props: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        names = props if (full and depth < 6) else [n for n in props if n in required]
        return {name: _synth(props[name], defs, full, depth + 1) for name in names}
    if kind == "array":
        count = max(schema.get("minItems", 0), 1 if full and depth < 6 else 0)
        return [_synth(schema.get("items", {}), defs, full, depth + 1) for _ in range(count)]
    if kind == "string":
        text = _FORMATS.get(schema.get("format", ""), "x")
        return text * max(1, schema.get("minLength", 1)) if text == "x" else text
    if kind == "integer":
        return int(schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1))
    if kind == "number":
        return float(schema.get("minimum", 0))
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "x"


_A2A_MESSAGE = {
    "messageId": "m-1",
    "role": "ROLE_USER",
    "parts": [{"text": "hello"}, {"data": {"k": [1, 2]}}, {"url": "https://example.com/f"}],
    "metadata": {"k": "v"},
}
EXTRA_EXAMPLES: dict[str, list[Any]] = {
    # A Part needs exactly one of its members: the schema cannot say so.
    "SendMessage": [
        {"message": _A2A_MESSAGE},
        {
            "message": _A2A_MESSAGE,
            "configuration": {"historyLength": 2, "returnImmediately": True},
            "metadata": {},
        },
    ],
}
EXTRA_EXAMPLES["SendStreamingMessage"] = EXTRA_EXAMPLES["SendMessage"]


def example_for(descriptor: Descriptor) -> list[Any]:
    """Valid params for ``descriptor``: a minimal one and a full one where they validate."""
    found: list[Any] = []
    for extra in EXTRA_EXAMPLES.get(descriptor.method, []):
        try:
            descriptor.validate_params(extra)
        except InvalidParams:
            continue
        found.append(extra)
    adapter = pydantic.TypeAdapter(descriptor.params_type)
    try:
        schema = adapter.json_schema(by_alias=True, mode="validation")
    except Exception:  # a model without a schema: no synthesised example
        return []
    defs = schema.get("$defs", {})
    for full in (False, True):
        candidate = _synth(schema, defs, full, 0)
        try:
            descriptor.validate_params(candidate)
        except InvalidParams:
            continue
        if candidate not in found:
            found.append(candidate)
    return found


# --- random JSON and mutations ------------------------------------------------------------

SMALL_TEXT = st.text(max_size=12)


def json_values(max_leaves: int = 12) -> st.SearchStrategy[Any]:
    """Any JSON value (strings may hold lone surrogates, as JSON escapes allow)."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.integers(min_value=-(10**400), max_value=10**400),
        st.floats(allow_nan=False, allow_infinity=False),
        SMALL_TEXT,
        st.sampled_from(["", "0", "true", "null", "2025-01-01T00:00:00Z", "../../etc/passwd"]),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(SMALL_TEXT, children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


def deep(depth: int, leaf: Any = 0) -> Any:
    """``depth`` nested arrays and objects around ``leaf``."""
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"a": value}
    return value


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if len(prefix) >= 12:
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def _replace(value: Any, path: tuple[Any, ...], new: Callable[[Any], Any]) -> Any:
    if not path:
        return new(value)
    clone = copy.copy(value)
    clone[path[0]] = _replace(value[path[0]], path[1:], new)
    return clone


def _drop(value: Any, path: tuple[Any, ...]) -> Any:
    if len(path) == 1:
        clone = copy.copy(value)
        del clone[path[0]]
        return clone
    clone = copy.copy(value)
    clone[path[0]] = _drop(value[path[0]], path[1:])
    return clone


def _deep_of(levels: int) -> Any:
    return deep(levels * 5)


class _Long:
    """Makes a string of a given length (a named callable: hypothesis describes lambdas
    by reading their source, which is slow when strategies are built per draw)."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __call__(self, _: Any) -> str:
        return "y" * self.size


_REPLACEMENTS: dict[int, st.SearchStrategy[Any]] = {}
_FIXED: list[Any] = [
    None,
    True,
    -1,
    0,
    2**63,
    -(2**63) - 1,
    10**300,
    1e308,
    -1e308,
    5e-324,
    "",
    "\x00",
    "\ud800",
    "x" * 1000,
    [],
    {},
    [[[]]],
    {"": {}},
]


def replacements(long_string: int) -> st.SearchStrategy[Any]:
    """Values a mutation puts in place of a member (built once per size)."""
    strategy = _REPLACEMENTS.get(long_string)
    if strategy is None:
        strategy = _REPLACEMENTS[long_string] = st.one_of(
            json_values(6),
            st.sampled_from(_FIXED),
            st.integers(min_value=1, max_value=30).map(_deep_of),
            st.just(None).map(_Long(long_string)),
        )
    return strategy


_KEYS = st.one_of(SMALL_TEXT, st.just("_meta"), st.just("x" * 300))
_ACTIONS = st.sampled_from(["replace", "replace", "drop", "add", "wrap"])
_COUNT = st.integers(min_value=1, max_value=3)


def _wrap(value: Any) -> Any:
    return [value]


class _Put:
    def __init__(self, value: Any, key: Any = None, into: bool = False) -> None:
        self.value, self.key, self.into = value, key, into

    def __call__(self, target: Any) -> Any:
        return {**target, self.key: self.value} if self.into else self.value


@st.composite
def mutations(draw: st.DrawFn, valid: Any, long_string: int = 4096) -> Any:
    """``valid`` with one to three members replaced, removed, or added."""
    value = valid
    extras = replacements(long_string)
    for _ in range(draw(_COUNT)):
        paths = list(_paths(value))
        path = draw(st.sampled_from(paths))
        action = draw(_ACTIONS)
        if action == "drop" and path:
            value = _drop(value, path)
        elif action == "add" and isinstance(_get(value, path), dict):
            key = draw(_KEYS)
            value = _replace(value, path, _Put(draw(extras), key, into=True))
        elif action == "wrap":
            value = _replace(value, path, _wrap)
        else:
            value = _replace(value, path, _Put(draw(extras)))
    return value


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


async def eventually(predicate: Callable[[], bool], *, attempts: int = 500) -> None:
    """Poll ``predicate`` every 20 ms, at most ``attempts`` times; fail if never true."""
    for _ in range(attempts):
        if predicate():
            return
        await anyio.sleep(0.02)
    raise AssertionError("condition never became true")


# --- processes and sockets ----------------------------------------------------------------


def rss_kib(pid: int | None = None) -> int:
    """The resident set size of a process (this one by default), in KiB."""
    with open(f"/proc/{pid or os.getpid()}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc status")


def hwm_kib(pid: int | None = None) -> int:
    """The peak resident set size of a process (``VmHWM``), in KiB."""
    with open(f"/proc/{pid or os.getpid()}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc status")


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to ``target_port``; `cut` drops every live connection.

    Use with ``async with TcpProxy(target).running() as proxy``; ``proxy.port`` is the
    port to connect to. ``cuts`` counts the connections cut, ``connections`` those made.
    """

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.connections = 0
        self.cuts = 0
        self._live: list[tuple[SocketStream, SocketStream]] = []
        self._task_group: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> Any:
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
        self.port = listener.extra(anyio.abc.SocketAttribute.local_port)
        async with listener, anyio.create_task_group() as task_group:
            self._task_group = task_group
            task_group.start_soon(listener.serve, self._handle)
            try:
                yield self
            finally:
                task_group.cancel_scope.cancel()

    async def _handle(self, client: SocketStream) -> None:
        self.connections += 1
        try:
            upstream = await anyio.connect_tcp("127.0.0.1", self.target_port)
        except OSError:
            await client.aclose()
            return
        pair = (client, upstream)
        self._live.append(pair)
        try:
            async with anyio.create_task_group() as task_group:

                async def pump(source: SocketStream, sink: SocketStream) -> None:
                    try:
                        async for chunk in source:
                            await sink.send(chunk)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        pass
                    task_group.cancel_scope.cancel()

                task_group.start_soon(pump, client, upstream)
                task_group.start_soon(pump, upstream, client)
        finally:
            if pair in self._live:
                self._live.remove(pair)
            with anyio.CancelScope(shield=True):
                await client.aclose()
                await upstream.aclose()

    async def cut(self) -> int:
        """Close every live connection at once (both directions); how many were cut."""
        live, self._live = self._live, []
        for client, upstream in live:
            await client.aclose()
            await upstream.aclose()
        self.cuts += len(live)
        return len(live)
