"""The protocol-neutral half of the OpenTelemetry instrumentation.

The core knows no protocol: a layer describes how its methods are named and what they
carry by subclassing `TelemetryConventions`, and hands an instance to each `Peer` (and
`HTTPCaller`) it builds. The core then makes a CLIENT span for every request and
notification a peer sends and a SERVER span for every one it handles, propagates the
W3C trace context, and records the duration histograms, all through the global
OpenTelemetry tracer and meter providers.

Rules this module keeps:

1. Nothing here imports ``opentelemetry``. Without it installed every peer's hook is
   ``None`` and the cost per message is that one ``None`` test. With it, a peer's
   `TelemetryHook` imports the half that uses it (``_telemetry_otel``) only once
   someone else has imported ``opentelemetry.trace`` (which configuring a provider
   does); until then its `live` check is one ``sys.modules`` lookup.
2. Conventions see params as parsed JSON (a dict, a list or ``None``), never a model,
   and must not raise for a shape they do not expect (a peer's params are not
   validated yet when a SERVER span starts): they return fewer attributes.
3. Attribute values are ``str``, ``bool``, ``int`` or ``float``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Hashable, Mapping
from typing import Any, Literal

import pydantic
import pydantic_core

__all__ = [
    "AttributeValue",
    "Attributes",
    "TelemetryConventions",
    "TelemetryHook",
    "as_json",
    "field",
    "instrument",
    "text_field",
]

AttributeValue = str | bool | int | float
Attributes = dict[str, AttributeValue]

_otel_installed: bool | None = None
_otel_module: Any = None
_modules = sys.modules


class TelemetryConventions:
    """How one protocol's messages become spans and metrics (a layer subclasses it).

    ``protocol`` prefixes the metric names (``{protocol}.client.operation.duration``)
    and is recorded as ``rpcweave.protocol`` on every span; ``role`` is the end this
    peer plays (``client`` or ``server``), used for the session duration metric.
    ``carrier`` says where the trace context travels: ``"meta"`` in ``params._meta``
    (MCP, ACP; one pipe or HTTP stream carries many messages), ``"headers"`` in the
    HTTP request headers (A2A, one POST per call).
    """

    protocol: str = "jsonrpc"
    carrier: Literal["meta", "headers"] = "meta"
    method_attribute: str = "rpc.method"
    session_attribute: str | None = None
    result_methods: frozenset[str] = frozenset()
    """The methods whose results `result_attributes` and `session_attributes` read."""

    def __init__(self, role: Literal["client", "server"]) -> None:
        self.role = role

    def span_name(self, method: str, params: Any) -> str:
        """The span's name: ``{method} {target}`` where the method has a low-cardinality
        target (a tool's or prompt's name), else the method."""
        return method

    def attributes(self, method: str, params: Any) -> Attributes:
        """Attributes read from a message's method and params (beyond the method's)."""
        return {}

    def result_attributes(self, method: str, result: Any) -> Attributes:
        """Attributes read from a result (parsed JSON, or the model a handler returned:
        read it with `field`), e.g. ``error.type`` for a tool result that reports an
        error."""
        return {}

    def session_attributes(self, method: str, result: Any) -> Attributes:
        """Attributes a result settles for the rest of the connection (the negotiated
        protocol version of ``initialize``); they go on every later span."""
        return {}

    def info_attributes(self, info: Any) -> Attributes:
        """Attributes of the transport's per-message ``info`` (HTTP request headers)."""
        return {}

    def stream_key(self, method: str, params: Any) -> Hashable | None:
        """For a request whose progress arrives as notifications, the key those
        notifications name (MCP's ``progressToken``, ACP's ``sessionId``)."""
        return None

    def stream_chunk(self, method: str, params: Any) -> Hashable | None:
        """For a notification that reports progress of a request (a chunk of a streamed
        result), the `stream_key` of that request: it becomes an event on the
        request's span, not a span of its own. ``None`` for any other notification."""
        return None

    def stream_event(self, method: str, item: Any) -> tuple[str, Attributes]:
        """The name and attributes of the span event for one result of a streaming
        request (``item`` as parsed JSON)."""
        return f"{method} result", {}

    def describe(self, method: str, params: Any) -> tuple[str, Attributes]:
        """The span name and attributes of a message (`span_name` and `attributes`)."""
        attributes = self.attributes(method, params)
        attributes[self.method_attribute] = method
        return self.span_name(method, params), attributes


def instrument(
    conventions: TelemetryConventions | None,
    stream: Any = None,
    *,
    network_transport: str | None = None,
) -> TelemetryHook | None:
    """The telemetry hook of one peer, or ``None`` when there is nothing to record:
    no conventions, or ``opentelemetry-api`` not installed. ``network_transport``
    (``pipe``, ``tcp``) is told by ``stream``'s kind unless given."""
    global _otel_installed
    if conventions is None:
        return None
    if _otel_installed is None:
        try:
            _otel_installed = importlib.util.find_spec("opentelemetry") is not None
        except (ImportError, ValueError):
            _otel_installed = False
    if not _otel_installed:
        return None
    return TelemetryHook(conventions, stream, network_transport)


class TelemetryHook:
    """One peer's telemetry, loaded the first time it has anything to record.

    Nobody can have configured a tracer or meter provider before ``opentelemetry.trace``
    was imported, so until then `live` is one lookup in ``sys.modules`` and nothing of
    OpenTelemetry is imported (importing it scans the installed distributions' entry
    points: tens of milliseconds at a command's start). After that, the instrumentation
    (``_telemetry_otel.PeerTelemetry``) answers, and every other attribute is its own:
    use them only once `live` said ``True``.
    """

    __slots__ = ("_impl", "_providers", "conventions", "message_stream", "network_transport")

    def __init__(
        self, conventions: TelemetryConventions, stream: Any, network_transport: str | None
    ) -> None:
        self.conventions = conventions
        self.message_stream = stream
        self.network_transport = network_transport
        self._impl: Any = None
        self._providers: Any = None

    def live(self) -> bool:
        """Whether anything is to be recorded now (a provider is set)."""
        providers = self._providers
        if providers is None:
            if "opentelemetry.trace" not in _modules:
                return False
            global _otel_module
            if _otel_module is None:
                from . import _telemetry_otel

                _otel_module = _telemetry_otel
            self._impl = _otel_module.PeerTelemetry(
                self.conventions, self.message_stream, self.network_transport
            )
            providers = self._providers = _otel_module.providers
        return providers.on or providers.check()  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._impl, name)


def as_json(value: Any) -> Any:
    """``value`` as parsed JSON, with the aliases and omissions the wire encoding uses."""
    if value is None or type(value) is dict or type(value) is list:
        return value
    if isinstance(value, pydantic.BaseModel) or not isinstance(value, (str, int, float)):
        return pydantic_core.to_jsonable_python(value, by_alias=True, exclude_none=True)
    return value


def field(params: Any, name: str) -> Any:
    """``params[name]`` when params is a JSON object, the field of that wire name when
    it is a pydantic model (a result as a handler returned it), else ``None``."""
    if isinstance(params, Mapping):
        return params.get(name)
    if isinstance(params, pydantic.BaseModel):
        attribute = _wire_names(type(params)).get(name)
        return None if attribute is None else getattr(params, attribute, None)
    return None


_WIRE_NAMES: dict[type[pydantic.BaseModel], dict[str, str]] = {}


def _wire_names(model: type[pydantic.BaseModel]) -> dict[str, str]:
    """A model's attribute names by their wire names (aliases), once per class."""
    names = _WIRE_NAMES.get(model)
    if names is None:
        names = {info.alias or name: name for name, info in model.model_fields.items()}
        if len(_WIRE_NAMES) < 1024:
            _WIRE_NAMES[model] = names
    return names


def text_field(params: Any, name: str) -> str | None:
    """``params[name]`` when it is a string, else ``None``."""
    value = field(params, name)
    return value if isinstance(value, str) else None
