"""A span per HTTP request of an ASGI application (the API), without importing its framework.

The span continues a ``traceparent`` header when the caller sends one. It is named by the
method and, once the framework has routed the request, by the route's path template rather
than the path, so that ``/api/v1/runs/{run_id}`` is one name and not one per run.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_propagator = TraceContextTextMapPropagator()
_tracer = trace.get_tracer("etl_craft.http")
SERVER_ERROR = 500


class Middlewares(Protocol):
    def add_middleware(self, middleware_class: Any, *args: Any, **kwargs: Any) -> None: ...


def instrument_app(app: Middlewares) -> None:
    """Trace every HTTP request ``app`` serves (a Starlette or FastAPI application)."""
    app.add_middleware(TracingMiddleware)


class TracingMiddleware:
    def __init__(self, app: ASGIApp, tracer: Tracer | None = None) -> None:
        self.app = app
        self.tracer = tracer or _tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method", "GET"))
        parent = _propagator.extract(_headers(scope))
        attributes = {"http.request.method": method, "url.path": str(scope.get("path", ""))}
        with self.tracer.start_as_current_span(
            method, context=parent, kind=SpanKind.SERVER, attributes=attributes
        ) as span:

            async def send_traced(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                    span.set_attribute("http.response.status_code", status)
                    if status >= SERVER_ERROR:
                        span.set_status(Status(StatusCode.ERROR))
                await send(message)

            try:
                await self.app(scope, receive, send_traced)
            finally:
                route = getattr(scope.get("route"), "path", None)
                if route:
                    span.set_attribute("http.route", route)
                    span.update_name(f"{method} {route}")


def _headers(scope: Scope) -> dict[str, str]:
    return {
        key.decode("latin-1").lower(): value.decode("latin-1")
        for key, value in scope.get("headers", [])
    }
