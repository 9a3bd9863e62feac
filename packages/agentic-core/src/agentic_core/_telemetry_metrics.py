"""OpenTelemetry metric instruments of agentic: made once per meter, only while metrics are on.

``instruments()`` is None when no SDK meter provider is installed (see ``_telemetry.meter``);
otherwise the same ``Instruments`` for as long as the provider stays the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentic_core._telemetry import meter

if TYPE_CHECKING:
    from opentelemetry.metrics import Counter, Histogram, Meter

__all__ = ["Instruments", "instruments"]

# Bucket bounds for executor durations (s) and token counts: OTel's defaults are made for
# milliseconds, which would put every executor step in the first bucket.
_DURATION_BUCKETS = (
    0.0001,
    0.0005,
    0.001,
    0.005,
    0.01,
    0.05,
    0.1,
    0.5,
    1.0,
    5.0,
    10.0,
    30.0,
    60.0,
    300.0,
)
# The GenAI semantic conventions' advice for gen_ai.client.token.usage.
_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304)


class Instruments:
    """Every instrument agentic records to, on one meter."""

    __slots__ = (
        "executor_duration",
        "executor_failures",
        "executor_retries",
        "token_usage",
        "workflow_runs",
        "workflow_supersteps",
    )

    def __init__(self, meter: Meter) -> None:
        self.executor_duration: Histogram = meter.create_histogram(
            "agentic.executor.duration",
            unit="s",
            description="Duration of executor invocations (each attempt).",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.executor_failures: Counter = meter.create_counter(
            "agentic.executor.failures",
            unit="{invocation}",
            description="Executor invocations (attempts) that failed.",
        )
        self.executor_retries: Counter = meter.create_counter(
            "agentic.executor.retries",
            unit="{invocation}",
            description="Executor invocations that were retries of a failed attempt.",
        )
        self.workflow_supersteps: Counter = meter.create_counter(
            "agentic.workflow.supersteps",
            unit="{superstep}",
            description="Supersteps run by workflows.",
        )
        self.workflow_runs: Counter = meter.create_counter(
            "agentic.workflow.runs",
            unit="{run}",
            description="Workflow run calls, by how they ended (agentic.run.status).",
        )
        self.token_usage: Histogram = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Tokens used per model call, by gen_ai.token.type (input/output).",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )


# meter -> (meter, its instruments); the meter is kept so a recycled id() cannot match.
_by_meter: dict[int, tuple[Any, Instruments]] = {}


def instruments() -> Instruments | None:
    """agentic's instruments when an SDK meter provider is installed, else None (metrics off)."""
    current = meter()
    if current is None:
        return None
    found = _by_meter.get(id(current))
    if found is None or found[0] is not current:
        found = (current, Instruments(current))
        _by_meter[id(current)] = found
    return found[1]
