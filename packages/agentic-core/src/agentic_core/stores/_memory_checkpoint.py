"""``InMemoryCheckpointStore``: checkpoints as immutable records in a dict, indexed by run."""

from __future__ import annotations

import builtins
from datetime import datetime
from operator import itemgetter

from pydantic_core import PydanticSerializationError, from_json, to_json

from agentic_core.protocols._checkpoint import Checkpoint, CheckpointMetadata, trusted_checkpoint
from agentic_core.stores._checkpoint_rules import check_keep_last, checkpoint_order, not_json_able

__all__ = ["InMemoryCheckpointStore"]

_Order = tuple[int, datetime, str]
_Kept = tuple[str, str, str, str, int, str, int, datetime, int, str | None, bytes]
"""A saved checkpoint: its scalar fields as they were (``_HEADER``), then the JSON of its
containers (``_PAYLOAD``). One tuple of immutable values: nothing in it can change, and the
garbage collector stops tracking it, so a store holding many costs the collector nothing."""

_HEADER = (
    "id",
    "workflow_id",
    "workflow_name",
    "run_id",
    "superstep",
    "workflow_fingerprint",
    "schema_version",
    "created_at",
    "outputs_so_far",
    "parent_checkpoint_id",
)
_PAYLOAD = (
    "pending_messages",
    "fan_in_buffers",
    "shared_state",
    "pending_requests",
    "executor_states",
    "outputs",
    "metadata",
)
_header_of = itemgetter(*_HEADER)  # one C call each: this runs at every superstep
_payload_of = itemgetter(*_PAYLOAD)


def _run_id(kept: _Kept) -> str:
    return kept[3]


def _workflow_id(kept: _Kept) -> str:
    return kept[1]


def _kept(checkpoint: Checkpoint) -> _Kept:
    fields = vars(checkpoint)
    try:
        payload = to_json(_payload_of(fields))
    except PydanticSerializationError as exc:
        raise not_json_able(checkpoint, exc) from exc
    return (*_header_of(fields), payload)


def _restored(kept: _Kept) -> Checkpoint:
    """A fresh checkpoint of ``kept``: what a JSON round trip of the saved one gives."""
    (
        checkpoint_id,
        workflow_id,
        workflow_name,
        run_id,
        superstep,
        workflow_fingerprint,
        schema_version,
        created_at,
        outputs_so_far,
        parent_checkpoint_id,
        payload,
    ) = kept
    (
        pending_messages,
        fan_in_buffers,
        shared_state,
        pending_requests,
        executor_states,
        outputs,
        metadata,
    ) = from_json(payload)
    # Not validated again: every value was a field's value when saved, and JSON keeps its type.
    return trusted_checkpoint(
        {
            "id": checkpoint_id,
            "workflow_id": workflow_id,
            "workflow_name": workflow_name,
            "run_id": run_id,
            "superstep": superstep,
            "workflow_fingerprint": workflow_fingerprint,
            "schema_version": schema_version,
            "created_at": created_at,
            "pending_messages": pending_messages,
            "fan_in_buffers": fan_in_buffers,
            "shared_state": shared_state,
            "pending_requests": pending_requests,
            "executor_states": executor_states,
            "outputs_so_far": outputs_so_far,
            "outputs": outputs,
            "metadata": metadata,
            "parent_checkpoint_id": parent_checkpoint_id,
        }
    )


class InMemoryCheckpointStore:
    """A ``CheckpointStore`` in this process's memory, for tests and single-process runs.

    Each checkpoint is kept as an immutable record: its scalar fields, and the JSON of its
    containers (made by pydantic-core, in Rust). So changing the object passed to ``save``, or
    one that ``load`` or ``list`` returned, never changes what the store holds, and ``load``
    returns what a JSON round trip of the saved checkpoint gives (tuples come back as lists,
    say); a value that is not JSON-able is refused on ``save``. Nothing is validated again on
    either side. A per-run index keeps ``latest``, ``list(run_id=...)`` and the clean-ups
    proportional to one run's checkpoints; listings build their metadata when asked. A save or
    a load of a small checkpoint costs about 2 µs. Saving an id again replaces that checkpoint.

    Example:
        ```python
        store = InMemoryCheckpointStore()
        await store.save(checkpoint)
        assert await store.latest(checkpoint.run_id) == checkpoint
        ```
    """

    def __init__(self) -> None:
        self._saved: dict[str, _Kept] = {}
        self._runs: dict[str, dict[str, _Order]] = {}
        """Run id -> checkpoint id -> its place in the run's order."""

    async def save(self, checkpoint: Checkpoint) -> str:
        """Store an immutable copy of ``checkpoint``; returns its id.

        Raises:
            CheckpointError: the checkpoint holds a value that is not JSON-able.
        """
        kept = _kept(checkpoint)
        checkpoint_id, run_id = kept[0], kept[3]
        previous = self._saved.get(checkpoint_id)
        if previous is not None and _run_id(previous) != run_id:
            self._forget_in_run(_run_id(previous), checkpoint_id)
        self._saved[checkpoint_id] = kept
        run = self._runs.get(run_id)
        if run is None:
            run = self._runs[run_id] = {}
        run[checkpoint_id] = checkpoint_order(checkpoint)
        return checkpoint_id

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        """A fresh copy of the checkpoint with this id, or None if the store has none."""
        kept = self._saved.get(checkpoint_id)
        return None if kept is None else _restored(kept)

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        """Metadata of the matching checkpoints, ordered by superstep, then creation time."""
        if run_id is not None:
            candidates = [self._saved[i] for i in self._runs.get(run_id, {})]
        else:
            candidates = list(self._saved.values())
        found = [
            _restored(kept)
            for kept in candidates
            if workflow_id is None or _workflow_id(kept) == workflow_id
        ]
        found.sort(key=checkpoint_order)
        return [checkpoint.to_metadata() for checkpoint in found]  # fresh: nothing is shared

    async def latest(self, run_id: str) -> Checkpoint | None:
        """The run's checkpoint with the highest superstep (newest on ties), or None."""
        run = self._runs.get(run_id)
        if not run:
            return None
        return _restored(self._saved[max(run, key=run.__getitem__)])

    async def delete(self, checkpoint_id: str) -> bool:
        """Remove one checkpoint; True if it existed."""
        kept = self._saved.pop(checkpoint_id, None)
        if kept is None:
            return False
        self._forget_in_run(_run_id(kept), checkpoint_id)
        return True

    async def delete_all(self, run_id: str) -> int:
        """Remove every checkpoint of the run; returns how many there were."""
        run = self._runs.pop(run_id, {})
        for checkpoint_id in run:
            del self._saved[checkpoint_id]
        return len(run)

    async def cleanup_keep_last(self, run_id: str, n: int) -> int:
        """Keep the run's ``n`` newest checkpoints, delete the others; returns how many went.

        Raises:
            ValueError: ``n`` is negative.
        """
        check_keep_last(n)
        run = self._runs.get(run_id)
        if not run or len(run) <= n:
            return 0
        ordered = sorted(run, key=run.__getitem__)
        doomed = ordered[: len(ordered) - n]
        for checkpoint_id in doomed:
            del self._saved[checkpoint_id]
            del run[checkpoint_id]
        if not run:
            del self._runs[run_id]
        return len(doomed)

    def _forget_in_run(self, run_id: str, checkpoint_id: str) -> None:
        run = self._runs.get(run_id)
        if run is not None:
            run.pop(checkpoint_id, None)
            if not run:
                del self._runs[run_id]
