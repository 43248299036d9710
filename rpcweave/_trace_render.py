"""Turning a wire recording (`JsonLinesSink` output) into a sequence diagram.

`read_trace` loads the JSON Lines; `trace_events` reads them as arrows; `trace_to_mermaid`
draws a Mermaid sequence diagram. The web page (`trace_to_html`) is in ``_trace_html``.

Rules:

1. Participants are the ``from``/``to`` names of the records (the roles the tap was given),
   in order of first appearance. Arrows: requests solid (``->>``), responses dashed
   (``-->>``), notifications open (``-)``), errors crossed (``--x``) and drawn red.
2. A response is labelled with the method of the request it answers, found by id in the
   opposite direction; a batch is drawn member by member.
3. Records that are not JSON-RPC (HTTP exchanges around it: an agent card, a webhook POST)
   carry ``{"http": "GET /path"}`` or ``{"http": "200", "status": 200}``; they are drawn
   like requests and responses, an answer of 400 or more like an error.
4. Text from the wire never reaches the page or the diagram unescaped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeGuard

__all__ = [
    "TraceEvent",
    "participants",
    "read_trace",
    "shorten",
    "trace_events",
    "trace_to_mermaid",
]

EventKind = Literal["request", "response", "notification", "error", "other"]
Annotate = Callable[[Any], str | None]

_ARROWS: dict[EventKind, str] = {
    "request": "->>",
    "response": "-->>",
    "notification": "-)",
    "error": "--x",
    "other": "->>",
}
_MAX_LABEL = 72


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One arrow of the diagram: a message (or a batch member) from ``source`` to ``target``."""

    index: int
    time: float
    source: str
    target: str
    transport: str
    kind: EventKind
    label: str
    message: Any


def read_trace(source: str | Path | Iterable[str]) -> list[dict[str, Any]]:
    """The records of a JSON Lines recording (a path, or lines); blank lines are skipped."""
    lines: Iterable[str]
    if isinstance(source, (str, Path)):
        lines = Path(source).read_text(encoding="utf-8").splitlines()
    else:
        lines = source
    records: list[dict[str, Any]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"line {number} of the trace is not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise ValueError(f"line {number} of the trace is not a JSON object")
        records.append(record)
    return records


def shorten(text: str, limit: int = _MAX_LABEL) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _classify(message: Any) -> tuple[EventKind, str]:
    """The kind of one message and its label before annotation (rules 1 and 3)."""
    if not isinstance(message, dict):
        return "other", type(message).__name__
    if "invalid" in message:
        error = message.get("invalid") or {}
        return "error", f"invalid message {error.get('code', '')}: {error.get('message', '')}"
    if "http" in message:
        line = str(message["http"])
        status = message.get("status")
        if isinstance(status, int):
            return ("error" if status >= 400 else "response"), line
        return "request", line
    if isinstance(message.get("method"), str):
        if "id" in message:
            return "request", f"{message['method']} [{message['id']}]"
        return "notification", message["method"]
    if "error" in message:
        error = message["error"] if isinstance(message["error"], dict) else {}
        return "error", f"error {error.get('code', '?')} [{message.get('id')}]"
    if "result" in message:
        return "response", f"result [{message.get('id')}]"
    return "other", "message"


def _is_jsonrpc(message: Any) -> TypeGuard[dict[str, Any]]:
    """Whether ``message`` is a JSON-RPC request or response with an id (rule 2)."""
    return (
        isinstance(message, dict)
        and "id" in message
        and "http" not in message
        and "invalid" not in message
    )


def trace_events(
    records: Iterable[Mapping[str, Any]], *, annotate: Annotate | None = None
) -> list[TraceEvent]:
    """The arrows of a recording, in time order (batches expanded, responses matched).

    ``annotate(message)`` may return a few words to append to a label (the tool called, the
    kind of a session update, ...).
    """
    ordered = sorted(records, key=lambda record: float(record.get("time") or 0.0))
    pending: dict[tuple[str, str, str], str] = {}
    events: list[TraceEvent] = []
    for record in ordered:
        source = str(record.get("from", "?"))
        target = str(record.get("to", "?"))
        message = record.get("message")
        members = message if isinstance(message, list) else [message]
        for member in members:
            kind, label = _classify(member)
            if _is_jsonrpc(member):
                key = json.dumps(member["id"])
                if kind == "request":
                    pending[(source, target, key)] = str(member["method"])
                elif kind in ("response", "error"):
                    method = pending.get((target, source, key))
                    if method is not None:
                        label = f"{label} {method}"
            if kind == "error" and isinstance(member, dict):
                error = member.get("error")
                if isinstance(error, dict) and error.get("message"):
                    label = f"{label}: {error['message']}"
            if annotate is not None:
                extra = annotate(member)
                if extra:
                    label = f"{label} {extra}"
            events.append(
                TraceEvent(
                    index=len(events) + 1,
                    time=float(record.get("time") or 0.0),
                    source=source,
                    target=target,
                    transport=str(record.get("transport", "")),
                    kind=kind,
                    label=shorten(label),
                    message=member,
                )
            )
    return events


def participants(events: Iterable[TraceEvent]) -> list[str]:
    names: list[str] = []
    for event in events:
        for name in (event.source, event.target):
            if name not in names:
                names.append(name)
    return names


_MERMAID_ESCAPES = {"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;", "%": "#37;"}


def _mermaid_text(text: str) -> str:
    """Text safe inside a Mermaid message or participant label (rule 4)."""
    return "".join(_MERMAID_ESCAPES.get(char, char) for char in " ".join(text.split()))


def trace_to_mermaid(
    records: Iterable[Mapping[str, Any]],
    *,
    title: str | None = None,
    labels: Mapping[str, str] | None = None,
    annotate: Annotate | None = None,
) -> str:
    """A Mermaid ``sequenceDiagram`` of a recording (rules 1-3).

    ``labels`` gives display names to participants (by their name in the recording).
    Arrows are numbered (``autonumber``) like the messages of `trace_to_html`.
    """
    events = trace_events(records, annotate=annotate)
    names = participants(events)
    ids = {name: f"P{number}" for number, name in enumerate(names)}
    lines = ["sequenceDiagram"]
    if title:
        lines.insert(
            0, f"---\ntitle: {json.dumps(' '.join(title.split()), ensure_ascii=False)}\n---"
        )
    lines.append("    autonumber")
    for name in names:
        shown = (labels or {}).get(name, name)
        lines.append(f"    participant {ids[name]} as {_mermaid_text(shown)}")
    noted: set[tuple[str, str, str]] = set()
    for event in events:
        pair = tuple(sorted((event.source, event.target)))
        key = (pair[0], pair[1], event.transport)
        if event.transport and key not in noted:
            noted.add(key)
            over = ",".join(ids[name] for name in dict.fromkeys((event.source, event.target)))
            lines.append(f"    Note over {over}: {_mermaid_text(event.transport)}")
        arrow = _ARROWS[event.kind]
        lines.append(
            f"    {ids[event.source]}{arrow}{ids[event.target]}: {_mermaid_text(event.label)}"
        )
    return "\n".join(lines) + "\n"
