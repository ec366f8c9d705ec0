"""One span per HTTP request, named by its route template, continuing the caller's trace."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from types import SimpleNamespace
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode, format_trace_id

from etl_craft.runtime.http_tracing import TracingMiddleware

CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


async def routed_app(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
    """What a framework does: route the request (recorded in the scope), then answer."""
    scope["route"] = SimpleNamespace(path="/api/v1/runs/{run_id}")
    status = 500 if scope["path"].endswith("/0") else 200
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def serve(path: str, headers: list[tuple[bytes, bytes]]) -> ReadableSpan:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    middleware = TracingMiddleware(routed_app, provider.get_tracer("test"))
    sent: list[MutableMapping[str, Any]] = []

    async def receive() -> MutableMapping[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": path, "headers": headers}
    asyncio.run(middleware(scope, receive, send))
    assert [message["type"] for message in sent] == ["http.response.start", "http.response.body"]
    [span] = exporter.get_finished_spans()
    return span


def test_a_request_is_one_span_named_by_its_route_in_the_caller_s_trace() -> None:
    traceparent = f"00-{CALLER_TRACE}-00f067aa0ba902b7-01".encode()

    span = serve("/api/v1/runs/42", [(b"traceparent", traceparent)])

    assert span.name == "GET /api/v1/runs/{run_id}"
    assert format_trace_id(span.context.trace_id) == CALLER_TRACE
    assert span.attributes is not None
    assert span.attributes["http.response.status_code"] == 200
    assert span.attributes["url.path"] == "/api/v1/runs/42"
    assert span.status.status_code is StatusCode.UNSET


def test_a_server_error_marks_the_span_as_an_error() -> None:
    span = serve("/api/v1/runs/0", [])

    assert span.status.status_code is StatusCode.ERROR
    assert span.parent is None


def test_the_api_app_traces_its_requests() -> None:
    from etl_craft_api.app import create_app

    middleware: list[object] = [entry.cls for entry in create_app(None).user_middleware]

    assert TracingMiddleware in middleware
