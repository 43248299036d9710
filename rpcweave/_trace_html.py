"""A wire recording as a self-contained web page, and both views written next to it.

`trace_to_html` shows the messages of a recording as an SVG timeline that needs no script,
the Mermaid source of `trace_to_mermaid`, and every message as pretty JSON, each arrow
linking to its message. The page reads offline and makes no request when opened; only
with an explicit ``mermaid_url`` (`MERMAID_URL`, or a copy of Mermaid's ES module you
host) does it load Mermaid to draw the source as well. `write_trace_views` writes
``.mmd`` and ``.html`` beside a recording. Text from the wire never reaches the page unescaped.

Given OpenTelemetry span records (`rpcweave._trace_spans.span_record`), the page also shows
the spans as a tree; a message whose ``params._meta.traceparent`` names a recorded span (MCP,
ACP), and the answer to such a request, links to that span, and the span back to them.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._trace_render import (
    Annotate,
    EventKind,
    TraceEvent,
    participants,
    read_trace,
    shorten,
    trace_events,
    trace_to_mermaid,
)
from ._trace_spans import SPANS_STYLE, spans_html, traceparent_span, write_spans

__all__ = ["MERMAID_URL", "trace_to_html", "write_trace_views"]

MERMAID_URL = "https://cdn.jsdelivr.net/npm/mermaid@11/dist/mermaid.esm.min.mjs"
"""A public copy of Mermaid's ES module, for ``mermaid_url`` (the default is none: the
page then makes no request; its SVG timeline needs nothing)."""

_MAX_PRETTY = 200_000

_COLUMN = 300
_ROW = 30
_TOP = 56
_LEFT = 56
_COLORS: dict[EventKind, str] = {
    "request": "#1d4ed8",
    "response": "#047857",
    "notification": "#7c3aed",
    "error": "#dc2626",
    "other": "#475569",
}

_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#0f172a;background:#f8fafc}
header{padding:16px 24px;background:#0f172a;color:#f8fafc}
header h1{margin:0 0 4px;font-size:20px}header p{margin:0;color:#cbd5e1}
.layout{display:flex;flex-wrap:wrap;gap:24px;padding:24px;align-items:flex-start}
.diagram{flex:1 1 560px;min-width:0;overflow:auto;background:#fff;border:1px solid #e2e8f0;
border-radius:8px;padding:12px}
.messages{flex:1 1 420px;min-width:0}
.messages ol{list-style:none;margin:0;padding:0}
.messages li{background:#fff;border:1px solid #e2e8f0;border-left:4px solid var(--c);
border-radius:6px;margin:0 0 10px;padding:6px 10px}
.messages li:target{outline:2px solid var(--c)}
.head{font-weight:600;color:var(--c)}.head small{color:#64748b;font-weight:400}
pre{margin:6px 0 0;white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,
SFMono-Regular,Menlo,monospace;max-height:24em;overflow:auto}
details{margin-top:12px}summary{cursor:pointer;color:#475569}
svg text{font:12px system-ui,sans-serif}svg a:hover text{text-decoration:underline}
#mermaid-view{margin-bottom:16px}
"""

_SCRIPT = """
<script type="module">
// Draws the Mermaid diagram when the library can be loaded; offline, the SVG timeline
// below already shows the same messages.
try {
  const { default: mermaid } = await import(%s);
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
  const source = document.getElementById("mermaid-source").textContent;
  const { svg } = await mermaid.render("mermaid-diagram", source);
  const view = document.getElementById("mermaid-view");
  view.innerHTML = svg;
  view.hidden = false;
} catch (error) {
  console.info("Mermaid unavailable; showing the built-in timeline.", error);
}
</script>
"""


def _svg_arrow(event: TraceEvent, x1: float, x2: float, y: float) -> str:
    color = _COLORS[event.kind]
    dash = ' stroke-dasharray="6 4"' if event.kind in ("response", "error") else ""
    parts: list[str] = []
    if x1 == x2:  # a message to oneself: a small loop
        parts.append(
            f'<path d="M{x1} {y - 8} h40 v12 h-36" fill="none" stroke="{color}"'
            f' stroke-width="1.5"{dash}/>'
        )
        x2, end_y, direction = x1 + 4, y + 4, -1.0
        text_x, anchor = x1 + 46, "start"
    else:
        parts.append(
            f'<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="{color}"'
            f' stroke-width="1.5"{dash}/>'
        )
        end_y, direction = y, (1.0 if x2 > x1 else -1.0)
        text_x, anchor = (x1 + x2) / 2, "middle"
    back = x2 - 9 * direction
    if event.kind == "error":
        parts.append(
            f'<path d="M{x2 - 5} {end_y - 5} l10 10 M{x2 - 5} {end_y + 5} l10 -10"'
            f' stroke="{color}" stroke-width="2"/>'
        )
    elif event.kind == "notification":
        parts.append(
            f'<path d="M{back} {end_y - 5} L{x2} {end_y} L{back} {end_y + 5}" fill="none"'
            f' stroke="{color}" stroke-width="1.5"/>'
        )
    else:
        parts.append(
            f'<path d="M{back} {end_y - 5} L{x2} {end_y} L{back} {end_y + 5} Z" fill="{color}"/>'
        )
    room = max(int(abs(x2 - x1) / 6.6), 24) if x1 != x2 else 60
    label = html.escape(shorten(event.label, room))
    parts.append(
        f'<text x="{text_x}" y="{y - 6}" text-anchor="{anchor}" fill="{color}">'
        f"{event.index}. {label}</text>"
    )
    title = html.escape(f"{event.index}. {event.source} → {event.target}: {event.label}")
    return f'<a href="#m{event.index}"><title>{title}</title>{"".join(parts)}</a>'


def _svg_timeline(events: list[TraceEvent], names: list[str], labels: Mapping[str, str]) -> str:
    """The diagram drawn as plain SVG (needs no script; rule 1's arrow styles)."""
    xs = {name: _LEFT + _COLUMN / 2 + number * _COLUMN for number, name in enumerate(names)}
    width = _LEFT + _COLUMN * max(len(names), 1) + 40
    height = _TOP + _ROW * (len(events) + 1)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" role="img" aria-label="message timeline">'
    ]
    for name, x in xs.items():
        shown = html.escape(shorten(labels.get(name, name), 30))
        out.append(
            f'<rect x="{x - _COLUMN / 2 + 12}" y="8" width="{_COLUMN - 24}" height="30" rx="6"'
            f' fill="#e2e8f0" stroke="#94a3b8"/>'
            f'<text x="{x}" y="28" text-anchor="middle" font-weight="600">{shown}</text>'
            f'<line x1="{x}" y1="38" x2="{x}" y2="{height - 8}" stroke="#94a3b8"'
            f' stroke-dasharray="3 4"/>'
        )
    start = events[0].time if events else 0.0
    for row, event in enumerate(events):
        y = _TOP + _ROW * row + _ROW / 2
        out.append(
            f'<text x="4" y="{y - 6}" fill="#94a3b8" font-size="10">'
            f"+{event.time - start:.3f}s</text>"
        )
        out.append(_svg_arrow(event, xs[event.source], xs[event.target], y))
    out.append("</svg>")
    return "".join(out)


def _pretty(message: Any) -> str:
    text = json.dumps(message, indent=2, ensure_ascii=False, default=str)
    if len(text) > _MAX_PRETTY:
        text = text[:_MAX_PRETTY] + f"\n… ({len(text) - _MAX_PRETTY} more characters)"
    return text


def _span_links(events: list[TraceEvent], recorded: set[str]) -> dict[int, str]:
    """The recorded span each message belongs to, by message number: the span its
    ``traceparent`` names, and for an answer the span of the request it answers."""
    links: dict[int, str] = {}
    asked: dict[tuple[str, str, str], str] = {}
    for event in events:
        message = event.message
        has_id = isinstance(message, dict) and "id" in message
        key_id = json.dumps(message["id"]) if has_id else None
        span_id = traceparent_span(message)
        if span_id is not None:
            if key_id is not None and event.kind == "request":
                asked[(event.source, event.target, key_id)] = span_id
        elif key_id is not None and event.kind in ("response", "error"):
            span_id = asked.get((event.target, event.source, key_id))
        if span_id is not None and span_id in recorded:
            links[event.index] = span_id
    return links


def trace_to_html(
    records: Iterable[Mapping[str, Any]],
    *,
    title: str = "rpcweave trace",
    labels: Mapping[str, str] | None = None,
    annotate: Annotate | None = None,
    mermaid_url: str | None = None,
    spans: Iterable[Mapping[str, Any]] | None = None,
) -> str:
    """A self-contained HTML page: the diagram beside every message as pretty JSON.

    The page embeds the Mermaid source and draws the same messages as an SVG timeline, so
    it reads offline and makes no request when opened; given ``mermaid_url`` (e.g.
    `MERMAID_URL`) it also loads Mermaid from there and renders the source. Arrows link
    to their messages. ``spans`` (OpenTelemetry span records, `span_record`) add the
    trace as a tree, linked both ways to the messages that carry their trace context.
    """
    records = list(records)
    events = trace_events(records, annotate=annotate)
    names = participants(events)
    shown = dict(labels or {})
    mermaid = trace_to_mermaid(records, title=None, labels=shown, annotate=annotate)
    start = events[0].time if events else 0.0
    transports = sorted({event.transport for event in events if event.transport})
    summary = (
        f"{len(events)} messages between "
        + ", ".join(shown.get(name, name) for name in names)
        + (f" over {', '.join(transports)}" if transports else "")
    )
    span_records = list(spans or [])
    linked = _span_links(events, {str(span.get("span_id")) for span in span_records})
    by_span: dict[str, list[int]] = {}
    for index, span_id in linked.items():
        by_span.setdefault(span_id, []).append(index)
    items: list[str] = []
    for event in events:
        link = ""
        if event.index in linked:
            span_id = html.escape(linked[event.index])
            link = f' <a class="span-link" href="#span-{span_id}">span {span_id}</a>'
        items.append(
            f'<li id="m{event.index}" style="--c:{_COLORS[event.kind]}">'
            f'<div class="head">{event.index}. {html.escape(event.source)} → '
            f"{html.escape(event.target)} · {event.kind} · {html.escape(event.label)} "
            f"<small>+{event.time - start:.3f} s · {html.escape(event.transport)}</small>"
            f"{link}</div><pre>{html.escape(_pretty(event.message))}</pre></li>"
        )
    script = _SCRIPT % json.dumps(mermaid_url) if mermaid_url else ""
    spans_section = spans_html(span_records, by_span) if span_records else ""
    style = _STYLE + (SPANS_STYLE if span_records else "")
    if span_records:
        summary += f"; {len(span_records)} OpenTelemetry spans"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{style}</style></head><body>"
        f"<header><h1>{html.escape(title)}</h1><p>{html.escape(summary)}</p></header>"
        '<main class="layout"><section class="diagram">'
        '<div id="mermaid-view" hidden></div>'
        f'<div id="timeline">{_svg_timeline(events, names, shown)}</div>'
        "<details><summary>Mermaid source</summary>"
        f'<pre id="mermaid-source">{html.escape(mermaid)}</pre></details></section>'
        f'<section class="messages"><ol>{"".join(items)}</ol></section></main>'
        f"{spans_section}{script}</body></html>\n"
    )


def write_trace_views(
    path: str | Path,
    *,
    title: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotate: Annotate | None = None,
    mermaid_url: str | None = None,
    spans: Iterable[Mapping[str, Any]] | None = None,
) -> tuple[Path, Path]:
    """Write ``<name>.mmd`` and ``<name>.html`` next to the recording at ``path``
    (``mermaid_url`` and ``spans`` as for `trace_to_html`; given spans, they are also
    written as ``<name>.spans.jsonl``).

    Returns the two paths. A missing recording counts as an empty one.
    """
    source = Path(path)
    records = read_trace(source) if source.exists() else []
    stem = source.with_suffix("") if source.suffix == ".jsonl" else source
    mmd = stem.with_name(stem.name + ".mmd")
    page = stem.with_name(stem.name + ".html")
    span_records = list(spans or [])
    if span_records:
        write_spans(stem.with_name(stem.name + ".spans.jsonl"), span_records)
    mmd.write_text(
        trace_to_mermaid(records, title=title, labels=labels, annotate=annotate), encoding="utf-8"
    )
    page.write_text(
        trace_to_html(
            records,
            title=title or f"Trace {source.name}",
            labels=labels,
            annotate=annotate,
            mermaid_url=mermaid_url,
            spans=span_records,
        ),
        encoding="utf-8",
    )
    return mmd, page
