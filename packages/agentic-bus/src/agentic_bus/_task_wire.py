"""The distributed runtime's wire format: tasks (one executor invocation) and their results.

Bodies are JSON. An invocation and its result travel as core's ``Invocation.to_data()`` /
``InvocationResult.to_data()`` encoded by the workflow's type registry (the same round trip
``SerializingRuntime`` proves in core's suite), so a worker runs exactly what the coordinator
planned. A body over the claim-check threshold travels as a ``BlobRef`` to KV parts instead.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "PROTOCOL_VERSION",
    "BlobRef",
    "TaskMessage",
    "TaskResultMessage",
]

PROTOCOL_VERSION = 1
"""Bumped when a task or result changes shape; a worker refuses other versions."""


class BlobRef(BaseModel):
    """A claim check: a large body stored in KV under ``key``."""

    model_config = ConfigDict(frozen=True)

    key: str
    size: int


class TaskMessage(BaseModel):
    """One executor invocation, as published on ``agentic.task.<pool>.<run>.<step>.<exec>``."""

    protocol: int = PROTOCOL_VERSION
    task_id: str
    """The invocation id ``<run>.<superstep>.<executor>.<attempt>`` (same on redelivery)."""
    run_id: str
    workflow_name: str
    fingerprint: str
    result_subject: str
    """Where the worker stores the result (``Subjects.result``; one subject per task)."""
    invocation: Any = None
    """The encoded ``Invocation.to_data()`` (None when it went by claim check)."""
    blob: BlobRef | None = None
    live: bool = False
    """The coordinator streams this invocation: publish its updates on ``Subjects.live``."""


class TaskResultMessage(BaseModel):
    """What a worker stored for one task, on ``agentic.result.<run>.<step>.<exec>.<attempt>``."""

    protocol: int = PROTOCOL_VERSION
    task_id: str
    status: Literal["ok", "incompatible"]
    result: Any = None
    """The encoded ``InvocationResult.to_data()`` (None when it went by claim check)."""
    blob: BlobRef | None = None
    error: str | None = None
    """Why the worker could not run the task (``incompatible``)."""
    worker_id: str
    delivery: int = 1
    duration_s: float = 0.0
