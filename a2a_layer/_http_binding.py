"""The HTTP+JSON binding's request mapping, as pure functions (spec 11.4, 11.5).

A server turns (route, path variables, query, body) into the params a method descriptor
validates; a client turns a request model into (verb, path, query, body). No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic.alias_generators import to_camel

from ._methods import HTTP_ROUTES_V10, HttpRoute
from .types import A2AModel

__all__ = ["HttpRequestSpec", "http_request_for", "params_from_http"]


def params_from_http(
    route: HttpRoute,
    path_vars: Mapping[str, str],
    query: Mapping[str, str | Sequence[str]],
    body: Any = None,
) -> dict[str, Any]:
    """The JSON-RPC-style params of an HTTP+JSON request, ready for ``validate_params``.

    Path variables win over body and query members of the same name; query values
    stay strings (the models read numbers, booleans, enums and timestamps from them).
    A repeated query parameter gives a list.
    """
    params: dict[str, Any] = {}
    if route.body and isinstance(body, Mapping):
        params.update(body)
    elif not route.body:
        for key, value in query.items():
            if isinstance(value, str):
                params[key] = value
            else:
                values = list(value)
                params[key] = values[0] if len(values) == 1 else values
    for name, value in path_vars.items():
        params[to_camel(name)] = value
    return params


@dataclass(frozen=True)
class HttpRequestSpec:
    """What a client sends for one call: verb, path, query parameters and JSON body."""

    http_method: str
    path: str
    query: dict[str, str]
    body: dict[str, Any] | None


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        raise ValueError("nested objects cannot travel in a query string (spec 11.5)")
    return str(value)


def http_request_for(method: str, params: A2AModel) -> HttpRequestSpec:
    """The HTTP+JSON request for calling ``method`` with ``params``.

    The tenant form of the route is used when ``params.tenant`` is set.
    """
    tenant = getattr(params, "tenant", None)
    route = next(
        (
            r
            for r in HTTP_ROUTES_V10
            if r.method == method and ("tenant" in r.path_params) == bool(tenant)
        ),
        None,
    )
    if route is None:
        raise ValueError(f"no HTTP+JSON route for method {method!r}")
    wire: dict[str, Any] = params.model_dump(mode="json", by_alias=True, exclude_none=True)
    values: dict[str, str] = {}
    for name in route.path_params:
        value = getattr(params, name)
        if value is None or value == "":
            raise ValueError(f"{to_camel(name)} is required in the path of {route.path}")
        values[name] = str(value)
        wire.pop(to_camel(name), None)
    path = route.expand(**values)
    if route.body:
        return HttpRequestSpec(route.http_method, path, {}, wire)
    query = {k: _query_value(v) for k, v in wire.items()}
    return HttpRequestSpec(route.http_method, path, query, None)
