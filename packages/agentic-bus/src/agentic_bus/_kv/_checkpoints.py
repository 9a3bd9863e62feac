"""``NatsCheckpointStore``: core's ``CheckpointStore`` on JetStream KV, with run fencing.

Layout in the bucket (``<run>`` and ``<id>`` escaped by ``_keys.encode_key``, one token each):

* ``cp.<id>``: the checkpoint's JSON (in parts past ``inline_limit``), header ``Agentic-Run:
  <run>``. ``load`` is one read of this key.
* ``run.<run>.cp.<id>``: the checkpoint's ``CheckpointMetadata``, small. ``list(run_id=)`` reads
  only the keys ``run.<run>.cp.*`` (one ephemeral consumer filtered on them); ``list()`` reads
  ``run.*.cp.*``.
* ``run.<run>.head``: the ``RunHead`` of a claimed run: the coordinator's epoch and the checkpoint
  it last committed, changed only by compare-and-set.

``save`` writes the body, then the metadata (so a listed checkpoint always loads), then, for a
run this store instance claimed, moves the head. Deletes go the other way.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final, NoReturn, TypeVar

import structlog
from nats.aio.client import Client as NatsClient
from pydantic import BaseModel, ConfigDict, ValidationError

from agentic_bus._bus import NatsBus
from agentic_bus._connect import DEFAULT_NATS_URL
from agentic_bus._errors import CoordinatorFencedError
from agentic_bus._kv._bucket import KVBacked, KVBucket, RevisionMismatchError, StoredValueError
from agentic_bus._kv._connection import KVConnection
from agentic_bus._kv._keys import encode_key
from agentic_core import Checkpoint, CheckpointError, CheckpointMetadata, StorageError
from agentic_core.stores import (
    checkpoints_beyond,
    describe_validation_error,
    dump_checkpoint_json,
    latest_listed_checkpoint,
    select_checkpoints,
)

__all__ = ["NatsCheckpointStore", "RunHead"]

_log = structlog.get_logger("agentic_bus")

_Model = TypeVar("_Model", Checkpoint, CheckpointMetadata)

_RUN_HEADER: Final = "Agentic-Run"
_HEAD_SCHEMA_VERSION: Final = 1
_MAX_CLAIM_ATTEMPTS: Final = 64
_MAX_HEAD_ATTEMPTS: Final = 8


class RunHead(BaseModel):
    """The head of a claimed run (key ``run.<run>.head``): who coordinates it, what it committed.

    ``epoch`` grows by one with every ``claim_run``; ``checkpoint_id`` and ``superstep`` name the
    checkpoint the run's current coordinator last committed (at the first claim: the run's latest
    checkpoint then, if any). For a claimed run, ``latest()`` is this checkpoint.

    Example:
        ```python
        head = await store.head(run_id)
        if head is not None:
            print(head.epoch, head.coordinator_id, head.checkpoint_id)
        ```
    """

    model_config = ConfigDict(frozen=True)

    schema_version: int = _HEAD_SCHEMA_VERSION
    run_id: str
    epoch: int
    coordinator_id: str
    checkpoint_id: str | None = None
    superstep: int | None = None
    updated_at: datetime


@dataclass(slots=True)
class _Claim:
    """This store instance's claim of a run: its epoch and the head revision it last wrote."""

    run_id: str
    coordinator_id: str
    epoch: int
    revision: int
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class NatsCheckpointStore(KVBacked):
    """A ``CheckpointStore`` in a NATS JetStream KV bucket, with fencing for distributed runs.

    Each checkpoint is its own key (``load`` by id is one read), with its metadata under a
    per-run key, so ``list(run_id=...)`` and ``latest`` read only that run's small metadata
    keys. A checkpoint larger than ``inline_limit`` once encoded is stored as parts of 512 KiB
    with a checked sha256. A checkpoint holding a value that is not JSON-able raises
    ``CheckpointError`` before anything is written; one whose stored data is corrupt raises
    ``CheckpointError`` naming its id; an unreachable server raises ``StorageError`` naming the
    URL (credentials redacted).

    **Fencing.** ``claim_run(run_id, coordinator_id)`` makes this store instance the run's
    coordinator: it bumps the epoch in the run's head key by compare-and-set and returns it.
    From then on every ``save`` of that run moves the head to the new checkpoint, again by
    compare-and-set; if another instance or process claimed the run meanwhile, ``save`` raises
    ``CoordinatorFencedError`` naming both epochs, and its checkpoint never becomes ``latest()``
    (for a claimed run, ``latest`` is the checkpoint the head names). Runs this instance never
    claimed are saved like in any checkpoint store, without fencing.

    Args:
        servers: a ``nats://`` URL, several for a cluster, a ``NatsBus``, or a nats-py client
            (a bus or client given is never closed by the store).
        bucket: the KV bucket (created with history 5, file storage).
        connect_timeout_s: bound on the first connection.
        replicas: the bucket's replicas when it is created (1 to 5).
        inline_limit: checkpoints whose JSON is larger are stored as parts.
        timeout_s: bound on each JetStream request.

    Example:
        ```python
        store = NatsCheckpointStore("nats://127.0.0.1:4222")
        result = await workflow.run("hello", checkpoint_store=store)
        epoch = await store.claim_run(result.run_id, "coordinator-a")
        checkpoint = await store.latest(result.run_id)
        ```
    """

    def __init__(
        self,
        servers: str | Sequence[str] | NatsBus | NatsClient = DEFAULT_NATS_URL,
        *,
        bucket: str = "agentic_checkpoints",
        connect_timeout_s: float = 5.0,
        replicas: int = 1,
        inline_limit: int = 256 * 1024,
        timeout_s: float = 5.0,
    ) -> None:
        self._bucket = KVBucket(
            KVConnection(
                servers,
                bucket=bucket,
                history=5,
                replicas=replicas,
                connect_timeout_s=connect_timeout_s,
                timeout_s=timeout_s,
                inline_limit=inline_limit,
                needs_ttl=False,
                owner="NatsCheckpointStore",
            )
        )
        self._claims: dict[str, _Claim] = {}

    # -- the CheckpointStore protocol ------------------------------------------------------------

    async def save(self, checkpoint: Checkpoint) -> str:
        """Write the checkpoint (and, for a run this store claimed, move the head); its id.

        Raises:
            CheckpointError: it holds a value that is not JSON-able (nothing was written).
            CoordinatorFencedError: this store claimed the run, and another claimed it since;
                the checkpoint was not committed (and is removed again).
            StorageError: the server is unreachable.
        """
        text = dump_checkpoint_json(checkpoint)
        claim = self._claims.get(checkpoint.run_id)
        if claim is None:
            await self._write(checkpoint, text)
            return checkpoint.id
        async with claim.lock:  # one head move at a time per claimed run
            await self._check_claim(claim, checkpoint)
            await self._write(checkpoint, text)
            await self._move_head(claim, checkpoint)
        return checkpoint.id

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        """The checkpoint with this id, or None if the store has none.

        Raises:
            CheckpointError: the stored data is not a valid checkpoint (the message names the id).
            StorageError: the server is unreachable.
        """
        what = f"checkpoint {checkpoint_id!r}"
        try:
            stored = await self._bucket.read(_body_key(checkpoint_id), what=what)
        except StoredValueError as exc:
            raise self._corrupt(what, exc.reason) from None
        if stored is None:
            return None
        checkpoint = self._parse(Checkpoint, stored.body, what)
        if checkpoint.id != checkpoint_id:
            raise self._corrupt(what, f"it holds checkpoint {checkpoint.id!r}")
        return checkpoint

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        """Metadata of the matching checkpoints, ordered by superstep, then creation time.

        With ``run_id`` only that run's metadata keys are read.

        Raises:
            CheckpointError: an entry's metadata is not valid (the message names the key).
        """
        pattern = "run.*.cp.*" if run_id is None else f"run.{encode_key(run_id)}.cp.*"
        try:
            stored = await self._bucket.scan_values(pattern, what="checkpoint metadata")
        except StoredValueError as exc:
            raise self._corrupt(f"the metadata under key {exc.kv_key!r}", exc.reason) from None
        found = (
            self._parse(CheckpointMetadata, value.body, f"the metadata under key {value.kv_key!r}")
            for value in stored
        )
        return select_checkpoints(found, run_id=run_id, workflow_id=workflow_id)

    async def latest(self, run_id: str) -> Checkpoint | None:
        """The run's newest checkpoint, or None.

        For a claimed run: the checkpoint its head names (what its coordinator committed last).
        Otherwise: the highest superstep, newest on ties.
        """
        head = await self.head(run_id)
        if head is None:
            return await latest_listed_checkpoint(self, run_id)
        if head.checkpoint_id is None:
            return None
        checkpoint = await self.load(head.checkpoint_id)
        return checkpoint if checkpoint is not None and checkpoint.run_id == run_id else None

    async def delete(self, checkpoint_id: str) -> bool:
        """Remove one checkpoint (its metadata first, then its data); True if it existed."""
        what = f"checkpoint {checkpoint_id!r}"
        body_key = _body_key(checkpoint_id)
        headers = await self._bucket.headers(body_key, what=what)
        if headers is None:
            return False
        id_token = encode_key(checkpoint_id)
        run_token = headers.get(_RUN_HEADER)
        if run_token:
            meta_keys = [f"run.{run_token}.cp.{id_token}"]
        else:  # data not written by this store: find its metadata by the id alone
            found = await self._bucket.scan(
                f"run.*.cp.{id_token}", what=f"metadata of {what}", headers_only=True
            )
            meta_keys = [entry.kv_key for entry in found]
        for meta_key in meta_keys:
            await self._bucket.remove(meta_key, what=f"metadata of {what}")
        return await self._bucket.remove(body_key, what=what) is not None

    async def delete_all(self, run_id: str) -> int:
        """Remove every checkpoint of the run, and its head; returns how many checkpoints."""
        run_token = encode_key(run_id)
        entries = await self._bucket.scan(
            f"run.{run_token}.cp.*", what=f"checkpoints of run {run_id!r}", headers_only=True
        )
        tokens = [entry.kv_key.rsplit(".", 1)[1] for entry in entries]
        removed = await asyncio.gather(*(self._delete_token(run_token, t) for t in tokens))
        await self._bucket.remove(_head_key(run_id), what=f"the head of run {run_id!r}")
        self._claims.pop(run_id, None)
        return sum(removed)

    async def cleanup_keep_last(self, run_id: str, n: int) -> int:
        """Keep the run's ``n`` newest checkpoints, delete the others; returns how many went.

        For a claimed run the checkpoint its head names is kept too (``n`` > 0).

        Raises:
            ValueError: ``n`` is negative.
        """
        doomed = await checkpoints_beyond(self, run_id, n)
        if not doomed:
            return 0
        head = await self.head(run_id) if n > 0 else None
        keep = head.checkpoint_id if head is not None else None
        run_token = encode_key(run_id)
        removed = await asyncio.gather(
            *(
                self._delete_token(run_token, encode_key(metadata.id))
                for metadata in doomed
                if metadata.id != keep
            )
        )
        return sum(removed)

    # -- fencing ---------------------------------------------------------------------------------

    async def claim_run(self, run_id: str, coordinator_id: str) -> int:
        """Make this store instance the run's coordinator; returns the new (fencing) epoch.

        Bumps ``epoch`` in the head ``run.<run>.head`` by compare-and-set (``kv.update`` with
        the revision read; ``kv.create`` for a run without a head, so a race to create it has
        one winner), retrying on a conflict. Every later ``save`` of the run by this instance
        moves the head, and fails with ``CoordinatorFencedError`` once another claim won.

        Raises:
            ValueError: ``coordinator_id`` is empty.
            CheckpointError: the head holds data that is not a valid ``RunHead``.
            StorageError: the server is unreachable.

        Example:
            ```python
            epoch = await store.claim_run(run_id, "coordinator-a")  # 1 for a new run
            await store.save(checkpoint)  # moves the head, fenced by the epoch
            ```
        """
        if not coordinator_id:
            raise ValueError("claim_run needs a non-empty coordinator_id")
        key = _head_key(run_id)
        for _ in range(_MAX_CLAIM_ATTEMPTS):
            current, revision = await self._read_head(run_id)
            now = datetime.now(UTC)
            if current is None:
                latest = await latest_listed_checkpoint(self, run_id)
                head = RunHead(
                    run_id=run_id,
                    epoch=1,
                    coordinator_id=coordinator_id,
                    checkpoint_id=None if latest is None else latest.id,
                    superstep=None if latest is None else latest.superstep,
                    updated_at=now,
                )
            else:
                head = current.model_copy(
                    update={
                        "epoch": current.epoch + 1,
                        "coordinator_id": coordinator_id,
                        "updated_at": now,
                    }
                )
            try:
                revision = await self._bucket.compare_and_set(
                    key,
                    head.model_dump_json().encode(),
                    last=revision,
                    what=f"the head of run {run_id!r}",
                )
            except RevisionMismatchError:
                continue  # claimed or saved by another meanwhile: read again
            self._claims[run_id] = _Claim(run_id, coordinator_id, head.epoch, revision)
            _log.info("run_claimed", run=run_id, epoch=head.epoch, coordinator=coordinator_id)
            return head.epoch
        raise CheckpointError(
            f"could not claim run {run_id!r}: its head changed {_MAX_CLAIM_ATTEMPTS} times "
            "while this claim tried; try again"
        )

    async def head(self, run_id: str) -> RunHead | None:
        """The run's head (epoch, coordinator, committed checkpoint), or None if never claimed.

        Raises:
            CheckpointError: the head key holds data that is not a valid ``RunHead``.
        """
        head, _ = await self._read_head(run_id)
        return head

    async def release_run(self, run_id: str) -> None:
        """Forget this instance's claim of the run: later saves of it are not fenced.

        The head stays as it is (a later ``claim_run`` from anywhere continues its epochs).
        """
        self._claims.pop(run_id, None)

    def claimed_epoch(self, run_id: str) -> int | None:
        """The epoch this instance holds for ``run_id``, or None if it holds no claim."""
        claim = self._claims.get(run_id)
        return None if claim is None else claim.epoch

    # -- internals -------------------------------------------------------------------------------

    async def _write(self, checkpoint: Checkpoint, text: str) -> None:
        run_token, id_token = encode_key(checkpoint.run_id), encode_key(checkpoint.id)
        what = f"checkpoint {checkpoint.id!r}"
        written = await self._bucket.write(
            _body_key(checkpoint.id), text.encode(), what=what, headers={_RUN_HEADER: run_token}
        )
        previous_run = (written.previous_headers or {}).get(_RUN_HEADER)
        if previous_run and previous_run != run_token:  # the id was saved before in another run
            await self._bucket.remove(f"run.{previous_run}.cp.{id_token}", what=f"old {what}")
        await self._bucket.write(
            f"run.{run_token}.cp.{id_token}",
            checkpoint.to_metadata().model_dump_json().encode(),
            what=f"metadata of {what}",
        )

    async def _delete_token(self, run_token: str, id_token: str) -> bool:
        """Remove one checkpoint of a run by its escaped id: metadata, then its data."""
        what = f"checkpoint key cp.{id_token}"
        meta = await self._bucket.remove(f"run.{run_token}.cp.{id_token}", what=f"metadata {what}")
        body_key = f"cp.{id_token}"
        headers = await self._bucket.headers(body_key, what=what)
        if headers is not None and headers.get(_RUN_HEADER) in (run_token, None):
            await self._bucket.remove(body_key, what=what)
        return meta is not None

    async def _read_head(self, run_id: str) -> tuple[RunHead | None, int]:
        """The run's head and its revision (0 when there is none)."""
        what = f"the head of run {run_id!r}"
        try:
            stored = await self._bucket.read(_head_key(run_id), what=what)
        except StoredValueError as exc:
            raise self._corrupt(what, exc.reason) from None
        if stored is None:
            return None, 0
        try:
            head = RunHead.model_validate_json(stored.body)
        except ValidationError as exc:
            raise self._corrupt(
                what, f"not a valid RunHead ({describe_validation_error(exc)})"
            ) from None
        return head, stored.revision

    async def _check_claim(self, claim: _Claim, checkpoint: Checkpoint) -> None:
        """Fail before writing anything if another coordinator claimed the run already."""
        head, revision = await self._read_head(claim.run_id)
        if head is None or (head.epoch, head.coordinator_id) != (claim.epoch, claim.coordinator_id):
            await self._fenced(claim, checkpoint, head, wrote=False)
        claim.revision = revision  # ours (a write whose acknowledgement was lost, say)

    async def _move_head(self, claim: _Claim, checkpoint: Checkpoint) -> None:
        """Point the head at ``checkpoint`` by compare-and-set on this claim's revision."""
        what = f"the head of run {claim.run_id!r}"
        for _ in range(_MAX_HEAD_ATTEMPTS):
            head = RunHead(
                run_id=claim.run_id,
                epoch=claim.epoch,
                coordinator_id=claim.coordinator_id,
                checkpoint_id=checkpoint.id,
                superstep=checkpoint.superstep,
                updated_at=datetime.now(UTC),
            )
            try:
                claim.revision = await self._bucket.compare_and_set(
                    _head_key(claim.run_id),
                    head.model_dump_json().encode(),
                    last=claim.revision,
                    what=what,
                )
            except RevisionMismatchError:
                current, revision = await self._read_head(claim.run_id)
                mine = (claim.epoch, claim.coordinator_id)
                if current is not None and (current.epoch, current.coordinator_id) == mine:
                    claim.revision = revision  # our own earlier write: move on from it
                    continue
                await self._fenced(claim, checkpoint, current, wrote=True)
            else:
                return
        raise CheckpointError(
            f"could not commit checkpoint {checkpoint.id!r}: {what} changed "
            f"{_MAX_HEAD_ATTEMPTS} times under this store's own epoch {claim.epoch}"
        )

    async def _fenced(
        self, claim: _Claim, checkpoint: Checkpoint, head: RunHead | None, *, wrote: bool
    ) -> NoReturn:
        """Drop the claim, undo the uncommitted checkpoint, raise ``CoordinatorFencedError``."""
        if self._claims.get(claim.run_id) is claim:
            del self._claims[claim.run_id]
        if wrote and (head is None or head.checkpoint_id != checkpoint.id):
            with contextlib.suppress(StorageError, CheckpointError):
                await self.delete(checkpoint.id)
        if head is None:
            why = "its head was deleted"
            other = "none"
        else:
            why = f"coordinator {head.coordinator_id!r} claimed it at epoch {head.epoch}"
            other = str(head.epoch)
        _log.warning(
            "coordinator_fenced",
            run=claim.run_id,
            epoch=claim.epoch,
            coordinator=claim.coordinator_id,
            current_epoch=other,
            checkpoint=checkpoint.id,
        )
        raise CoordinatorFencedError(
            f"run {claim.run_id!r} is no longer coordinated by {claim.coordinator_id!r} "
            f"(epoch {claim.epoch}): {why}; checkpoint {checkpoint.id!r} of superstep "
            f"{checkpoint.superstep} was not committed, so this coordinator must stop",
            executor_id=None,
            superstep=checkpoint.superstep,
        )

    def _parse(self, model: type[_Model], body: bytes, what: str) -> _Model:
        try:
            return model.model_validate_json(body)
        except ValidationError as exc:
            raise self._corrupt(
                what, f"not a valid {model.__name__} ({describe_validation_error(exc)})"
            ) from None

    def _corrupt(self, what: str, why: str) -> CheckpointError:
        return CheckpointError(
            f"{what} in NATS KV bucket {self.bucket!r} at {self.url} is not valid: {why}; "
            "delete it or restore it"
        )


def _body_key(checkpoint_id: str) -> str:
    return f"cp.{encode_key(checkpoint_id)}"


def _head_key(run_id: str) -> str:
    return f"run.{encode_key(run_id)}.head"
