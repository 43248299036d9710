"""OpenTelemetry spans on the trace page: plain records, and their section of the page.

`span_record` turns a finished SDK span into a plain JSON object (the page's only input);
`collect_spans` gathers them from the global SDK tracer provider while a recording runs
(nothing here imports ``opentelemetry`` unless it was imported already: without a provider
configured there is nothing to collect); `traceparent_span` reads the span a wire message
names in ``params._meta.traceparent`` (MCP and ACP carry the trace context there; A2A
carries it in HTTP headers, which a recording does not keep); `spans_html` draws the
spans as a tree whose rows link to the messages that name them, and back.

Rules:

1. A span record has ``name``, ``kind`` (``client``, ``server``, ``internal``...),
   ``trace_id`` (32 hex digits), ``span_id`` and ``parent_id`` (16 hex digits, or
   ``None`` for a root), ``start`` and ``end`` (seconds since the epoch), ``protocol``
   (``rpcweave.protocol``, or ``None``), ``error`` (the status description of a failed
   span, or ``None``), ``attributes`` and ``events`` (their names).
2. A message names the span that sent it: the trace context a CLIENT span injects is its
   own, so the receiving SERVER span is that span's child.
3. Text from the wire or from a span never reaches the page unescaped.
"""

from __future__ import annotations

import html
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "SPANS_STYLE",
    "SpanCollector",
    "collect_spans",
    "read_spans",
    "span_record",
    "spans_html",
    "traceparent_span",
    "write_spans",
]

_MAX_EVENTS = 20  # event names shown per span (a long stream has thousands)
_TRACEPARENT = re.compile(r"^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")

SPANS_STYLE = """
.spans{padding:0 24px 24px}.spans h2{font-size:16px;margin:0 0 8px}
.spans ul{list-style:none;margin:0;padding-left:18px}.spans>ul{padding-left:0}
.span{background:#fff;border:1px solid #e2e8f0;border-radius:6px;margin:0 0 6px;
padding:4px 10px}.span:target{outline:2px solid #1d4ed8}
.span .ids{color:#64748b;font:11px ui-monospace,SFMono-Regular,Menlo,monospace}
.span.failed{border-left:4px solid #dc2626}.span .kind{color:#475569}
.span-link{font-weight:400;font-size:12px;margin-left:6px}
"""


def span_record(span: Any) -> dict[str, Any]:
    """A finished OpenTelemetry SDK span (``ReadableSpan``) as a plain record (rule 1)."""
    context = span.context
    parent = span.parent
    attributes = {str(key): value for key, value in (span.attributes or {}).items()}
    failed = span.status.status_code.name == "ERROR"
    return {
        "name": span.name,
        "kind": span.kind.name.lower(),
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_id": f"{parent.span_id:016x}" if parent is not None else None,
        "start": span.start_time / 1e9,
        "end": (span.end_time or span.start_time) / 1e9,
        "protocol": attributes.get("rpcweave.protocol"),
        "error": (span.status.description or "error") if failed else None,
        "attributes": attributes,
        "events": [event.name for event in span.events],
    }


class SpanCollector:
    """A span processor keeping the records (`span_record`) of the spans that end while
    it is open, up to ``limit`` of them (the SDK has no way to remove a processor: a
    closed collector stays registered and does nothing)."""

    def __init__(self, limit: int = 10_000) -> None:
        self.records: list[dict[str, Any]] = []
        self.limit = limit
        self.open = True

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        """Nothing to do when a span starts."""

    def _on_ending(self, span: Any) -> None:
        pass

    def on_end(self, span: Any) -> None:
        """Keep the record of a finished span."""
        if self.open and len(self.records) < self.limit:
            self.records.append(span_record(span))

    def close(self) -> list[dict[str, Any]]:
        """Stop collecting; the records kept."""
        self.open = False
        return self.records

    def shutdown(self) -> None:
        """The provider shuts down: stop collecting."""
        self.open = False

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Nothing is buffered."""
        return True


def collect_spans() -> SpanCollector | None:
    """A collector added to the global tracer provider when it is the SDK's (it can take
    span processors), else ``None``."""
    if "opentelemetry.trace" not in sys.modules:
        return None  # nobody configured a provider: no import at a command's start
    from opentelemetry import trace

    add = getattr(trace.get_tracer_provider(), "add_span_processor", None)
    if add is None:
        return None
    collector = SpanCollector()
    add(collector)
    return collector


def write_spans(path: Path, spans: Iterable[Mapping[str, Any]]) -> None:
    """Write span records as JSON Lines."""
    lines = [json.dumps(dict(span), ensure_ascii=False, default=str) for span in spans]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def read_spans(path: Path) -> list[dict[str, Any]]:
    """The span records of a JSON Lines file (`write_spans`)."""
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def traceparent_span(message: Any) -> str | None:
    """The span id a message's ``params._meta.traceparent`` names, or ``None`` (rule 2)."""
    if not isinstance(message, dict):
        return None
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    value = meta.get("traceparent") if isinstance(meta, dict) else None
    if not isinstance(value, str):
        return None
    match = _TRACEPARENT.match(value.strip().lower())
    return match.group(2) if match else None


def _span_row(span: Mapping[str, Any], messages: Sequence[int]) -> str:
    span_id = str(span.get("span_id", ""))
    millis = (float(span.get("end") or 0.0) - float(span.get("start") or 0.0)) * 1000
    protocol = span.get("protocol") or "-"
    error = span.get("error")
    parts = [
        f'<div class="span{" failed" if error else ""}" id="span-{html.escape(span_id)}">',
        f"<strong>{html.escape(str(span.get('name', '?')))}</strong> ",
        f'<span class="kind">[{html.escape(str(span.get("kind", "?")))}]</span> ',
        f"{millis:.1f} ms · {html.escape(str(protocol))}",
    ]
    if error:
        parts.append(f" · <strong>ERROR</strong> {html.escape(str(error))}")
    for index in messages:
        parts.append(f' <a class="span-link" href="#m{index}">message {index}</a>')
    parts.append(
        f'<div class="ids">trace {html.escape(str(span.get("trace_id", "")))}'
        f" · span {html.escape(span_id)}"
        f" · parent {html.escape(str(span.get('parent_id') or '-'))}</div>"
    )
    events = [str(name) for name in span.get("events") or []]
    if events:
        shown = ", ".join(events[:_MAX_EVENTS])
        if len(events) > _MAX_EVENTS:
            shown += f", … ({len(events) - _MAX_EVENTS} more)"
        parts.append(f'<div class="ids">events: {html.escape(shown)}</div>')
    parts.append("</div>")
    return "".join(parts)


def spans_html(spans: Sequence[Mapping[str, Any]], messages: Mapping[str, Sequence[int]]) -> str:
    """The spans as a tree (children by start time under their parent; a span whose
    parent is not recorded is a root), each row linking to the messages in ``messages``
    (span id → message numbers) that name it."""
    ids = {str(span.get("span_id")) for span in spans}
    children: dict[str | None, list[Mapping[str, Any]]] = {}
    for span in spans:
        parent = span.get("parent_id")
        key = str(parent) if parent is not None and str(parent) in ids else None
        children.setdefault(key, []).append(span)
    out: list[str] = []
    drawn: set[str] = set()  # each span once, whatever a malformed record's parent says

    def draw(level: list[Mapping[str, Any]]) -> None:
        out.append("<ul>")
        for span in sorted(level, key=lambda s: float(s.get("start") or 0.0)):
            span_id = str(span.get("span_id"))
            if span_id in drawn:
                continue
            drawn.add(span_id)
            out.append("<li>" + _span_row(span, messages.get(span_id, ())))
            below = children.get(span_id)
            if below:
                draw(below)
            out.append("</li>")
        out.append("</ul>")

    traces = {str(span.get("trace_id")) for span in spans}
    out.append(
        f'<section class="spans" id="spans"><h2>OpenTelemetry: {len(spans)} spans in '
        f"{len(traces)} trace(s)</h2>"
    )
    draw(children.get(None, []))
    out.append("</section>")
    return "".join(out)
