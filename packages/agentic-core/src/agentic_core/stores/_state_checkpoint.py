"""``StateStoreCheckpointStore``: any ``StateStore`` (Redis, SQL, memory) as a checkpoint store.

Key layout under ``prefix`` (ids are percent-encoded, so a ``/`` in an id cannot split a key):

- ``{prefix}/checkpoint/{checkpoint_id}``: the whole checkpoint, ``model_dump(mode="json")``.
- ``{prefix}/run/{run_id}/{checkpoint_id}``: its ``CheckpointMetadata``, the run's index.

A save writes the checkpoint before its index entry and a delete removes the index entry first,
so a listed checkpoint is always complete; a crash in between leaves at worst an unlisted orphan.
"""

from __future__ import annotations

import asyncio
import builtins
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import quote, unquote

from pydantic import ValidationError

from agentic_core._errors import CheckpointError
from agentic_core.protocols._checkpoint import Checkpoint, CheckpointMetadata
from agentic_core.stores._checkpoint_rules import (
    checkpoints_beyond,
    describe_validation_error,
    dump_checkpoint_dict,
    latest_listed_checkpoint,
    select_checkpoints,
)

if TYPE_CHECKING:
    from agentic_core.protocols._state import StateStore

__all__ = ["StateStoreCheckpointStore"]

_Model = TypeVar("_Model", Checkpoint, CheckpointMetadata)


class StateStoreCheckpointStore:
    """A ``CheckpointStore`` on top of any ``StateStore``.

    Each checkpoint takes two keys: its JSON-able data under ``{prefix}/checkpoint/{id}`` and its
    metadata under ``{prefix}/run/{run_id}/{id}`` (ids percent-encoded), so ``load`` is one read
    and ``list``/``latest`` read only small metadata values. With ``ttl_s`` both keys expire
    after that many seconds, which bounds how long a back-end keeps finished runs.

    Data under these keys that is not a valid checkpoint raises ``CheckpointError`` naming the key.
    Saving an id again replaces that checkpoint within its run.

    Example:
        ```python
        checkpoints = StateStoreCheckpointStore(InMemoryStateStore(), ttl_s=24 * 3600)
        await checkpoints.save(checkpoint)
        ```
    """

    def __init__(
        self, store: StateStore, *, prefix: str = "checkpoints", ttl_s: float | None = None
    ) -> None:
        if ttl_s is not None and not ttl_s > 0:
            raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")
        self._store = store
        self._prefix = prefix.rstrip("/")
        self._ttl_s = ttl_s

    @property
    def store(self) -> StateStore:
        """The state store holding the checkpoints."""
        return self._store

    def __repr__(self) -> str:
        return f"StateStoreCheckpointStore({self._store!r}, prefix={self._prefix!r})"

    async def save(self, checkpoint: Checkpoint) -> str:
        """Write the checkpoint, then its index entry; returns its id.

        Raises:
            CheckpointError: the checkpoint holds a value that is not JSON-able.
        """
        data = dump_checkpoint_dict(checkpoint)
        metadata = checkpoint.to_metadata().model_dump(mode="json")
        await self._store.set(self._checkpoint_key(checkpoint.id), data, ttl_s=self._ttl_s)
        index_key = self._index_key(checkpoint.run_id, checkpoint.id)
        await self._store.set(index_key, metadata, ttl_s=self._ttl_s)
        return checkpoint.id

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint with this id, or None if the store has none.

        Raises:
            CheckpointError: the key holds something that is not a valid checkpoint.
        """
        key = self._checkpoint_key(checkpoint_id)
        value = await self._store.get(key)
        return None if value is None else _parse(Checkpoint, value, key)

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        """Metadata of the matching checkpoints, ordered by superstep, then creation time.

        Raises:
            CheckpointError: an index entry is not valid metadata (the message names the key).
        """
        prefix = f"{self._prefix}/run/" if run_id is None else self._run_prefix(run_id)
        keys = await self._store.keys(prefix)
        values = await asyncio.gather(*(self._store.get(key) for key in keys))
        found = (
            _parse(CheckpointMetadata, value, key)
            for key, value in zip(keys, values, strict=True)
            if value is not None
        )
        return select_checkpoints(found, workflow_id=workflow_id)

    async def latest(self, run_id: str) -> Checkpoint | None:
        """The run's checkpoint with the highest superstep (newest on ties), or None."""
        return await latest_listed_checkpoint(self, run_id)

    async def delete(self, checkpoint_id: str) -> bool:
        """Remove one checkpoint and its index entry; True if it existed."""
        key = self._checkpoint_key(checkpoint_id)
        value = await self._store.get(key)
        if value is None:
            return False
        run_id = _run_id_of(value)
        if run_id is not None:
            await self._store.delete(self._index_key(run_id, checkpoint_id))
        return await self._store.delete(key)

    async def delete_all(self, run_id: str) -> int:
        """Remove every checkpoint of the run; returns how many there were."""
        prefix = self._run_prefix(run_id)
        index_keys = await self._store.keys(prefix)
        checkpoint_ids = [unquote(key[len(prefix) :]) for key in index_keys]
        deleted = await asyncio.gather(
            *(self._delete_indexed(run_id, checkpoint_id) for checkpoint_id in checkpoint_ids)
        )
        return sum(deleted)

    async def cleanup_keep_last(self, run_id: str, n: int) -> int:
        """Keep the run's ``n`` newest checkpoints, delete the others; returns how many went.

        Raises:
            ValueError: ``n`` is negative.
        """
        doomed = await checkpoints_beyond(self, run_id, n)
        deleted = await asyncio.gather(
            *(self._delete_indexed(run_id, metadata.id) for metadata in doomed)
        )
        return sum(deleted)

    async def _delete_indexed(self, run_id: str, checkpoint_id: str) -> bool:
        listed = await self._store.delete(self._index_key(run_id, checkpoint_id))
        await self._store.delete(self._checkpoint_key(checkpoint_id))
        return listed

    def _checkpoint_key(self, checkpoint_id: str) -> str:
        return f"{self._prefix}/checkpoint/{quote(checkpoint_id, safe='')}"

    def _run_prefix(self, run_id: str) -> str:
        return f"{self._prefix}/run/{quote(run_id, safe='')}/"

    def _index_key(self, run_id: str, checkpoint_id: str) -> str:
        return f"{self._run_prefix(run_id)}{quote(checkpoint_id, safe='')}"


def _parse(model: type[_Model], value: Any, key: str) -> _Model:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        raise CheckpointError(
            f"state store key {key!r} does not hold a valid {model.__name__}: "
            f"{describe_validation_error(exc)}; delete the key or restore it"
        ) from exc


def _run_id_of(value: Any) -> str | None:
    """The run id inside stored checkpoint data, even if the rest of it is corrupt."""
    if isinstance(value, dict):
        run_id = cast("dict[str, object]", value).get("run_id")
        if isinstance(run_id, str):
            return run_id
    return None
