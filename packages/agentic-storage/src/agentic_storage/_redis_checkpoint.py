"""``RedisCheckpointStore``: core's ``CheckpointStore`` on Redis, each change one atomic script."""

from __future__ import annotations

import builtins
from datetime import UTC, datetime
from typing import TypeVar, cast

import redis.asyncio as aioredis
import redis.exceptions as redis_errors
from pydantic import ValidationError

from agentic_core import Checkpoint, CheckpointError, CheckpointMetadata, StorageError
from agentic_core.stores import (
    ForeignValueError,
    checkpoints_beyond,
    describe_validation_error,
    dump_checkpoint_json,
    latest_listed_checkpoint,
    select_checkpoints,
)
from agentic_storage._codec import decode_text, encode_text
from agentic_storage._redis_checkpoint_scripts import DELETE_IDS, DELETE_RUN, SAVE, LuaScript
from agentic_storage._redis_client import DEFAULT_REDIS_URL, RedisBacked, RedisConnection

__all__ = ["RedisCheckpointStore"]

_Model = TypeVar("_Model", Checkpoint, CheckpointMetadata)

DEFAULT_COMPRESS_ABOVE_BYTES = 256 * 1024
DEFAULT_MAX_VALUE_BYTES = 512 * 1024 * 1024  # Redis's own limit on one value (proto-max-bulk-len)


class RedisCheckpointStore(RedisBacked):
    """A ``CheckpointStore`` in Redis: a hash per checkpoint, sorted-set indexes per run, workflow.

    ``save`` is one Lua script writing the checkpoint and every index entry, so Redis applies it
    whole or not at all; ``delete``, ``delete_all`` and ``cleanup_keep_last`` are scripts too.
    A save is idempotent by checkpoint id: when Redis does not answer in time (paused,
    overloaded, a connection cut), ``save`` raises ``StorageError`` saying the checkpoint may or
    may not have been saved, since Redis can still apply the request it received; saving the same
    checkpoint again is always safe and leaves exactly one entry.
    ``list`` and ``latest`` read only the small metadata kept beside each checkpoint. A
    checkpoint whose JSON is over ``compress_above_bytes`` is stored zstd-compressed; one still
    over ``max_value_bytes`` is refused with ``CheckpointError`` before anything is written.

    With ``ttl_days`` a run's checkpoints and indexes expire that long after its last save (each
    save refreshes the whole run). Data under the prefix that is not a valid checkpoint raises
    ``CheckpointError`` naming the key; an unreachable server raises ``StorageError`` naming the
    URL (password masked) after redis-py's retries, and the next call reconnects on its own.
    Targets a standalone Redis (or a primary with replicas), not Redis Cluster.

    Args:
        url: a ``redis://`` / ``rediss://`` / ``unix://`` URL, or a ``redis.asyncio.Redis``
            client to use as it is (never closed by the store).
        prefix: namespace of this store's keys.
        ttl_days: how long a run's checkpoints live after its last save (None: forever).
        compress_above_bytes: compress checkpoints whose JSON is larger (None: never).
        max_value_bytes: refuse checkpoints larger than this once encoded.
        socket_timeout_s, retries, max_connections: as for ``RedisStateStore``.

    Example:
        ```python
        checkpoints = RedisCheckpointStore("redis://127.0.0.1:6379/0", ttl_days=7)
        result = await workflow.run("hello", checkpoint_store=checkpoints)
        ```
    """

    def __init__(
        self,
        url: str | aioredis.Redis = DEFAULT_REDIS_URL,
        *,
        prefix: str = "agentic:checkpoints",
        ttl_days: float | None = None,
        compress_above_bytes: int | None = DEFAULT_COMPRESS_ABOVE_BYTES,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        socket_timeout_s: float = 5.0,
        retries: int = 3,
        max_connections: int | None = None,
    ) -> None:
        if ttl_days is not None and not ttl_days > 0:
            raise ValueError(f"ttl_days must be a positive number of days, got {ttl_days!r}")
        if compress_above_bytes is not None and compress_above_bytes < 0:
            raise ValueError(f"compress_above_bytes must be >= 0, got {compress_above_bytes!r}")
        if max_value_bytes < 1:
            raise ValueError(f"max_value_bytes must be >= 1, got {max_value_bytes!r}")
        self._connection = RedisConnection(
            url,
            socket_timeout_s=socket_timeout_s,
            retries=retries,
            max_connections=max_connections,
        )
        self._prefix = prefix
        self._ttl_ms = 0 if ttl_days is None else max(1, round(ttl_days * 86_400_000))
        self._compress_above = compress_above_bytes
        self._max_value_bytes = max_value_bytes
        self._cp = f"{prefix}:cp:"
        self._run = f"{prefix}:run:"
        self._workflow = f"{prefix}:workflow:"
        self._index = f"{prefix}:index"

    def __repr__(self) -> str:
        return f"RedisCheckpointStore({self._connection.label!r}, prefix={self._prefix!r})"

    def checkpoint_key(self, checkpoint_id: str) -> str:
        """The Redis key (a hash) holding one checkpoint."""
        return self._cp + checkpoint_id

    async def save(self, checkpoint: Checkpoint) -> str:
        """Write the checkpoint and its index entries in one atomic script; returns its id.

        Saving a checkpoint id again overwrites it with the same entries (the index scores come
        from the checkpoint, not the clock), so retrying a save is always safe.

        Raises:
            CheckpointError: it holds a value that is not JSON-able, or it is too large
                (nothing was written).
            StorageError: Redis did not answer: the save may or may not have been applied,
                now or once Redis resumes; retry ``save`` with the same checkpoint.
        """
        text = dump_checkpoint_json(checkpoint)
        data = encode_text(text, compress_above=self._compress_above)
        if len(data) > self._max_value_bytes:
            raise CheckpointError(
                f"checkpoint {checkpoint.id!r} of run {checkpoint.run_id!r} is {len(data):,} bytes "
                f"once encoded, over this store's limit of {self._max_value_bytes:,} bytes for one "
                "Redis value; nothing was written: keep large payloads outside the workflow state "
                "(store them elsewhere and checkpoint a reference)"
            )
        meta = checkpoint.to_metadata().model_dump_json()
        key = self.checkpoint_key(checkpoint.id)
        client = await self._connection.client()
        try:
            await _run_script(
                client,
                SAVE,
                [
                    key,
                    self._run + checkpoint.run_id,
                    self._workflow + checkpoint.workflow_id,
                    self._index,
                ],
                checkpoint.id,
                data,
                meta,
                checkpoint.run_id,
                checkpoint.workflow_id,
                checkpoint.superstep,
                _epoch_s(checkpoint.created_at),
                self._ttl_ms,
                self._cp,
                self._run,
                self._workflow,
            )
        except (redis_errors.ConnectionError, redis_errors.TimeoutError) as exc:
            raise self._save_maybe_applied(checkpoint, exc, key) from exc
        except redis_errors.RedisError as exc:
            raise self._connection.storage_error(exc, key=_foreign_key(exc) or key) from exc
        return checkpoint.id

    def _save_maybe_applied(
        self, checkpoint: Checkpoint, exc: redis_errors.RedisError, key: str
    ) -> StorageError:
        # The script may have reached Redis before the connection failed or timed out (a
        # paused or overloaded server runs it later): say so, and that a retry is safe.
        cause = self._connection.storage_error(exc, key=key)
        return StorageError(
            f"{cause} Checkpoint {checkpoint.id!r} may or may not have been saved (Redis may "
            "still apply a request it received): saving the same checkpoint again is safe, a "
            "save is idempotent by checkpoint id"
        )

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint with this id, or None if the store has none.

        Raises:
            CheckpointError: the key holds something that is not a valid checkpoint.
        """
        key = self.checkpoint_key(checkpoint_id)
        client = await self._connection.client()
        try:
            data = cast("bytes | None", await client.hget(key, "data"))  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]
        except redis_errors.ResponseError as exc:
            if str(exc).startswith("WRONGTYPE"):
                raise self._corrupt(key, "a Redis value of another type, not a hash") from None
            raise self._connection.storage_error(exc, key=key) from exc
        except redis_errors.RedisError as exc:
            raise self._connection.storage_error(exc, key=key) from exc
        if data is None:
            return None
        try:
            text = decode_text(data)
        except ForeignValueError as exc:
            raise self._corrupt(key, str(exc)) from None
        return self._parse(Checkpoint, text, key)

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        """Metadata of the matching checkpoints, ordered by superstep, then creation time.

        Raises:
            CheckpointError: an entry's metadata is not valid (the message names the key).
        """
        if run_id is not None:
            index = self._run + run_id
        elif workflow_id is not None:
            index = self._workflow + workflow_id
        else:
            index = self._index
        client = await self._connection.client()
        with self._connection.errors(key=index):
            ids = cast("builtins.list[bytes]", await client.zrange(index, 0, -1))  # pyright: ignore[reportUnknownMemberType]
            pipe = client.pipeline(transaction=False)
            for raw_id in ids:
                pipe.hget(self._cp + raw_id.decode(), "meta")  # pyright: ignore[reportUnknownMemberType]
            metas: builtins.list[bytes | None] = await pipe.execute() if ids else []
        found = [
            self._parse(CheckpointMetadata, meta.decode(), self._cp + raw_id.decode())
            for raw_id, meta in zip(ids, metas, strict=True)
            if meta is not None  # None: expired, or deleted between the two reads
        ]
        return select_checkpoints(found, run_id=run_id, workflow_id=workflow_id)

    async def latest(self, run_id: str) -> Checkpoint | None:
        """The run's checkpoint with the highest superstep (newest on ties), or None."""
        return await latest_listed_checkpoint(self, run_id)

    async def delete(self, checkpoint_id: str) -> bool:
        """Remove one checkpoint and its index entries; True if it existed."""
        return await self._delete_ids([checkpoint_id]) == 1

    async def delete_all(self, run_id: str) -> int:
        """Remove every checkpoint of the run; returns how many there were."""
        key = self._run + run_id
        client = await self._connection.client()
        with self._connection.errors(key=key):
            count = await _run_script(
                client, DELETE_RUN, [key], self._cp, self._run, self._workflow, self._index
            )
        return int(count)

    async def cleanup_keep_last(self, run_id: str, n: int) -> int:
        """Keep the run's ``n`` newest checkpoints, delete the others; returns how many went.

        Raises:
            ValueError: ``n`` is negative.
        """
        doomed = await checkpoints_beyond(self, run_id, n)
        if not doomed:
            return 0
        return await self._delete_ids([metadata.id for metadata in doomed])

    async def _delete_ids(self, ids: builtins.list[str]) -> int:
        client = await self._connection.client()
        with self._connection.errors(key=self.checkpoint_key(ids[0])):
            count = await _run_script(
                client, DELETE_IDS, [], self._cp, self._run, self._workflow, self._index, *ids
            )
        return int(count)

    def _parse(self, model: type[_Model], text: str, key: str) -> _Model:
        try:
            return model.model_validate_json(text)
        except ValidationError as exc:
            problem = describe_validation_error(exc)
            raise self._corrupt(key, f"not a valid {model.__name__} ({problem})") from None

    def _corrupt(self, key: str, why: str) -> CheckpointError:
        return CheckpointError(
            f"Redis key {key!r} at {self._connection.label} does not hold a valid checkpoint: "
            f"{why}; delete the key or restore it"
        )


def _foreign_key(exc: redis_errors.RedisError) -> str | None:
    """The key ``SAVE`` refused as holding another type (its ``WRONGTYPE key K holds a T``)."""
    text = str(exc)
    if not text.startswith("WRONGTYPE key ") or " holds a " not in text:
        return None
    return text.removeprefix("WRONGTYPE key ").rpartition(" holds a ")[0]


def _epoch_s(moment: datetime) -> float:
    """``moment`` in seconds since the epoch (a naive time read as UTC, as ``checkpoint_order``)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


async def _run_script(
    client: aioredis.Redis, script: LuaScript, keys: builtins.list[str], *args: str | bytes | float
) -> int:
    """Run ``script`` by its SHA, sending its text only when the server has not cached it."""
    try:
        result = await client.evalsha(script.sha, len(keys), *keys, *args)  # pyright: ignore[reportUnknownMemberType]
    except redis_errors.NoScriptError:
        result = await client.eval(script.text, len(keys), *keys, *args)  # pyright: ignore[reportUnknownMemberType]
    return int(cast("int", result))
