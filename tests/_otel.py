"""OpenTelemetry SDK fixtures for the telemetry tests: in-memory exporters per test.

The global providers can be set once per process, and setting them would trace every
other test of the run too, so the tests record through providers of their own, handed
to the instrumentation with `use_providers` and taken back after each test.

Uses the private hook `jsonrpc_core._telemetry_otel.use_providers` on purpose: no public API
points the instrumentation at a test's own providers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from jsonrpc_core._telemetry_otel import use_providers


@dataclass
class Recorded:
    """What the instrumentation recorded during one test."""

    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider

    def spans(self) -> Sequence[ReadableSpan]:
        return self.exporter.get_finished_spans()

    def span(self, name: str, kind: SpanKind | None = None) -> ReadableSpan:
        """The one finished span named ``name`` (of ``kind``)."""
        found = [s for s in self.spans() if s.name == name and (kind is None or s.kind == kind)]
        assert len(found) == 1, (name, kind, [(s.name, s.kind) for s in self.spans()])
        return found[0]

    def named(self, name: str, kind: SpanKind | None = None) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name and (kind is None or s.kind == kind)]

    def histograms(self) -> dict[str, list[Any]]:
        """Every histogram recorded, by name: its data points."""
        data = self.reader.get_metrics_data()
        found: dict[str, list[Any]] = {}
        if data is None:
            return found
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(metric.data.data_points)
        return found


def child_of(child: ReadableSpan, parent: ReadableSpan) -> bool:
    """Whether ``child``'s parent is ``parent`` (in the same trace)."""
    assert child.parent is not None, child.name
    assert child.context is not None and parent.context is not None
    return (
        child.parent.span_id == parent.context.span_id
        and child.context.trace_id == parent.context.trace_id
    )


@pytest.fixture
def otel() -> Iterator[Recorded]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    use_providers(tracer_provider, meter_provider)
    try:
        yield Recorded(exporter, reader, tracer_provider)
    finally:
        use_providers(None, None)
        tracer_provider.shutdown()
        meter_provider.shutdown()
