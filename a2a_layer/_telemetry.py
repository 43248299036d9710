"""A2A's OpenTelemetry conventions, shaped like the MCP semantic conventions.

Spans are named by the method; sending a message (``SendMessage``,
``SendStreamingMessage`` and their 0.3 names) is a GenAI ``invoke_agent`` operation;
``a2a.task.id`` and ``a2a.context.id`` name the task. Each call is one HTTP request,
so the trace context travels in its HTTP headers (``traceparent``, ``tracestate``);
each event of a stream is an event on the call's span.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from jsonrpc_core.telemetry import (
    Attributes,
    TelemetryConventions,
    as_json,
    field,
    instrument,
    text_field,
)

__all__ = [
    "A2A_CLIENT_TELEMETRY",
    "A2A_SERVER_TELEMETRY",
    "A2aConventions",
    "rest_client_telemetry",
    "traced_grpc_operation",
    "traced_rest_operation",
]

_SENDING = frozenset({"SendMessage", "SendStreamingMessage", "message/send", "message/stream"})
# Methods whose params name the task as ``id`` (else ``taskId``, as the push configs do).
_TASK_AS_ID = frozenset(
    {
        "GetTask",
        "CancelTask",
        "SubscribeToTask",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
    }
)
_EVENT_KINDS = ("task", "message", "statusUpdate", "artifactUpdate")
_V03_KINDS = {"status-update": "statusUpdate", "artifact-update": "artifactUpdate"}


def _task_attributes(task_id: Any, context_id: Any) -> Attributes:
    attributes: Attributes = {}
    if isinstance(task_id, str):
        attributes["a2a.task.id"] = task_id
    if isinstance(context_id, str):
        attributes["a2a.context.id"] = context_id
    return attributes


def _of_task_or_message(result: Any) -> Attributes:
    """The task's ids in a SendMessage result, a stream event or a 0.3 result."""
    for kind in _EVENT_KINDS:
        inner = field(result, kind)
        if isinstance(inner, dict):
            task_id = field(inner, "id") if kind == "task" else field(inner, "taskId")
            return _task_attributes(task_id, field(inner, "contextId"))
    kind = field(result, "kind")  # 0.3: the object itself, told by its kind
    task_id = field(result, "id") if kind == "task" else field(result, "taskId")
    return _task_attributes(task_id, field(result, "contextId"))


class A2aConventions(TelemetryConventions):
    """Span names and attributes of A2A calls (client or server end)."""

    protocol = "a2a"
    carrier = "headers"
    method_attribute = "a2a.method.name"
    result_methods = _SENDING

    def attributes(self, method: str, params: Any) -> Attributes:
        if method in _SENDING:
            message = field(params, "message")
            attributes = _task_attributes(field(message, "taskId"), field(message, "contextId"))
            attributes["gen_ai.operation.name"] = "invoke_agent"
            return attributes
        if method in _TASK_AS_ID:
            return _task_attributes(field(params, "id"), None)
        return _task_attributes(field(params, "taskId"), field(params, "contextId"))

    def result_attributes(self, method: str, result: Any) -> Attributes:
        return _of_task_or_message(as_json(result))

    def info_attributes(self, info: Any) -> Attributes:
        headers = getattr(info, "headers", None)
        version = headers.get("a2a-version") if isinstance(headers, dict) else None
        return {"a2a.protocol.version": version if isinstance(version, str) else "0.3"}

    def stream_event(self, method: str, item: Any) -> tuple[str, Attributes]:
        kind = next((k for k in _EVENT_KINDS if isinstance(field(item, k), dict)), None)
        if kind is None:
            raw = text_field(item, "kind")
            kind = _V03_KINDS.get(raw, raw) if raw is not None else "unknown"
        attributes: Attributes = {"a2a.event.kind": kind, **_of_task_or_message(item)}
        status = field(field(item, kind), "status") or field(item, "status")
        state = text_field(status, "state")
        if state is not None:
            attributes["a2a.task.state"] = state
        return "a2a.stream.event", attributes


A2A_CLIENT_TELEMETRY = A2aConventions("client")
"""The conventions of an A2A client."""
A2A_SERVER_TELEMETRY = A2aConventions("server")
"""The conventions of an A2A server's peer."""


# -- the HTTP+JSON binding, which does not go through a Peer ---------------------------

_UNSET: Any = object()
_rest_hooks: dict[str, Any] = {}


def _rest_hook(conventions: A2aConventions) -> Any:
    hook = _rest_hooks.get(conventions.role, _UNSET)
    if hook is _UNSET:
        hook = _rest_hooks[conventions.role] = instrument(conventions, network_transport="tcp")
    return hook


def rest_client_telemetry() -> Any:
    """The telemetry hook of the HTTP+JSON client, or ``None`` (no ``opentelemetry``)."""
    return _rest_hook(A2A_CLIENT_TELEMETRY)


async def traced_rest_operation(
    method: str,
    params: Any,
    info: Any,
    call: Callable[[], Awaitable[Any]],
    streaming: bool,
) -> Any:
    """Run one HTTP+JSON operation (``call()``) inside its SERVER span, the trace context
    read from the request headers; a streaming operation's span lasts until its stream
    ends, each event an event on it."""
    telemetry = _rest_hook(A2A_SERVER_TELEMETRY)
    if telemetry is None or not telemetry.live():
        return await call()
    if not streaming:
        return await telemetry.serve(method, params, None, info, call, returns_result=True)
    operation = telemetry.start_server(method, params, None, info)
    try:
        events = await call()
    except BaseException as exc:
        operation.fail_with(exc)
        operation.end()
        raise
    return _traced_events(telemetry, operation, method, events)


class _GrpcCallInfo:
    """What the server span reads of a gRPC call: its metadata, as headers."""

    __slots__ = ("headers",)

    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers


async def traced_grpc_operation(
    method: str,
    params: Any,
    headers: dict[str, str],
    call: Callable[[], Awaitable[Any]],
    streaming: bool,
) -> Any:
    """Run one gRPC operation (``call()``) inside its SERVER span, the trace context read
    from the call's metadata (``traceparent``/``tracestate`` keys, as in HTTP headers);
    ``params`` is the request's model, dumped to JSON only when a span is recorded."""
    telemetry = _rest_hook(A2A_SERVER_TELEMETRY)
    if telemetry is None or not telemetry.live():
        return await call()
    params_json = params.model_dump(mode="json", by_alias=True, exclude_none=True)
    return await traced_rest_operation(method, params_json, _GrpcCallInfo(headers), call, streaming)


async def _traced_events(
    telemetry: Any, operation: Any, method: str, events: AsyncIterator[Any]
) -> AsyncIterator[Any]:
    try:
        async for event in events:
            telemetry.stream_event(operation, method, event)
            yield event
    except BaseException as exc:
        if not isinstance(exc, GeneratorExit):
            operation.fail_with(exc)
        raise
    finally:
        operation.end()
