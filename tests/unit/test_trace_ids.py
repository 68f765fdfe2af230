"""Span and trace ids come from the system's randomness, not from the random
module's shared generator (OpenTelemetry's default): a model's code that
seeded that generator keeps its sequence while swamp's spans are made
around it, in its thread or in another step's."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("opentelemetry.sdk.trace", reason="the tracing extra (opentelemetry-sdk) is not installed")

from swamp.util import tracing  # noqa: E402


@pytest.fixture
def console_tracing(monkeypatch):
    """Tracing as `OTEL_TRACES_EXPORTER=console` turns it on in a command
    (its provider built by swamp), the spans also kept in memory to look at."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setattr(tracing, "_tracer", None)
    monkeypatch.setattr(tracing, "_provider", None)
    assert tracing.enabled()
    provider = tracing._provider
    provider.kept = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(provider.kept))
    yield provider
    provider.shutdown()


def test_spans_leave_a_seeded_random_sequence_alone(console_tracing):
    random.seed(99)
    alone = [random.random() for _ in range(3)]
    random.seed(99)
    got = [random.random()]
    with tracing.span("swamp.test.outer"):
        for _ in range(5):
            with tracing.span("swamp.test.inner"):
                pass
    got += [random.random(), random.random()]
    assert got == alone
    assert [sp.name for sp in console_tracing.kept.get_finished_spans()].count("swamp.test.inner") == 5


def test_the_ids_are_valid_and_spread(console_tracing):
    ids = console_tracing.id_generator
    spans = {ids.generate_span_id() for _ in range(500)}
    traces = {ids.generate_trace_id() for _ in range(500)}
    assert len(spans) == len(traces) == 500
    assert all(0 < s < 1 << 64 for s in spans) and all(0 < t < 1 << 128 for t in traces)
    assert max(traces) > 1 << 120  # drawn over the whole width, as W3C trace context expects
    assert ids.is_trace_id_random()
