"""agentic-bus's errors: core's ``BusError`` family, plus what distribution adds."""

from __future__ import annotations

from agentic_core import BusError, WorkflowExecutionError

__all__ = [
    "CoordinatorFencedError",
    "NatsConnectionError",
    "NoWorkerError",
    "PayloadTooLargeError",
]


class NatsConnectionError(BusError, ConnectionError):
    """nats-server cannot be reached (the message names the URL, credentials redacted)."""


class CoordinatorFencedError(WorkflowExecutionError):
    """Another coordinator took this run over; this one stopped before emitting anything."""


class NoWorkerError(WorkflowExecutionError, TimeoutError):
    """No worker took the run's tasks within ``worker_wait_s`` (the message names the pool)."""


class PayloadTooLargeError(BusError, ValueError):
    """A message is larger than the server's ``max_payload`` (the message names both sizes)."""
