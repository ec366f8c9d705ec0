"""OpenTelemetry spans for runs and attempts, and the trace context a task process inherits.

Spans are recorded only when an exporter is configured: ``OTEL_EXPORTER_OTLP_ENDPOINT`` (OTLP
over HTTP; the exporter is the extra ``etl-craft-common[otlp]``), or ``OTEL_TRACES_EXPORTER=
console`` (one JSON line per span on stderr, to look at by hand). Otherwise OpenTelemetry's
no-op tracer makes every span here free, and nothing is exported.

The context crosses processes one way: the owner of an attempt hands it to the task process
in ``TRACEPARENT`` (W3C trace context), and the task process stamps its trace id on every log
record. A ``TRACEPARENT`` in a process's own environment (a CI job that traces itself) is the
parent of what that process starts. The Engine DB carries no trace context, so an attempt a
worker claims starts a trace of its own, tagged with its run, task run and attempt ids.

A run's span is honest about what it covers: the time one process drove the run, from its
first look to the run's end (``etl_craft.run.status``) or until that process let go of it
(``etl_craft.run.released``). An overseer that takes over after a restart starts a new span
for the rest; the run id, an attribute of both, joins them.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import context, trace
from opentelemetry.trace import INVALID_SPAN, Span
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

log = logging.getLogger(__name__)
TRACEPARENT = "TRACEPARENT"
ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
EXPORTER = "OTEL_TRACES_EXPORTER"
FLUSH_MILLIS = 5000
_propagator = TraceContextTextMapPropagator()
_tracer = trace.get_tracer("etl_craft")
Attributes = Mapping[str, str | int | float | bool]


def configure_tracing(service: str, *, inherit: bool, console: bool = True) -> bool:
    """Record and export spans as the environment says; True when an exporter was set up.

    ``inherit`` makes a ``TRACEPARENT`` of this process's environment the current context (a
    foreground command, a task process; not a server, whose runs are traces of their own).
    ``console`` False ignores ``OTEL_TRACES_EXPORTER=console`` (a task process, whose
    stderr is the attempt log).
    """
    inherited = os.environ.get(TRACEPARENT)
    if inherit and inherited:
        context.attach(_propagator.extract({TRACEPARENT.lower(): inherited}))
    exporter = _exporter(console)
    if exporter is None:
        return False
    # The SDK takes a fifth of a second to import; a process that records nothing skips it.
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import (  # noqa: PLC0415
        BatchSpanProcessor,
        SimpleSpanProcessor,
    )

    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service}
    provider = TracerProvider(resource=Resource.create(named))
    simple = os.environ.get(EXPORTER) == "console"
    provider.add_span_processor(
        SimpleSpanProcessor(exporter) if simple else BatchSpanProcessor(exporter)
    )
    trace.set_tracer_provider(provider)
    return True


def _exporter(console: bool) -> Any:
    chosen = os.environ.get(EXPORTER, "otlp" if os.environ.get(ENDPOINT) else "none")
    if chosen == "console" and console:
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter  # noqa: PLC0415

        return ConsoleSpanExporter(
            out=sys.stderr, formatter=lambda span: span.to_json(indent=None) + "\n"
        )
    if chosen != "otlp" or not os.environ.get(ENDPOINT):
        return None
    try:
        # Optional: it brings protobuf and requests, and is needed only to export.
        module = importlib.import_module("opentelemetry.exporter.otlp.proto.http.trace_exporter")
    except ImportError:
        log.warning(
            "%s is set, but the OTLP exporter is not installed; no spans are exported. "
            "Install etl-craft-common[otlp] (opentelemetry-exporter-otlp-proto-http)",
            ENDPOINT,
        )
        return None
    return module.OTLPSpanExporter()


def flush_traces() -> None:
    """Export what is pending before a process ends without running its exit handlers."""
    provider = trace.get_tracer_provider()
    flush = getattr(provider, "force_flush", None)
    if flush is not None:
        flush(FLUSH_MILLIS)


def start_span(name: str, attributes: Attributes) -> Span:
    """A span, child of the current context, that the caller ends."""
    return _tracer.start_span(name, attributes=attributes)


@contextmanager
def current(span: Span) -> Iterator[Span]:
    """Make ``span`` the parent of what is started inside the block; it stays open."""
    with trace.use_span(span, end_on_exit=False):
        yield span


@contextmanager
def span(name: str, attributes: Attributes) -> Iterator[Span]:
    """A current span for the block, ended when it ends (recording an error that escapes)."""
    with _tracer.start_as_current_span(name, attributes=attributes) as opened:
        yield opened


def carrier(of: Span = INVALID_SPAN) -> dict[str, str]:
    """The environment that makes ``of`` (default: the current span) a task process's parent."""
    found: dict[str, str] = {}
    parent = trace.set_span_in_context(of) if of is not INVALID_SPAN else None
    _propagator.inject(found, context=parent)
    return {TRACEPARENT: found["traceparent"]} if "traceparent" in found else {}


def trace_id() -> str | None:
    """The current trace id in hex, or None outside any trace."""
    found = trace.get_current_span().get_span_context()
    return trace.format_trace_id(found.trace_id) if found.is_valid else None


class RunSpans:
    """The spans of the runs one long-lived process drives, keyed by run id."""

    def __init__(self) -> None:
        self._spans: dict[int, Span] = {}

    def begin(self, run_id: int) -> None:
        if run_id not in self._spans:
            self._spans[run_id] = start_span("etl_craft.run", {"etl_craft.run_id": run_id})

    @contextmanager
    def current(self, run_id: int) -> Iterator[None]:
        with current(self._spans.get(run_id, INVALID_SPAN)):
            yield

    def end(self, run_id: int, attributes: Attributes) -> None:
        opened = self._spans.pop(run_id, None)
        if opened is not None:
            opened.set_attributes(attributes)
            opened.end()
