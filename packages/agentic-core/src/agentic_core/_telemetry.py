"""OpenTelemetry, optional: the one switch every instrumented spot checks, and trace propagation.

agentic never imports OpenTelemetry itself. Telemetry is on only when the program has imported
``opentelemetry.trace`` and installed an SDK ``TracerProvider`` (``trace.set_tracer_provider``);
otherwise ``tracer()`` returns None after one dictionary look-up, and nothing else is made. The
same holds for metrics and ``meter()``. Callers check once per run (or per call) and keep the
answer, so an uninstrumented engine pays one flag check.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.metrics import Meter
    from opentelemetry.trace import Tracer

__all__ = ["inject_trace_context", "meter", "trace_context", "tracer", "tracing_enabled"]

INSTRUMENTATION_NAME = "agentic"

# provider -> its agentic tracer/meter: providers rarely change, get_tracer is not free.
_tracers: dict[int, Any] = {}
_meters: dict[int, Any] = {}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agentic-core")
    except PackageNotFoundError:  # pragma: no cover - a source checkout without metadata
        return "0"


def _tracer_provider() -> Any:
    """The installed tracer provider, or None when tracing is off (OpenTelemetry not imported,
    or no provider set). Reads the API's global instead of calling ``get_tracer_provider()``,
    which looks ``OTEL_PYTHON_TRACER_PROVIDER`` up in ``os.environ`` on every call while no
    provider is set (about 1-2.4 µs, paid per invocation and agent turn)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = getattr(trace, "_TRACER_PROVIDER", _UNKNOWN)
    if provider is None:
        if not _env_names("OTEL_PYTHON_TRACER_PROVIDER"):
            return None
        provider = trace.get_tracer_provider()  # the API loads the provider the env names
    elif provider is _UNKNOWN:  # pragma: no cover - an API without that global: ask it
        provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    return provider


def _meter_provider() -> Any:
    """The installed meter provider, or None when metrics are off (as ``_tracer_provider``)."""
    metrics = sys.modules.get("opentelemetry.metrics")
    if metrics is None:
        return None
    internal = sys.modules.get("opentelemetry.metrics._internal")
    provider = getattr(internal, "_METER_PROVIDER", _UNKNOWN)
    if provider is None:
        if not _env_names("OTEL_PYTHON_METER_PROVIDER"):
            return None
        provider = metrics.get_meter_provider()
    elif provider is _UNKNOWN:  # pragma: no cover - an API without that global: ask it
        provider = metrics.get_meter_provider()
    if isinstance(provider, metrics.NoOpMeterProvider) or type(provider).__name__.startswith(
        "_Proxy"
    ):
        return None
    return provider


_UNKNOWN: Any = object()

_env_seen: dict[str, bool] = {}


def _env_names(variable: str) -> bool:
    """Whether the environment names a provider class (read once per process: it is
    configuration, and ``os.environ`` is the cost this module avoids)."""
    found = _env_seen.get(variable)
    if found is None:
        found = _env_seen[variable] = bool(os.environ.get(variable))
    return found


def tracing_enabled() -> bool:
    """Whether spans are recorded: OpenTelemetry is imported and an SDK tracer provider (not the
    proxy or the no-op one) is installed. Cheap: no import, no environment look-up, one
    ``isinstance`` (about 0.1 µs).

    Code that wraps a library making its own spans can skip them when this is False.
    """
    return _tracer_provider() is not None


def tracer() -> Tracer | None:
    """The agentic tracer when an SDK tracer provider is installed, else None (telemetry off)."""
    provider = _tracer_provider()
    if provider is None:
        return None
    found = _tracers.get(id(provider))
    if found is None or found[0] is not provider:
        found = (provider, provider.get_tracer(INSTRUMENTATION_NAME, _version()))
        _tracers[id(provider)] = found
    return found[1]


def meter() -> Meter | None:
    """The agentic meter when an SDK meter provider is installed, else None (metrics off)."""
    provider = _meter_provider()
    if provider is None:
        return None
    found = _meters.get(id(provider))
    if found is None or found[0] is not provider:
        found = (provider, provider.get_meter(INSTRUMENTATION_NAME, _version()))
        _meters[id(provider)] = found
    return found[1]


def inject_trace_context(carrier: MutableMapping[str, str]) -> None:
    """Write the current trace context into ``carrier`` (W3C ``traceparent``/``tracestate``).

    For transports: a runtime puts it in a message's headers so the process that handles the
    message continues the same trace (``trace_context``). Does nothing when telemetry is off.
    """
    if tracer() is None:
        return
    from opentelemetry import propagate

    propagate.inject(carrier)


@contextmanager
def trace_context(carrier: Mapping[str, str] | None) -> Generator[None]:
    """Make the trace context written by ``inject_trace_context`` current inside the block.

    Spans started in the block are children of the sender's span, so one run spread over
    several processes is one trace. Without telemetry, or with no context in ``carrier``, the
    block runs as is.
    """
    if not carrier or tracer() is None:
        yield
        return
    from opentelemetry import context, propagate

    token = context.attach(propagate.extract(carrier))
    try:
        yield
    finally:
        context.detach(token)
