"""Spans, metrics and trace-context propagation through ``opentelemetry-api``.

Imported only by `_telemetry.instrument`, and only when ``opentelemetry`` is importable.

Rules this module keeps:

1. Until a tracer or meter provider is set (globally, or with `use_providers`), a peer
   records nothing and propagates nothing: `PeerTelemetry.live` is one module-attribute
   test per message. Once a global provider is set it stays set (the API allows one), so
   the answer is then cached for good.
2. A SERVER span's parent is only what the message carries (``params._meta`` or the
   HTTP headers), never the context of the task that happens to run the handler: a
   reused worker task must not chain unrelated requests.
3. Every span started here is ended in a ``finally``: a handler whose peer disconnects,
   or whose task is cancelled, still ends its span.
4. A streamed result's chunks (MCP progress, ACP ``session/update``, A2A stream events)
   are events on the request's span, not spans of their own.
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Hashable, Mapping
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ._errors import JsonRpcError
from ._telemetry import Attributes, TelemetryConventions, as_json

__all__ = ["Operation", "PeerTelemetry", "providers", "use_providers"]

_SCOPE = "rpcweave"
_CLIENT = SpanKind.CLIENT
_SERVER = SpanKind.SERVER
# Semantic-conventions advice for the operation and session duration histograms (s).
_DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
_SESSION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


def _high_cardinality(key: str) -> bool:
    # Ids and URIs name one request, session, task or resource: span attributes only;
    # the protocol is in the metric's name.
    return key.endswith((".id", ".uri")) or key == "rpcweave.protocol"


class _Providers:
    """Where spans and measurements go: the global providers, or those a test set."""

    def __init__(self) -> None:
        self.tracer_provider: Any = None
        self.meter_provider: Any = None
        self.on = False
        self.generation = 0
        self._tracer: trace.Tracer | None = None
        self._histograms: dict[str, metrics.Histogram] = {}

    def check(self) -> bool:
        """Whether any provider is set now (and from now on)."""
        if self.tracer_provider is None and self.meter_provider is None:
            if _fast_globals:
                # The API's own globals: two attribute reads, where
                # `get_tracer_provider()` also consults the environment on every call.
                if _trace_api._TRACER_PROVIDER is None and _metrics_api._METER_PROVIDER is None:
                    return False
            elif not _globals_set():
                return False
        self.on = True
        return True

    def tracer(self) -> trace.Tracer:
        tracer = self._tracer
        if tracer is None:
            provider = self.tracer_provider or trace.get_tracer_provider()
            tracer = self._tracer = provider.get_tracer(_SCOPE)
        return tracer

    def histogram(self, name: str) -> metrics.Histogram:
        histogram = self._histograms.get(name)
        if histogram is None:
            provider = self.meter_provider or metrics.get_meter_provider()
            session = name.endswith("session.duration")
            what = "session" if session else "request or notification"
            histogram = self._histograms[name] = provider.get_meter(_SCOPE).create_histogram(
                name,
                unit="s",
                description=f"Duration of the {what}",
                explicit_bucket_boundaries_advisory=(
                    _SESSION_BUCKETS if session else _DURATION_BUCKETS
                ),
            )
        return histogram

    def use(self, tracer_provider: Any, meter_provider: Any) -> None:
        self.tracer_provider = tracer_provider
        self.meter_provider = meter_provider
        self.on = False
        self.generation += 1
        self._tracer = None
        self._histograms = {}


_providers = _Providers()
providers = _providers
"""The providers every peer records through (`TelemetryHook.live` reads them)."""

_trace_api: Any = trace
_metrics_api: Any = getattr(metrics, "_internal", None)
_fast_globals = hasattr(trace, "_TRACER_PROVIDER") and hasattr(_metrics_api, "_METER_PROVIDER")


def _globals_set() -> bool:
    """Whether a global provider is set, the public (slower) way: for an API release
    that keeps its globals elsewhere."""
    if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        return True
    return not type(metrics.get_meter_provider()).__name__.startswith("_Proxy")


def use_providers(tracer_provider: Any = None, meter_provider: Any = None) -> None:
    """Record through these providers instead of the global ones (``None`` for both:
    back to the global providers). For tests, which cannot set a global twice."""
    _providers.use(tracer_provider, meter_provider)


def _with_context(params: Any, carrier: dict[str, str]) -> Any:
    """``params`` with the trace context in ``_meta`` (a copy; list params carry none)."""
    if not carrier:
        return params
    if params is None:
        return {"_meta": carrier}
    if not isinstance(params, dict):
        return params
    meta = params.get("_meta")
    return {**params, "_meta": {**meta, **carrier} if isinstance(meta, dict) else carrier}


def _network_transport(stream: Any) -> str | None:
    """``pipe`` for a stream over stdio, ``tcp`` over HTTP, ``None`` in memory."""
    for _ in range(4):  # through tapping and hooking wrappers
        module = type(stream).__module__
        if "_http" in module:
            return "tcp"
        if module.endswith(("_stdio", "_bytestream")):
            return "pipe"
        inner = getattr(stream, "inner", None)
        if inner is None:
            return None
        stream = inner
    return None


def _error_type(exc: BaseException) -> tuple[str, str | None]:
    """``error.type`` and ``rpc.response.status_code`` of a failed operation."""
    if isinstance(exc, JsonRpcError) and exc.received:
        return str(exc.code), str(exc.code)
    return type(exc).__qualname__, None


class Operation:
    """One span (a request or notification, sent or handled) and its duration metric."""

    __slots__ = ("attributes", "histogram", "span", "started")

    def __init__(self, span: Span, histogram: metrics.Histogram, attributes: Attributes) -> None:
        self.span = span
        self.histogram = histogram
        self.attributes = attributes
        self.started = time.perf_counter()

    def fail(self, error_type: str, status_code: str | None, description: str) -> None:
        self.attributes["error.type"] = error_type
        self.span.set_attribute("error.type", error_type)
        if status_code is not None:
            self.attributes["rpc.response.status_code"] = status_code
            self.span.set_attribute("rpc.response.status_code", status_code)
        self.span.set_status(Status(StatusCode.ERROR, description))

    def fail_with(self, exc: BaseException) -> None:
        error_type, status_code = _error_type(exc)
        self.fail(error_type, status_code, str(exc) or error_type)

    def fail_response(self, error: JsonRpcError) -> None:
        code = str(error.code)
        self.fail(code, code, error.message)

    def add(self, attributes: Attributes) -> None:
        if attributes:
            self.span.set_attributes(attributes)
            error_type = attributes.get("error.type")
            if isinstance(error_type, str):
                self.attributes["error.type"] = error_type
                self.span.set_status(Status(StatusCode.ERROR, error_type))

    def event(self, name: str, attributes: Attributes) -> None:
        self.span.add_event(name, attributes)

    def end(self) -> None:
        self.span.end()
        measured = {k: v for k, v in self.attributes.items() if not _high_cardinality(k)}
        self.histogram.record(time.perf_counter() - self.started, measured)


class PeerTelemetry:
    """The telemetry of one connection, as one protocol's conventions describe it."""

    def __init__(
        self, conventions: TelemetryConventions, stream: Any, transport: str | None = None
    ) -> None:
        self.conventions = conventions
        self.message_stream = stream
        self.session: Attributes = {"rpcweave.protocol": conventions.protocol}
        transport = transport or _network_transport(stream)
        if transport is not None:
            self.session["network.transport"] = transport
        prefix = conventions.protocol
        self.client_metric = f"{prefix}.client.operation.duration"
        self.server_metric = f"{prefix}.server.operation.duration"
        self.session_metric = f"{prefix}.{conventions.role}.session.duration"
        # Requests in flight whose progress arrives as notifications, by stream key.
        self.streams: dict[Hashable, Operation] = {}

    def live(self) -> bool:
        """Whether anything is recorded (a provider is set)."""
        providers = _providers
        return providers.on or providers.check()

    # -- outgoing ----------------------------------------------------------------

    def start_client(
        self, method: str, params: Any, request_id: Any
    ) -> tuple[Operation, Any, dict[str, str]]:
        """Start the CLIENT span of a request (``request_id``) or notification (``None``)
        as a child of the current span: the operation, the params to send (with the
        trace context in ``_meta`` for a meta carrier) and the context as headers."""
        conventions = self.conventions
        params = as_json(params)
        name, attributes = conventions.describe(method, params)
        attributes.update(self.session)
        if request_id is not None:
            attributes["jsonrpc.request.id"] = str(request_id)
        session_key = conventions.session_attribute
        if session_key is not None and session_key not in attributes:
            session_id = getattr(self.message_stream, "session_id", None)
            if isinstance(session_id, str):
                attributes[session_key] = session_id
        span = _providers.tracer().start_span(name, kind=_CLIENT, attributes=attributes)
        operation = Operation(span, _providers.histogram(self.client_metric), attributes)
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(span))
        if conventions.carrier == "meta":
            params = _with_context(params, carrier)
        if request_id is not None:
            key = conventions.stream_key(method, params)
            if key is not None:
                self.streams[key] = operation
        return operation, params, carrier

    def finish_client(self, operation: Operation, method: str, params: Any) -> None:
        """End a CLIENT span (after `start_client`; failures are recorded before)."""
        key = self.conventions.stream_key(method, params)
        if key is not None and self.streams.get(key) is operation:
            del self.streams[key]
        operation.end()

    def succeeded(self, operation: Operation, method: str, result: Any) -> None:
        """Record what a result tells (and what it settles for the connection)."""
        conventions = self.conventions
        if method in conventions.result_methods:
            operation.add(conventions.result_attributes(method, result))
            self.session.update(conventions.session_attributes(method, result))

    async def call(
        self,
        method: str,
        params: Any,
        request_id: Any,
        send: Callable[[Any, dict[str, str]], Awaitable[Any]],
    ) -> Any:
        """Send a request through ``send(params, headers)`` inside its CLIENT span
        (``headers``: the trace context, for a transport whose conventions carry it
        in HTTP headers)."""
        operation, params, headers = self.start_client(method, params, request_id)
        try:
            result = await send(params, headers)
        except BaseException as exc:
            operation.fail_with(exc)
            raise
        else:
            self.succeeded(operation, method, result)
            return result
        finally:
            self.finish_client(operation, method, params)

    async def stream(
        self,
        method: str,
        params: Any,
        request_id: Any,
        open_: Callable[[Any, dict[str, str]], AsyncIterator[Any]],
    ) -> AsyncGenerator[Any, None]:
        """Send a request answered with a stream of results inside its CLIENT span;
        each result is an event on it."""
        operation, params, headers = self.start_client(method, params, request_id)
        results = open_(params, headers)
        try:
            async for item in results:
                self.stream_event(operation, method, item)
                yield item
        except BaseException as exc:
            if not isinstance(exc, GeneratorExit):
                operation.fail_with(exc)
            raise
        finally:
            try:
                aclose = getattr(results, "aclose", None)
                if aclose is not None:
                    await aclose()
            finally:
                self.finish_client(operation, method, params)

    def stream_event(self, operation: Operation, method: str, item: Any) -> None:
        """One chunk of a streamed result, as an event on its request's span."""
        name, attributes = self.conventions.stream_event(method, as_json(item))
        operation.event(name, attributes)

    async def notify(
        self, method: str, params: Any, send: Callable[[Any], Awaitable[None]]
    ) -> None:
        """Send a notification through ``send(params)``: inside its CLIENT span, or, for
        a chunk of a streamed result, as an event on the span of the handler sending it."""
        conventions = self.conventions
        if conventions.stream_chunk(method, params) is not None:
            span = trace.get_current_span()
            if span.is_recording():
                json_params = as_json(params)
                span.add_event(method, conventions.attributes(method, json_params))
            await send(params)
            return
        operation, params, _ = self.start_client(method, params, None)
        try:
            await send(params)
        except BaseException as exc:
            operation.fail_with(exc)
            raise
        finally:
            operation.end()

    # -- incoming ----------------------------------------------------------------

    def start_server(self, method: str, params: Any, request_id: Any, info: Any) -> Operation:
        """Start the SERVER span of a received request or notification; its parent is
        the context the message carries (rule 2)."""
        conventions = self.conventions
        if conventions.carrier == "meta":
            meta = params.get("_meta") if isinstance(params, dict) else None
            carrier = meta if isinstance(meta, Mapping) else {}
        else:
            headers = getattr(info, "headers", None)
            carrier = headers if isinstance(headers, Mapping) else {}
        parent = propagate.extract(carrier, context=Context())
        name, attributes = conventions.describe(method, params)
        attributes.update(self.session)
        if info is not None:
            attributes.update(conventions.info_attributes(info))
        if request_id is not None:
            attributes["jsonrpc.request.id"] = str(request_id)
        span = _providers.tracer().start_span(
            name, context=parent, kind=_SERVER, attributes=attributes
        )
        return Operation(span, _providers.histogram(self.server_metric), attributes)

    async def serve(
        self,
        method: str,
        params: Any,
        request_id: Any,
        info: Any,
        handle: Callable[[], Any],
        *,
        returns_result: bool = False,
    ) -> Any:
        """Run ``handle()`` (which answers the request) inside its SERVER span, the
        current span meanwhile; an `ErrorResponse` it returns is recorded as the error
        (``returns_result``: it returns the result itself, and raises its errors)."""
        operation = self.start_server(method, params, request_id, info)
        token = otel_context.attach(trace.set_span_in_context(operation.span))
        try:
            response = await handle()
        except JsonRpcError as raised:  # the answer (``returns_result``)
            operation.fail_response(raised)
            raise
        except BaseException as exc:
            operation.fail_with(exc)
            raise
        else:
            if returns_result:
                self.succeeded(operation, method, response)
                return response
            error = getattr(response, "error", None)
            if isinstance(error, JsonRpcError):
                operation.fail_response(error)
            elif response is not None and hasattr(response, "result"):
                self.succeeded(operation, method, response.result)
            return response
        finally:
            otel_context.detach(token)
            operation.end()

    def chunk_received(self, method: str, params: Any) -> bool:
        """Record a received notification that is a chunk of a request's streamed
        result as an event on that request's span; ``False`` if it is not one."""
        conventions = self.conventions
        key = conventions.stream_chunk(method, params)
        if key is None:
            return False
        operation = self.streams.get(key)
        if operation is not None:
            operation.event(method, conventions.attributes(method, params))
        return True

    def stream_item_sent(self, method: str, item: Any) -> None:
        """One result of a streaming handler, as an event on the handler's span."""
        span = trace.get_current_span()
        if span.is_recording():
            name, attributes = self.conventions.stream_event(method, as_json(item))
            span.add_event(name, attributes)

    def record_error(self, error: JsonRpcError) -> None:
        """A streaming handler's error, on its span (the current one)."""
        span = trace.get_current_span()
        code = str(error.code)
        span.set_attributes({"error.type": code, "rpc.response.status_code": code})
        span.set_status(Status(StatusCode.ERROR, error.message))

    def session_ended(self, started: float) -> None:
        """Record the connection's duration (``started``: its `time.perf_counter`)."""
        attributes = {k: v for k, v in self.session.items() if not _high_cardinality(k)}
        _providers.histogram(self.session_metric).record(time.perf_counter() - started, attributes)
