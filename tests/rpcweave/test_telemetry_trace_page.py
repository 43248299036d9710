"""OpenTelemetry spans on the trace page (``--trace``): the spans as a tree (name, kind,
duration, protocol, trace and span ids), the MCP and ACP messages that carry a
``traceparent`` linked to the span that sent them and back, still offline; span records
from the SDK and their collection while a recording is open.

Tests the private units `rpcweave._trace_html` and `_trace_spans` on purpose: trace
drawing is the CLI's own, with no library API.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind

from rpcweave._trace_html import trace_to_html, write_trace_views
from rpcweave._trace_spans import SpanCollector, read_spans, traceparent_span

TRACE = "0af7651916cd43dd8448eb211c80319c"
ROOT, CALL, SERVED = "1111111111111111", "2222222222222222", "3333333333333333"


def span(name: str, kind: str, span_id: str, parent: str | None, start: float, end: float,
         protocol: str | None = "mcp", error: str | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "name": name,
        "kind": kind,
        "trace_id": TRACE,
        "span_id": span_id,
        "parent_id": parent,
        "start": start,
        "end": end,
        "protocol": protocol,
        "error": error,
        "attributes": {},
        "events": ["notifications/progress"] if kind == "server" else [],
    }


SPANS = [
    span("tools/call <lookup>", "server", SERVED, CALL, 10.002, 10.010),
    span("editor", "internal", ROOT, None, 10.0, 10.020, protocol=None),
    span("tools/call <lookup>", "client", CALL, ROOT, 10.001, 10.013, error="-32602"),
]


def record(t: float, sender: str, receiver: str, message: Any) -> dict[str, Any]:
    return {"time": t, "direction": "send", "transport": "memory", "from": sender,
            "to": receiver, "message": message}  # fmt: skip


RECORDING = [
    record(
        10.001,
        "host",
        "server",
        {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "lookup", "_meta": {"traceparent": f"00-{TRACE}-{CALL}-01"}},
        },
    ),
    record(10.003, "server", "host", {"jsonrpc": "2.0", "method": "notifications/progress"}),
    record(10.012, "server", "host", {"jsonrpc": "2.0", "id": 4, "result": {"content": []}}),
    record(
        10.014,
        "host",
        "server",
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "ping",
            "params": {"_meta": {"traceparent": f"00-{TRACE}-{'9' * 16}-01"}},
        },
    ),
]


def row(page: str, index: int) -> str:
    """The list item of message ``index``."""
    found = re.search(rf'<li id="m{index}".*?</li>', page, re.S)
    assert found, index
    return found.group(0)


def test_the_page_shows_the_spans_as_a_tree_linked_to_their_messages() -> None:
    page = trace_to_html(RECORDING, spans=SPANS)
    # Each span: name (escaped), kind, duration, protocol, trace and span ids.
    assert 'id="spans"' in page and "3 spans in 1 trace(s)" in page
    assert "<strong>tools/call &lt;lookup&gt;</strong>" in page and "<lookup>" not in page
    call = re.search(rf'<div class="span failed" id="span-{CALL}">.*?</div></div>', page, re.S)
    assert call, page
    assert "[client]</span> 12.0 ms · mcp" in call.group(0)
    assert "ERROR</strong> -32602" in call.group(0)
    assert f"trace {TRACE} · span {CALL} · parent {ROOT}" in call.group(0)
    # The tree: the root, its CLIENT span under it, and the SERVER span under that.
    order = [page.index(f'id="span-{span_id}"') for span_id in (ROOT, CALL, SERVED)]
    assert order == sorted(order)
    nested = rf'id="span-{ROOT}".*?<ul><li><div class="span failed" id="span-{CALL}".*?<ul><li>'
    assert re.search(nested + rf'<div class="span" id="span-{SERVED}"', page, re.S)
    assert "events: notifications/progress" in page
    # The request names its span in _meta.traceparent, and its answer is linked too.
    assert f'href="#span-{CALL}"' in row(page, 1)
    assert "span-link" not in row(page, 2)  # a notification without a trace context
    assert f'href="#span-{CALL}"' in row(page, 3)
    assert "span-link" not in row(page, 4)  # names a span that was not recorded
    # ... and the span links back to both messages.
    assert 'href="#m1"' in call.group(0) and 'href="#m3"' in call.group(0)
    # Still offline: no script, nothing loaded from anywhere.
    assert "<script" not in page
    assert not re.search(r'(src|href)="(https?:)?//', page)


def test_a_page_without_spans_is_unchanged() -> None:
    assert trace_to_html(RECORDING) == trace_to_html(RECORDING, spans=[])
    assert 'id="spans"' not in trace_to_html(RECORDING)
    assert "span-link" not in trace_to_html(RECORDING)


def test_traceparent_span_reads_only_a_valid_w3c_traceparent() -> None:
    assert traceparent_span(RECORDING[0]["message"]) == CALL
    for meta in ({}, {"traceparent": 7}, {"traceparent": "00-xyz-abc-01"}, "not a dict"):
        assert traceparent_span({"method": "m", "params": {"_meta": meta}}) is None
    assert traceparent_span({"method": "m", "params": [1]}) is None


def test_write_trace_views_saves_the_spans_beside_the_page(tmp_path: Path) -> None:
    recording = tmp_path / "run.jsonl"
    recording.write_text("", encoding="utf-8")
    _, page = write_trace_views(recording, spans=SPANS)
    assert read_spans(tmp_path / "run.spans.jsonl") == SPANS
    assert f'id="span-{SERVED}"' in page.read_text(encoding="utf-8")


def test_the_collector_keeps_records_of_sdk_spans_until_closed() -> None:
    provider = TracerProvider()
    collector = SpanCollector()
    provider.add_span_processor(collector)  # type: ignore[arg-type]
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("outer") as outer:
        with tracer.start_as_current_span(
            "tools/call x", kind=SpanKind.CLIENT, attributes={"rpcweave.protocol": "mcp"}
        ) as inner:
            inner.add_event("notifications/progress")
    records = collector.close()
    with tracer.start_as_current_span("after"):
        pass
    assert [r["name"] for r in records] == ["tools/call x", "outer"]
    inner_record, outer_record = records
    context = outer.get_span_context()
    assert inner_record["kind"] == "client" and inner_record["protocol"] == "mcp"
    assert inner_record["trace_id"] == f"{context.trace_id:032x}"
    assert inner_record["parent_id"] == f"{context.span_id:016x}" == outer_record["span_id"]
    assert inner_record["span_id"] == f"{inner.get_span_context().span_id:016x}"
    assert inner_record["events"] == ["notifications/progress"]
    assert outer_record["parent_id"] is None and outer_record["error"] is None
    assert 0 <= inner_record["end"] - inner_record["start"] < 60
    provider.shutdown()
