"""``--trace`` and ``--verbose``: one `WireTap` per CLI run, and what it writes at the end.

The tap records to JSON Lines (`jsonrpc_core.JsonLinesSink`), prints on stderr with
``--verbose``, and when the run ends — normally or not — the recording is drawn as a Mermaid
diagram and an HTML page next to it (`rpcweave._trace_html.write_trace_views`), with the
OpenTelemetry spans that ended meanwhile when the global tracer provider is the SDK's (and
any put in `Trace.spans`). `annotate`
adds the few protocol words that make a diagram readable (the tool called, the kind of a
session update, the state of a task); the renderer itself knows no protocol.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO, TypeVar

from jsonrpc_core import JsonLinesSink, MessageStream, TapRecord, WireTap

from ._trace_html import write_trace_views
from ._trace_spans import collect_spans

__all__ = ["Trace", "WirePrinter", "annotate"]

S = TypeVar("S", bound=MessageStream)


def _state_name(state: Any) -> str | None:
    if isinstance(state, str) and state.startswith("TASK_STATE_"):
        return state.removeprefix("TASK_STATE_").lower().replace("_", "-")
    return None


def _a2a_result(result: dict[str, Any]) -> str | None:
    task = result.get("task")
    if isinstance(task, dict):
        return _state_name((task.get("status") or {}).get("state"))
    if isinstance(result.get("status"), dict) and "id" in result:  # GetTask: a Task
        return _state_name(result["status"].get("state"))
    update = result.get("statusUpdate")
    if isinstance(update, dict):
        return _state_name((update.get("status") or {}).get("state"))
    artifact = result.get("artifactUpdate")
    if isinstance(artifact, dict):
        name = (artifact.get("artifact") or {}).get("name")
        return f"artifact {name}" if name else "artifact"
    if "message" in result:
        return "message"
    return None


def annotate(message: Any) -> str | None:
    """A few words about an MCP, ACP or A2A message for a diagram label (or ``None``)."""
    if not isinstance(message, dict):
        return None
    if "http" in message:
        body = message.get("body")
        return _a2a_result(body) if isinstance(body, dict) else None
    params = message.get("params")
    method = message.get("method")
    if isinstance(params, dict) and isinstance(method, str):
        if method in ("tools/call", "prompts/get"):
            return str(params.get("name", "")) or None
        if method in ("resources/read", "resources/subscribe"):
            return str(params.get("uri", "")) or None
        if method == "session/update":
            update = params.get("update")
            return str(update.get("sessionUpdate")) if isinstance(update, dict) else None
        if method.startswith("fs/"):
            return str(params.get("path", "")).rsplit("/", 1)[-1] or None
        if method == "terminal/create":
            return str(params.get("command", "")) or None
        return None
    result = message.get("result")
    if isinstance(result, dict):
        if result.get("isError") is True:
            return "isError"
        if isinstance(result.get("stopReason"), str):
            return str(result["stopReason"])
        if isinstance(result.get("outcome"), dict):
            return str(result["outcome"].get("optionId") or result["outcome"].get("outcome"))
        return _a2a_result(result)
    return None


def _compact(message: Any, width: int) -> str:
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= width else text[: max(width - 1, 8)] + "…"


class WirePrinter:
    """A tap sink printing one line per message: who sends to whom, and the message."""

    def __init__(
        self,
        out: TextIO,
        *,
        width: int = 150,
        labels: Mapping[str, str] | None = None,
        indent: str = "  ",
    ) -> None:
        self.out = out
        self.width = width
        self.labels = dict(labels or {})
        self.indent = indent

    def __call__(self, record: TapRecord) -> None:
        """Print ``record``."""
        sender, receiver = record.local, record.remote
        if record.direction == "receive":
            sender, receiver = receiver, sender
        sender = self.labels.get(sender, sender)
        receiver = self.labels.get(receiver, receiver)
        head = f"{self.indent}{sender} → {receiver} "
        body = _compact(record.message, self.width - len(head))
        print(head + body, file=self.out, flush=True)


class Trace:
    """The wire tap of one run: ``--trace FILE`` and ``--verbose`` (see module docstring).

    Use as a context manager; on exit the recording is closed and drawn. Without either
    option `wrap` returns the stream as it is. The spans of the global OpenTelemetry SDK
    tracer provider that end while a recording is open, and any span records
    (`rpcweave._trace_spans.span_record`) put in `spans`, are drawn on the page as well,
    and saved as ``<name>.spans.jsonl``.
    """

    def __init__(
        self,
        path: str | None,
        *,
        verbose: bool = False,
        title: str | None = None,
        labels: Mapping[str, str] | None = None,
        err: TextIO | None = None,
    ) -> None:
        self.path = Path(path) if path else None
        self.title = title
        self.labels = dict(labels or {})
        self.err = err if err is not None else sys.stderr
        self.tap = WireTap()
        self._sink: JsonLinesSink | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text("", encoding="utf-8")  # a fresh recording, not an append
            self._sink = JsonLinesSink(self.path)
            self.tap.sinks.append(self._sink)
        if verbose:
            self.tap.sinks.append(WirePrinter(self.err, labels=self.labels))
        self.views: tuple[Path, Path] | None = None
        self.spans: list[dict[str, Any]] = []
        self._collector = collect_spans() if self._sink is not None else None

    @property
    def active(self) -> bool:
        """Whether anything is recorded or printed."""
        return bool(self.tap.sinks)

    def wrap(self, stream: S, *, local: str, remote: str, transport: str) -> S | MessageStream:
        """``stream`` recorded as seen by ``local`` (or unchanged when nothing listens)."""
        if not self.active:
            return stream
        return self.tap.wrap(stream, local=local, remote=remote, transport=transport)

    def record(self, source: str, target: str, message: Any, *, transport: str = "http") -> None:
        """Record something that is not a JSON-RPC message (an HTTP exchange around it)."""
        if self.active:
            self.tap.record(TapRecord(time.time(), "send", transport, source, target, message))

    def __enter__(self) -> Trace:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def discard(self) -> None:
        """Close the recording and remove it, with any diagram and page of an earlier run
        (for a run that failed before anything was recorded: no empty trace is left)."""
        if self._sink is None or self.path is None:
            return
        self._sink.close()
        self._sink = None
        if self._collector is not None:
            self._collector.close()
        stem = self.path.with_suffix("") if self.path.suffix == ".jsonl" else self.path
        for leftover in (
            self.path,
            stem.with_name(stem.name + ".mmd"),
            stem.with_name(stem.name + ".html"),
            stem.with_name(stem.name + ".spans.jsonl"),
        ):
            leftover.unlink(missing_ok=True)

    def close(self) -> None:
        """Close the recording and write its diagram and page (once)."""
        if self._sink is None or self.path is None:
            return
        self._sink.close()
        self._sink = None
        if self._collector is not None:
            self.spans.extend(self._collector.close())
        try:
            self.views = write_trace_views(
                self.path,
                title=self.title,
                labels=self.labels,
                annotate=annotate,
                spans=self.spans,
            )
        except (OSError, ValueError) as exc:
            print(f"rpcweave: cannot draw the trace: {exc}", file=self.err)
            return
        mmd, page = self.views
        print(f"trace: {self.path} (diagram {mmd.name}, page {page.name})", file=self.err)
