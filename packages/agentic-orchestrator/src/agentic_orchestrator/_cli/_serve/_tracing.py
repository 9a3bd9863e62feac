"""``RequestTracing``: an OpenTelemetry span and a structured log line per HTTP request.

The span continues the caller's trace: its parent is the context of the request's
``traceparent``/``tracestate`` headers (W3C trace context, read by ``propagate.extract``), so a
client's trace goes on through the server into the agent's runs. As everywhere in agentic,
OpenTelemetry is optional and never imported here: a program that has not imported
``opentelemetry.trace`` gets no span, and one with no SDK provider gets OpenTelemetry's own
non-recording spans.
"""

from __future__ import annotations

import sys
import time
from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

import structlog

from agentic_orchestrator._cli._serve._lifespan import ASGIApp

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ["RequestTracing"]

INSTRUMENTATION_NAME = "agentic_orchestrator.serve"

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]

_log = structlog.get_logger("agentic_orchestrator.serve")


class RequestTracing:
    """ASGI middleware: each HTTP request in a server span, then one ``serve.request`` log line.

    The span is named ``"<METHOD> <protocol path>"`` (``POST /v1``, ``POST /mcp``: the mount,
    not the whole path, so names stay few), with the ``http.request.method``, ``url.path``,
    ``http.response.status_code`` and ``agentic.serve.protocol`` attributes; a 5xx answer or an
    exception marks it an error. Lifespan and websocket scopes pass through untouched.
    """

    def __init__(self, app: ASGIApp, protocols: dict[str, str]) -> None:
        self.app = app
        self.protocols = dict(protocols)
        """``{prefix: protocol}``: how a path is named in spans and logs."""

    def protocol_of(self, path: str) -> tuple[str, str]:
        """``(protocol, prefix)`` of ``path``; ``("none", path)`` for what no protocol serves."""
        for prefix, name in self.protocols.items():
            if path == prefix or path.startswith(f"{prefix}/"):
                return name, prefix
        if path == "/.well-known/agent-card.json" and "a2a" in self.protocols.values():
            return "a2a", path
        return "none", path if path == "/" else "/*"

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method", "GET"))
        path = str(scope.get("path", ""))
        protocol, route = self.protocol_of(path)
        status: list[int] = []

        async def recorded(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        started = time.perf_counter()
        trace = sys.modules.get("opentelemetry.trace")
        try:
            if trace is None:
                await self.app(scope, receive, recorded)
            else:
                await self._traced(trace, scope, receive, recorded, protocol, f"{method} {route}")
        finally:
            _log.info(
                "serve.request",
                method=method,
                path=path[:200],
                protocol=protocol,
                status=status[0] if status else None,
                duration_ms=round((time.perf_counter() - started) * 1000, 1),
            )

    async def _traced(
        self, trace: Any, scope: Scope, receive: Any, send: Any, protocol: str, name: str
    ) -> None:
        from opentelemetry import propagate

        carrier = _carrier(scope)
        tracer = trace.get_tracer(INSTRUMENTATION_NAME)
        span: Span
        with tracer.start_as_current_span(
            name,
            context=propagate.extract(carrier),
            kind=trace.SpanKind.SERVER,
            attributes={
                "http.request.method": str(scope.get("method", "GET")),
                "url.path": str(scope.get("path", ""))[:200],
                "url.scheme": str(scope.get("scheme", "http")),
                "agentic.serve.protocol": protocol,
            },
        ) as span:

            async def recorded(message: Message) -> None:
                if message["type"] == "http.response.start":
                    code = int(message["status"])
                    span.set_attribute("http.response.status_code", code)
                    if code >= 500:
                        span.set_status(trace.Status(trace.StatusCode.ERROR, f"HTTP {code}"))
                await send(message)

            await self.app(scope, receive, recorded)


def _carrier(scope: Scope) -> dict[str, str]:
    """The request's trace-context headers, by lower-case name, for ``propagate.extract``."""
    found: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = bytes(name).decode("latin-1").lower()
        if key in ("traceparent", "tracestate", "baggage"):
            found.setdefault(key, bytes(value).decode("latin-1"))
    return found
