"""The HTTP headers of a 2026-07-28 Streamable HTTP request (SEP-2243).

A client mirrors body fields into headers so that intermediaries can route without
parsing the body: ``MCP-Protocol-Version`` (the envelope's version), ``Mcp-Method``,
``Mcp-Name`` (``params.name`` / ``params.uri`` / ``params.taskId``) and one
``Mcp-Param-{Name}`` per tool argument whose schema property says ``x-mcp-header``.
A server checks every one of them against the body (-32020 on any difference).

Rules both ends share:

1. A value that is not plain visible ASCII without edge whitespace (or that looks like
   the sentinel) travels as ``=?base64?<UTF-8 base64>?=``; a malformed sentinel never
   matches anything.
2. ``x-mcp-header`` is valid only on a property reached from the schema root through
   ``properties`` keys alone, of type string, integer or boolean, with a non-empty
   RFC 9110 token as value, case-insensitively unique in the schema. A client drops a
   tool whose schema breaks this; a server validates nothing for it.
3. Booleans are ``true``/``false``; integers compare numerically (``42`` = ``42.0``).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = [
    "METHOD_HEADER",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "SESSION_HEADER",
    "VERSION_HEADER",
    "decode_header_value",
    "encode_header_value",
    "header_mismatch",
    "header_name_source",
    "invalid_x_mcp_header",
    "param_headers",
    "request_headers",
    "x_mcp_headers",
]

VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
PARAM_HEADER_PREFIX = "mcp-param-"
SESSION_HEADER = "mcp-session-id"
"""The handshake era's session id header (both ends give it to the core's HTTP transport)."""

_NAME_FIELDS = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}
_SENTINEL = re.compile(r"^=\?base64\?(?P<payload>.*)\?=$", re.DOTALL)
_SAFE = re.compile(r"^[\x20-\x7e]*$")
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
# Keywords whose values are schemas; crossing any of them leaves the properties chain.
_SUBSCHEMA = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
    }
)
_SUBSCHEMA_LISTS = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SUBSCHEMA_MAPS = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})
_MAX_SAFE_INTEGER = 2**53 - 1


def header_name_source(method: str) -> str | None:
    """The params member ``Mcp-Name`` mirrors for ``method`` (``None``: no such header)."""
    return _NAME_FIELDS.get(method)


def encode_header_value(value: str) -> str:
    """``value`` as it travels in a header (rule 1)."""
    if _SAFE.match(value) and value == value.strip() and not _SENTINEL.match(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def decode_header_value(value: str | None) -> str | None:
    """The value a header carries (``None`` for an absent header or a bad sentinel)."""
    if value is None:
        return None
    value = value.strip()
    match = _SENTINEL.match(value)
    if match is None:
        return value
    payload = match.group("payload")
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return None
    if base64.b64encode(raw).decode("ascii") != payload:
        return None  # non-canonical padding or trailing bits
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _positions(schema: Any) -> Iterator[tuple[tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema position with its ``properties`` path (``None`` once off it)."""
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, dict):
            continue
        yield path, node
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    stack.append(((*path, name) if path is not None else None, sub))
            elif keyword in _SUBSCHEMA:
                stack.append((None, value))
            elif keyword in _SUBSCHEMA_LISTS and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif keyword in _SUBSCHEMA_MAPS and isinstance(value, dict):
                stack.extend((None, sub) for sub in value.values())


def invalid_x_mcp_header(schema: Any) -> str | None:
    """Why ``schema``'s ``x-mcp-header`` annotations are invalid, or ``None`` (rule 2)."""
    seen: dict[str, str] = {}
    for path, node in _positions(schema):
        if "x-mcp-header" not in node:
            continue
        if not path:
            return "x-mcp-header outside a chain of properties"
        where = ".".join(path)
        token = node["x-mcp-header"]
        if not isinstance(token, str) or not _TOKEN.match(token):
            return f"property {where!r}: x-mcp-header {token!r} is not an HTTP token"
        if node.get("type") not in _HEADER_TYPES:
            return f"property {where!r}: x-mcp-header needs type string, integer or boolean"
        lowered = token.lower()
        if lowered in seen:
            return f"property {where!r}: x-mcp-header {token!r} repeats {seen[lowered]!r}"
        seen[lowered] = where
    return None


def x_mcp_headers(schema: Any) -> list[tuple[tuple[str, ...], str, str | None]]:
    """``(path, token, type)`` of each ``x-mcp-header`` of a valid schema."""
    return [
        (path, node["x-mcp-header"], node.get("type"))
        for path, node in _positions(schema)
        if path and isinstance(node.get("x-mcp-header"), str)
    ]


def _value_at(arguments: Any, path: tuple[str, ...]) -> Any:
    node = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def _render(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= _MAX_SAFE_INTEGER else None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, str):
        return value
    return None


_HeaderPlan = tuple[str | None, list[tuple[tuple[str, ...], str, str | None]]]
_PLANS: dict[int, tuple[Any, _HeaderPlan]] = {}
_MAX_PLANS = 1024


def _plan(schema: Any) -> _HeaderPlan:
    """`invalid_x_mcp_header` and `x_mcp_headers` of one schema object, worked out on
    its first ``tools/call`` and kept: every call of a tool would walk its schema twice
    otherwise. A tool's schema is replaced, never edited (a server's with its tool, a
    client's with each listing), so the key is the object's identity; the schema is
    held beside its plan so that its ``id`` cannot be reused. At most ``_MAX_PLANS``
    schemas are kept (then the table starts again)."""
    found = _PLANS.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    plan = (invalid_x_mcp_header(schema), x_mcp_headers(schema))
    if len(_PLANS) >= _MAX_PLANS:
        _PLANS.clear()
    _PLANS[id(schema)] = (schema, plan)
    return plan


def param_headers(schema: Any, arguments: Any) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers a ``tools/call`` with ``arguments`` carries."""
    headers: dict[str, str] = {}
    for path, token, _ in _plan(schema)[1]:
        rendered = _render(_value_at(arguments, path))
        if rendered is not None:
            headers[f"Mcp-Param-{token}"] = encode_header_value(rendered)
    return headers


def request_headers(method: str, params: Any, version: str) -> dict[str, str]:
    """The standard headers of a modern request (without ``Mcp-Param-*``)."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    source = header_name_source(method)
    value = params.get(source) if source is not None and isinstance(params, dict) else None
    if isinstance(value, str):
        headers["Mcp-Name"] = encode_header_value(value)
    return headers


def _matches(kind: str | None, value: Any, rendered: str, received: str) -> bool:
    if kind == "integer" and not isinstance(value, bool) and isinstance(value, (int, float)):
        try:
            return float(received) == float(value)
        except ValueError:
            return False
    return received == rendered


def header_mismatch(
    method: str,
    params: Any,
    headers: Mapping[str, str],
    *,
    version: str,
    tool_schema: Any = None,
) -> str | None:
    """Why a modern request's headers disagree with its body, or ``None``.

    ``headers`` has lowercase names; ``tool_schema`` is the called tool's input schema.
    """
    received_version = headers.get(VERSION_HEADER)
    if received_version is None or received_version.strip() != version:
        return "the MCP-Protocol-Version header does not match the request's protocol version"
    received_method = headers.get(METHOD_HEADER)
    if received_method is None:
        return "the Mcp-Method header is missing"
    if received_method.strip() != method:
        return f"the Mcp-Method header {received_method.strip()!r} does not match {method!r}"
    source = header_name_source(method)
    if source is not None and isinstance(params, dict):
        body_value = params.get(source)
        if body_value is not None:
            raw = headers.get(NAME_HEADER)
            if raw is None:
                return "the Mcp-Name header is missing"
            if decode_header_value(raw) != body_value:
                return f"the Mcp-Name header does not match the body's {source!r}"
    if method == "tools/call" and tool_schema is not None and isinstance(params, dict):
        return _param_mismatch(tool_schema, params.get("arguments"), headers)
    return None


def _param_mismatch(schema: Any, arguments: Any, headers: Mapping[str, str]) -> str | None:
    invalid, expected = _plan(schema)
    if invalid is not None:
        return None
    for path, token, kind in expected:
        name = f"Mcp-Param-{token}"
        raw = headers.get(name.lower())
        value = _value_at(arguments, path)
        argument = ".".join(path)
        if value is None:
            if raw is not None:
                return f"the {name} header is present but argument {argument!r} is not"
            continue
        rendered = _render(value)
        if rendered is None:
            if raw is not None:
                return f"the {name} header does not match argument {argument!r}"
            continue
        if raw is None:
            return f"the {name} header is missing for argument {argument!r}"
        received = decode_header_value(raw)
        if received is None:
            return f"the {name} header carries a malformed base64 value"
        if not _matches(kind, value, rendered, received):
            return f"the {name} header does not match argument {argument!r}"
    return None
