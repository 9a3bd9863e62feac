"""Checkpoints: the data model (everything a run needs to resume, JSON-able) and the
CheckpointStore protocol."""

from __future__ import annotations

import builtins
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

CHECKPOINT_SCHEMA_VERSION = 1


def _utc_now() -> datetime:
    return datetime.now(UTC)


class CheckpointMetadata(BaseModel):
    """What ``CheckpointStore.list`` returns for each checkpoint (no payload)."""

    model_config = ConfigDict(frozen=True)

    id: str
    workflow_id: str
    run_id: str
    superstep: int
    created_at: datetime


class Checkpoint(BaseModel):
    """The state of a run at a superstep barrier, after all of that superstep's effects.

    Every value inside is already encoded to JSON-able data by the workflow's type registry, so a
    checkpoint serializes with ``model_dump_json()`` and nothing else. ``superstep`` is the last
    completed superstep; a resumed run continues with ``superstep + 1``.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    workflow_id: str
    workflow_name: str
    run_id: str
    superstep: int
    workflow_fingerprint: str
    schema_version: int = CHECKPOINT_SCHEMA_VERSION
    created_at: datetime = Field(default_factory=_utc_now)
    pending_messages: dict[str, list[Any]] = Field(default_factory=dict[str, list[Any]])
    """Executor id -> encoded messages waiting for the next superstep."""
    fan_in_buffers: dict[str, dict[str, list[Any]]] = Field(
        default_factory=dict[str, dict[str, list[Any]]]
    )
    """Fan-in edge key -> source id -> encoded messages buffered since the last delivery."""
    shared_state: dict[str, Any] = Field(default_factory=dict[str, Any])
    """Key -> encoded value."""
    pending_requests: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    """Open ``request_info`` requests: request_id, source_executor_id, data, response_type."""
    executor_states: dict[str, Any] = Field(default_factory=dict[str, Any])
    """Executor id -> its ``snapshot_state()`` (encoded)."""
    outputs_so_far: int = 0
    """How many outputs the run had yielded up to and including ``superstep``."""
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])
    """Free-form extra data (JSON-able) for runtimes and tools."""

    def to_metadata(self) -> CheckpointMetadata:
        """The listing entry of this checkpoint."""
        return CheckpointMetadata(
            id=self.id,
            workflow_id=self.workflow_id,
            run_id=self.run_id,
            superstep=self.superstep,
            created_at=self.created_at,
        )


@runtime_checkable
class CheckpointStore(Protocol):
    """Where a workflow saves a checkpoint at every superstep barrier.

    ``save`` is atomic: a reader sees the whole checkpoint or none of it. A saved checkpoint is
    immutable: later changes to the object passed to ``save`` or returned by ``load`` never
    change what the store holds. ``list`` and ``latest`` order by superstep, then creation time.
    """

    async def save(self, checkpoint: Checkpoint) -> str: ...

    async def load(self, checkpoint_id: str) -> Checkpoint | None: ...

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]: ...

    async def latest(self, run_id: str) -> Checkpoint | None: ...

    async def delete(self, checkpoint_id: str) -> bool: ...

    async def delete_all(self, run_id: str) -> int: ...

    async def cleanup_keep_last(self, run_id: str, n: int) -> int: ...
