"""The CLI's trace renderer (private units of `rpcweave`, tested on purpose): JSON Lines
recordings to Mermaid and to a self-contained HTML page."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from rpcweave._trace_html import MERMAID_URL, trace_to_html, write_trace_views
from rpcweave._trace_render import read_trace, trace_events, trace_to_mermaid


def record(t: float, sender: str, receiver: str, message: Any, transport: str = "stdio") -> dict:
    return {
        "time": t,
        "direction": "send",
        "transport": transport,
        "from": sender,
        "to": receiver,
        "message": message,
    }


RECORDING = [
    record(1.0, "client", "server", {"jsonrpc": "2.0", "id": 1, "method": "initialize"}),
    record(1.1, "server", "client", {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}),
    record(1.2, "client", "server", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    record(
        1.3,
        "client",
        "server",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "x"}},
    ),
    record(1.4, "server", "client", {"jsonrpc": "2.0", "id": 7, "method": "ping"}),
    record(1.5, "client", "server", {"jsonrpc": "2.0", "id": 7, "result": {}}),
    record(
        1.6,
        "server",
        "client",
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "Invalid params; no <x>"}},
    ),
]

EXPECTED_MERMAID = """\
sequenceDiagram
    autonumber
    participant P0 as client
    participant P1 as server
    Note over P0,P1: stdio
    P0->>P1: initialize [1]
    P1-->>P0: result [1] initialize
    P0-)P1: notifications/initialized
    P0->>P1: tools/call [2]
    P1->>P0: ping [7]
    P0-->>P1: result [7] ping
    P1--xP0: error -32602 [2] tools/call: Invalid params#59; no #lt;x#gt;
"""


def test_mermaid_for_a_known_recording() -> None:
    assert trace_to_mermaid(RECORDING) == EXPECTED_MERMAID


def test_mermaid_title_labels_and_annotations() -> None:
    text = trace_to_mermaid(
        RECORDING[:4],
        title="A title: with # signs",
        labels={"client": "host (MCP client)"},
        annotate=lambda m: m.get("params", {}).get("name") if isinstance(m, dict) else None,
    )
    assert text.startswith('---\ntitle: "A title: with # signs"\n---\nsequenceDiagram\n')
    assert "participant P0 as host (MCP client)" in text
    assert "P0->>P1: tools/call [2] x" in text


def test_events_order_by_time_and_expand_batches() -> None:
    batch = record(
        2.0,
        "client",
        "server",
        [
            {"jsonrpc": "2.0", "id": 3, "method": "a"},
            {"jsonrpc": "2.0", "method": "b"},
        ],
    )
    answer = record(
        2.5,
        "server",
        "client",
        [{"jsonrpc": "2.0", "id": 3, "result": 1}],
    )
    events = trace_events([answer, batch])
    assert [(e.index, e.kind, e.label) for e in events] == [
        (1, "request", "a [3]"),
        (2, "notification", "b"),
        (3, "response", "result [3] a"),
    ]


def test_http_records_and_invalid_messages() -> None:
    records = [
        record(1, "client", "agent", {"http": "GET /.well-known/agent-card.json"}, "http"),
        record(2, "agent", "client", {"http": "200 OK", "status": 200, "body": {}}, "http"),
        record(3, "agent", "client", {"http": "404 Not Found", "status": 404}, "http"),
        record(4, "client", "agent", {"invalid": {"code": -32700, "message": "Parse error"}}),
        record(5, "client", "agent", "not an object"),
    ]
    kinds = [(e.kind, e.label) for e in trace_events(records)]
    assert kinds == [
        ("request", "GET /.well-known/agent-card.json"),
        ("response", "200 OK"),
        ("error", "404 Not Found"),
        ("error", "invalid message -32700: Parse error"),
        ("other", "str"),
    ]
    text = trace_to_mermaid(records)
    assert "P0->>P1: GET /.well-known/agent-card.json" in text
    assert "P1--xP0: 404 Not Found" in text
    assert "Note over P0,P1: stdio" in text and "Note over P0,P1: http" in text


def test_long_labels_are_shortened_and_newlines_removed() -> None:
    message = {"jsonrpc": "2.0", "method": "x" * 200 + "\nsecond line"}
    (event,) = trace_events([record(1, "a", "b", message)])
    assert len(event.label) <= 72 and "\n" not in event.label and event.label.endswith("…")


def test_html_shows_every_message_and_escapes_them() -> None:
    page = trace_to_html(RECORDING, title="My <trace>")
    assert page.startswith("<!doctype html>")
    assert "<title>My &lt;trace&gt;</title>" in page
    # Each message as pretty JSON, escaped; nothing from the wire unescaped.
    assert page.count('<li id="m') == 7
    assert "&quot;notifications/initialized&quot;" in page
    assert "Invalid params; no &lt;x&gt;" in page
    assert "<x>" not in page
    # The diagram twice: Mermaid source, and an SVG timeline that needs no script.
    assert '<pre id="mermaid-source">sequenceDiagram' in page
    svg = re.search(r"<svg.*?</svg>", page, re.S)
    assert svg is not None
    assert svg.group(0).count("<a href=") == 7
    assert 'stroke-dasharray="6 4"' in svg.group(0)  # responses are dashed
    assert "#dc2626" in svg.group(0)  # the error is red
    assert "7 messages between client, server over stdio" in page


def test_html_makes_no_request_unless_a_mermaid_url_is_given(tmp_path: Path) -> None:
    page = trace_to_html(RECORDING)
    assert "<script" not in page and MERMAID_URL not in page
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDING) + "\n", encoding="utf-8")
    written = write_trace_views(path)[1].read_text(encoding="utf-8")
    assert "<script" not in written and MERMAID_URL not in written
    opted_in = trace_to_html(RECORDING, mermaid_url=MERMAID_URL)
    assert "<script" in opted_in and json.dumps(MERMAID_URL) in opted_in


def test_html_of_an_empty_recording() -> None:
    page = trace_to_html([])
    assert "0 messages" in page and "<svg" in page


def test_read_trace_and_write_views(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDING) + "\n\n", encoding="utf-8")
    assert read_trace(path) == RECORDING
    mmd, page = write_trace_views(path, title="run")
    assert (mmd.name, page.name) == ("run.mmd", "run.html")
    assert mmd.read_text(encoding="utf-8").endswith(EXPECTED_MERMAID)
    assert "tools/call" in page.read_text(encoding="utf-8")
    other = tmp_path / "trace"
    other.write_text("", encoding="utf-8")
    assert [p.name for p in write_trace_views(other)] == ["trace.mmd", "trace.html"]


def test_read_trace_refuses_broken_lines(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="line 2"):
        read_trace(['{"time": 1}', "{oops"])
    with pytest.raises(ValueError, match="not a JSON object"):
        read_trace(["[1, 2]"])
