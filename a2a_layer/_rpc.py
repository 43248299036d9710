"""The JSON-RPC binding (spec 9) and the service parameters both HTTP bindings read.

`build_registry` maps every 1.0 method to the `A2AService` and answers the 0.3 names
through the ``_compat03`` bridge on the same endpoint. `ServiceParameters` reads
``A2A-Version`` and ``A2A-Extensions`` (spec 3.2.6, 3.6). Rules:

1. A missing or empty ``A2A-Version`` means 0.3 (spec 3.6.2). Patch versions are
   ignored. A version other than 1.0 and 0.3 is refused with -32009 for every method;
   a 1.0 method under version 0.3 is refused with -32009 too (0.3 has no such method),
   while the 0.3 method names are accepted under either version.
2. An extension the card marks ``required`` that the client did not list in
   ``A2A-Extensions`` is refused with -32008. The requested extensions the card
   declares are the activated ones: the agent sees them, and the response echoes them
   in ``A2A-Extensions``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jsonrpc_core import Incoming, MethodRegistry, Request, RequestContext
from jsonrpc_core.http import HTTPRequestInfo

from ._errors import ExtensionSupportRequired, VersionNotSupported
from ._methods import (
    A2A_METHODS,
    METHODS_V10,
    STREAMING_METHODS,
    STREAMING_METHODS_V03,
    A2AMethod,
)
from ._runtime import CallInfo
from ._service import A2AService
from .types import AgentCard

__all__ = [
    "EXTENSIONS_HEADER",
    "STREAMED_METHOD_NAMES",
    "SUPPORTED_VERSIONS",
    "VERSION_HEADER",
    "ServiceParameters",
    "build_registry",
    "normalise_version",
    "response_headers",
    "validate_hook",
]

VERSION_HEADER = "A2A-Version"
EXTENSIONS_HEADER = "A2A-Extensions"
SUPPORTED_VERSIONS = ("1.0", "0.3")
"""The protocol versions this layer speaks, newest first."""

_STATE_KEY = "a2a.call"


def normalise_version(value: str | None) -> str:
    """``major.minor`` of a version string; empty or missing means ``0.3`` (rule 1)."""
    text = (value or "").strip()
    if not text:
        return "0.3"
    parts = text.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else f"{parts[0]}.0"


def _split(value: str | None) -> frozenset[str]:
    return frozenset(v.strip() for v in (value or "").split(",") if v.strip())


@dataclass(frozen=True)
class ServiceParameters:
    """The A2A service parameters of one HTTP request, checked against the card."""

    version: str
    requested_extensions: frozenset[str]
    activated_extensions: frozenset[str]

    @classmethod
    def read(
        cls, headers: Mapping[str, str], query: Mapping[str, str], card: AgentCard
    ) -> ServiceParameters:
        """Read and check the parameters (rules 1 and 2; the method is checked apart)."""
        raw = headers.get("a2a-version")
        if raw is None:
            raw = query.get(VERSION_HEADER, query.get("a2a-version"))
        version = normalise_version(raw)
        if version not in SUPPORTED_VERSIONS:
            raise VersionNotSupported(
                f"A2A-Version {raw!r} is not supported; supported: "
                + ", ".join(SUPPORTED_VERSIONS),
                metadata={"requestedVersion": raw or "", "supportedVersions": "1.0,0.3"},
            )
        requested = _split(headers.get("a2a-extensions"))
        declared = {e.uri for e in card.capabilities.extensions or () if e.uri}
        required = {e.uri for e in card.capabilities.extensions or () if e.required and e.uri}
        missing = required - requested
        if missing:
            raise ExtensionSupportRequired(
                "Extension support required: declare "
                + ", ".join(sorted(missing))
                + " in the A2A-Extensions header",
                metadata={"extensions": ",".join(sorted(missing))},
            )
        return cls(version, requested, frozenset(requested & declared))

    def check_method(self, method: str) -> None:
        """Rule 1 for a 1.0 method name."""
        if method in METHODS_V10 and self.version != "1.0":
            raise VersionNotSupported(
                f"{method} is an A2A 1.0 method but the request asks for version "
                f"{self.version} (no A2A-Version header means 0.3); send A2A-Version: 1.0",
                metadata={"requestedVersion": self.version, "supportedVersions": "1.0,0.3"},
            )

    def call_info(self, info: HTTPRequestInfo | None) -> CallInfo:
        """The `CallInfo` for the service (tenant is filled from the request params)."""
        if info is None:
            return CallInfo(extensions=self.activated_extensions)
        return CallInfo(
            extensions=self.activated_extensions, principal=info.principal, headers=info.headers
        )


def validate_hook(
    card: AgentCard,
) -> Callable[[HTTPRequestInfo, Incoming | None, Any], None]:
    """The ``validate`` hook of the JSON-RPC endpoint (rules 1 and 2)."""

    # The parameters of a request that lists no extensions depend on its version header
    # alone (when the card requires none): made once per header value.
    required = any(e.required and e.uri for e in card.capabilities.extensions or ())
    known: dict[str, ServiceParameters] = {}

    def validate(info: HTTPRequestInfo, payload: Incoming | None, session: Any) -> None:
        headers = info.headers
        raw = headers.get("a2a-version")
        params = None
        if raw is not None and not required and "a2a-extensions" not in headers:
            params = known.get(raw)
        if params is None:
            params = ServiceParameters.read(headers, info.query, card)
            if raw is not None and not required and "a2a-extensions" not in headers:
                if len(known) >= 16:
                    known.clear()
                known[raw] = params
        if isinstance(payload, Request):
            params.check_method(payload.method)
        info.state[_STATE_KEY] = params

    return validate


def response_headers(info: HTTPRequestInfo) -> Mapping[str, str]:
    """Echo the activated extensions (rule 2)."""
    params = info.state.get(_STATE_KEY)
    if isinstance(params, ServiceParameters) and params.activated_extensions:
        return {EXTENSIONS_HEADER: ",".join(sorted(params.activated_extensions))}
    return {}


def _call(ctx: RequestContext) -> CallInfo:
    info = ctx.info if isinstance(ctx.info, HTTPRequestInfo) else None
    params = info.state.get(_STATE_KEY) if info is not None else None
    if isinstance(params, ServiceParameters):
        return params.call_info(info)
    return CallInfo(
        principal=info.principal if info else None, headers=info.headers if info else {}
    )


def build_registry(service: A2AService, *, compat_v03: bool = True) -> MethodRegistry:
    """The JSON-RPC methods of an A2A server: 1.0 names, and 0.3 names unless disabled."""
    registry = MethodRegistry()

    def bind(method: A2AMethod[Any, Any]) -> None:
        operation = method.operation

        async def handler(params: Any, ctx: RequestContext) -> Any:
            return await operation(service, params, _call(ctx))

        registry.on(method, handler)

    for method in A2A_METHODS:
        bind(method)

    if compat_v03:
        from ._compat03 import params_from_v03, result_to_v03

        async def v03(params: Any, ctx: RequestContext) -> Any:
            descriptor, model = params_from_v03(ctx.method, params)
            name = descriptor.method
            result = await METHODS_V10[name].operation(service, model, _call(ctx))
            if name in STREAMING_METHODS:
                return _stream_v03(name, result)
            return result_to_v03(name, result)

        registry.fallback = v03
    return registry


async def _stream_v03(name: str, events: AsyncIterator[Any]) -> AsyncIterator[Any]:
    from ._compat03 import result_to_v03

    async for event in events:
        yield result_to_v03(name, event)


STREAMED_METHOD_NAMES = STREAMING_METHODS | STREAMING_METHODS_V03
"""Every method name (1.0 and 0.3) answered with an SSE stream."""
