"""``InMemoryCheckpointStore``: checkpoints as JSON text in a dict, indexed by run."""

from __future__ import annotations

import builtins
from dataclasses import dataclass

from agentic_core.protocols._checkpoint import Checkpoint, CheckpointMetadata
from agentic_core.stores._checkpoint_rules import (
    check_keep_last,
    checkpoint_order,
    dump_checkpoint_json,
)

__all__ = ["InMemoryCheckpointStore"]


@dataclass(frozen=True, slots=True)
class _Saved:
    text: str
    """``model_dump_json()`` of the checkpoint: every ``load`` parses a fresh copy."""
    metadata: CheckpointMetadata
    """Frozen, but its list of pending request ids is not: ``list`` hands out copies."""


class InMemoryCheckpointStore:
    """A ``CheckpointStore`` in this process's memory, for tests and single-process runs.

    Each checkpoint is kept as its JSON text, so it is immutable once saved: changing the object
    passed to ``save``, or one that ``load`` or ``list`` returned, never changes what the store
    holds. A per-run index keeps ``latest``, ``list(run_id=...)`` and the clean-ups proportional
    to one run's checkpoints. A save costs one ``model_dump_json()``, one ``to_metadata()`` and two
    dict writes (a few microseconds for a small checkpoint). Saving an id again replaces that
    checkpoint.

    Example:
        ```python
        store = InMemoryCheckpointStore()
        await store.save(checkpoint)
        assert await store.latest(checkpoint.run_id) == checkpoint
        ```
    """

    def __init__(self) -> None:
        self._saved: dict[str, _Saved] = {}
        self._runs: dict[str, dict[str, CheckpointMetadata]] = {}
        """Run id -> checkpoint id -> metadata."""

    async def save(self, checkpoint: Checkpoint) -> str:
        """Store an immutable copy of ``checkpoint``; returns its id.

        Raises:
            CheckpointError: the checkpoint holds a value that is not JSON-able.
        """
        saved = _Saved(dump_checkpoint_json(checkpoint), checkpoint.to_metadata())
        previous = self._saved.get(checkpoint.id)
        if previous is not None and previous.metadata.run_id != checkpoint.run_id:
            self._forget_in_run(previous.metadata)
        self._saved[checkpoint.id] = saved
        self._runs.setdefault(checkpoint.run_id, {})[checkpoint.id] = saved.metadata
        return checkpoint.id

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        """A fresh copy of the checkpoint with this id, or None if the store has none."""
        saved = self._saved.get(checkpoint_id)
        return None if saved is None else Checkpoint.model_validate_json(saved.text)

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        """Metadata of the matching checkpoints, ordered by superstep, then creation time."""
        if run_id is not None:
            candidates = self._runs.get(run_id, {}).values()
        else:
            candidates = (saved.metadata for saved in self._saved.values())
        found = [
            _handed_out(m)
            for m in candidates
            if workflow_id is None or m.workflow_id == workflow_id
        ]
        found.sort(key=checkpoint_order)
        return found

    async def latest(self, run_id: str) -> Checkpoint | None:
        """The run's checkpoint with the highest superstep (newest on ties), or None."""
        run = self._runs.get(run_id)
        if not run:
            return None
        newest = max(run.values(), key=checkpoint_order)
        return await self.load(newest.id)

    async def delete(self, checkpoint_id: str) -> bool:
        """Remove one checkpoint; True if it existed."""
        saved = self._saved.pop(checkpoint_id, None)
        if saved is None:
            return False
        self._forget_in_run(saved.metadata)
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
        ordered = sorted(run.values(), key=checkpoint_order)
        doomed = ordered[: len(ordered) - n]
        for metadata in doomed:
            del self._saved[metadata.id]
            del run[metadata.id]
        if not run:
            del self._runs[run_id]
        return len(doomed)

    def _forget_in_run(self, metadata: CheckpointMetadata) -> None:
        run = self._runs.get(metadata.run_id)
        if run is not None:
            run.pop(metadata.id, None)
            if not run:
                del self._runs[metadata.run_id]


def _handed_out(metadata: CheckpointMetadata) -> CheckpointMetadata:
    """A copy of ``metadata`` with its own list of pending request ids, safe to give a caller.

    The model is frozen but a list inside it is not, and even an empty one can be appended to.
    Copying here (about 2 µs an entry) keeps ``save`` at one metadata object per checkpoint.
    """
    return metadata.model_copy(update={"pending_request_ids": list(metadata.pending_request_ids)})
