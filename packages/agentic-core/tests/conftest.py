"""Fixtures: every engine test runs under each runtime; `telemetry` turns OpenTelemetry on."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentic_core import LocalRuntime, Runtime, SerializingRuntime
from tests.fixtures.otel import reset_otel_globals


@pytest.fixture(params=["local", "serializing"])
def runtime(request: pytest.FixtureRequest) -> Runtime:
    """Each engine test runs once per runtime."""
    return LocalRuntime() if request.param == "local" else SerializingRuntime()


class Telemetry:
    """OpenTelemetry SDK providers installed as the globals: finished spans, metric points."""

    def __init__(self, spans: Any, reader: Any) -> None:
        self.exporter = spans
        self.reader = reader

    def spans(self) -> list[Any]:
        """The finished spans (``ReadableSpan``), in the order they ended."""
        return list(self.exporter.get_finished_spans())

    def span(self, name: str) -> Any:
        """The one finished span called ``name``."""
        found = [s for s in self.spans() if s.name == name]
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {[s.name for s in found]}"
        return found[0]

    def points(self, metric: str) -> list[Any]:
        """The data points of ``metric`` collected now (empty when nothing was recorded)."""
        data = self.reader.get_metrics_data()
        if data is None:
            return []
        return [
            point
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for found in scope.metrics
            if found.name == metric
            for point in found.data.data_points
        ]


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    """Telemetry on for one test: SDK tracer and meter providers with in-memory exporters."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    reset_otel_globals()
    trace.set_tracer_provider(tracer_provider)
    metrics.set_meter_provider(meter_provider)
    try:
        yield Telemetry(exporter, reader)
    finally:
        reset_otel_globals()
        tracer_provider.shutdown()
        meter_provider.shutdown()
