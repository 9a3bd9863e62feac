"""Checkpoints: the data model (everything a run needs to resume, JSON-able) and the
CheckpointStore protocol."""

from __future__ import annotations

import builtins
from datetime import UTC, datetime
from typing import Any, Protocol, TypedDict, cast, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from agentic_core.protocols._trusted import trusted

CHECKPOINT_SCHEMA_VERSION = 1
"""Readers refuse a newer version. A field added with a default that older readers may ignore
(``outputs``) keeps the version: old checkpoints load with the default, new ones load in older
readers without it."""

CHECKPOINT_OUTPUTS_MAX_COUNT = 100
"""At most this many outputs are stored in ``Checkpoint.outputs`` (the newest ones)."""
CHECKPOINT_OUTPUTS_MAX_BYTES = 1_000_000
"""At most about this many bytes of encoded JSON are stored in ``Checkpoint.outputs``."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


class CheckpointMetadata(BaseModel):
    """What ``CheckpointStore.list`` returns for each checkpoint (no payload)."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
    workflow_id: str
    run_id: str
    superstep: int
    created_at: datetime
    parent_checkpoint_id: str | None = None
    """The checkpoint of another run this one was forked from (set on a fork's first one)."""
    pending_request_ids: list[str] = Field(default_factory=list[str])
    """Requests awaiting an answer at this checkpoint: a listing shows which runs wait."""


class Checkpoint(BaseModel):
    """The state of a run at a superstep barrier, after all of that superstep's effects.

    Every value inside is already encoded to JSON-able data by the workflow's type registry, so a
    checkpoint serializes with ``model_dump_json()`` and nothing else. ``superstep`` is the last
    completed superstep; a resumed run continues with ``superstep + 1``.
    """

    model_config = ConfigDict(frozen=True, defer_build=True)

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
    outputs: list[Any] | None = None
    """The run's outputs (encoded), on a checkpoint where a call of the run ends: the run
    completed, or waits for answers. ``None`` on the other checkpoints (and on those written
    before this field). Bounded: the newest outputs only, at most
    ``CHECKPOINT_OUTPUTS_MAX_COUNT`` of them and about ``CHECKPOINT_OUTPUTS_MAX_BYTES`` of JSON
    (an output that cannot be encoded stops the list there too). When cut, the list is the last
    ``len(outputs)`` of the ``outputs_so_far`` outputs: the first
    ``outputs_so_far - len(outputs)`` are left out."""
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])
    """Free-form extra data (JSON-able) for runtimes and tools."""
    parent_checkpoint_id: str | None = None
    """The checkpoint of another run this run was forked from (on the fork's first one)."""

    @property
    def pending_request_ids(self) -> list[str]:
        """Ids of the requests awaiting an answer at this checkpoint."""
        ids: list[str] = []
        for request in self.pending_requests:
            value: object = request.get("v", request)  # encoded: {"$t": tag, "v": fields}
            if isinstance(value, dict):
                request_id = cast("dict[str, object]", value).get("request_id")
                if isinstance(request_id, str):
                    ids.append(request_id)
        return ids

    def to_metadata(self) -> CheckpointMetadata:
        """The listing entry of this checkpoint."""
        return CheckpointMetadata(
            id=self.id,
            workflow_id=self.workflow_id,
            run_id=self.run_id,
            superstep=self.superstep,
            created_at=self.created_at,
            parent_checkpoint_id=self.parent_checkpoint_id,
            pending_request_ids=self.pending_request_ids,
        )


class CheckpointFields(TypedDict):
    """Every field of a ``Checkpoint``, in declaration order: what ``trusted_checkpoint`` takes."""

    id: str
    workflow_id: str
    workflow_name: str
    run_id: str
    superstep: int
    workflow_fingerprint: str
    schema_version: int
    created_at: datetime
    pending_messages: dict[str, list[Any]]
    fan_in_buffers: dict[str, dict[str, list[Any]]]
    shared_state: dict[str, Any]
    pending_requests: list[dict[str, Any]]
    executor_states: dict[str, Any]
    outputs_so_far: int
    outputs: list[Any] | None
    metadata: dict[str, Any]
    parent_checkpoint_id: str | None


_ALL_FIELDS = frozenset(CheckpointFields.__annotations__)


def trusted_checkpoint(fields: CheckpointFields) -> Checkpoint:
    """``Checkpoint(**fields)``, built without validating ``fields``: for values known right.

    The engine writes a checkpoint per superstep from values it built itself (encoded by the
    type registry); validating them again was most of a checkpoint's cost. The result equals
    the validated checkpoint, with the same fields set (all of them). ``fields`` must be a
    fresh dict, in declaration order, each value already of its field's type: nothing is
    checked, and the checkpoint keeps the dict and the containers in it as they are.
    """
    return trusted(Checkpoint, fields, set(_ALL_FIELDS))


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
