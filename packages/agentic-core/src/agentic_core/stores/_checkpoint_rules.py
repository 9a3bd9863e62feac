"""What every checkpoint store here shares: the listing order, argument checks, encoding."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from agentic_core._errors import CheckpointError
from agentic_core.protocols._checkpoint import Checkpoint, CheckpointMetadata

if TYPE_CHECKING:
    from agentic_core.protocols._checkpoint import CheckpointStore

__all__ = [
    "check_keep_last",
    "checkpoint_order",
    "checkpoints_beyond",
    "describe_validation_error",
    "dump_checkpoint_dict",
    "dump_checkpoint_json",
    "latest_listed_checkpoint",
    "not_json_able",
    "select_checkpoints",
]


def checkpoint_order(metadata: CheckpointMetadata | Checkpoint) -> tuple[int, datetime, str]:
    """Sort key: superstep, then creation time (naive times read as UTC), then id for ties.

    Of a checkpoint's metadata, or of the checkpoint itself (the same key).
    """
    created_at = metadata.created_at
    if created_at.tzinfo is None:
        created_at = created_at.replace(tzinfo=UTC)
    return (metadata.superstep, created_at, metadata.id)


def select_checkpoints(
    found: Iterable[CheckpointMetadata],
    *,
    run_id: str | None = None,
    workflow_id: str | None = None,
) -> list[CheckpointMetadata]:
    """What ``CheckpointStore.list`` returns from the metadata a back-end found: those of
    ``run_id`` and ``workflow_id`` (when given), in :func:`checkpoint_order`."""
    selected = [
        metadata
        for metadata in found
        if (run_id is None or metadata.run_id == run_id)
        and (workflow_id is None or metadata.workflow_id == workflow_id)
    ]
    selected.sort(key=checkpoint_order)
    return selected


async def latest_listed_checkpoint(store: CheckpointStore, run_id: str) -> Checkpoint | None:
    """``store.latest(run_id)`` for a back-end that lists: the run's checkpoint with the highest
    superstep (newest on ties), or None.

    An index entry whose checkpoint expired, or was saved again under another run meanwhile, is
    passed over for the next one.
    """
    for metadata in reversed(await store.list(run_id=run_id)):
        checkpoint = await store.load(metadata.id)
        if checkpoint is not None and checkpoint.run_id == run_id:
            return checkpoint
    return None


async def checkpoints_beyond(
    store: CheckpointStore, run_id: str, n: int
) -> list[CheckpointMetadata]:
    """What ``store.cleanup_keep_last(run_id, n)`` deletes, for a back-end that lists: every
    checkpoint of the run but the ``n`` newest, oldest first.

    Raises:
        ValueError: ``n`` is negative.
    """
    check_keep_last(n)
    ordered = await store.list(run_id=run_id)
    return ordered[: max(len(ordered) - n, 0)]


def check_keep_last(n: int) -> None:
    """Refuse a negative ``n`` for ``cleanup_keep_last`` (0 deletes every checkpoint of the run)."""
    if n < 0:
        raise ValueError(f"cleanup_keep_last needs n >= 0 checkpoints to keep, got {n}")


def dump_checkpoint_json(checkpoint: Checkpoint) -> str:
    """``checkpoint.model_dump_json()``, or ``CheckpointError`` naming the checkpoint."""
    try:
        return checkpoint.model_dump_json()
    except PydanticSerializationError as exc:
        raise not_json_able(checkpoint, exc) from exc


def dump_checkpoint_dict(checkpoint: Checkpoint) -> dict[str, Any]:
    """``checkpoint.model_dump(mode="json")``, or ``CheckpointError`` naming the checkpoint."""
    try:
        return checkpoint.model_dump(mode="json")
    except PydanticSerializationError as exc:
        raise not_json_able(checkpoint, exc) from exc


def not_json_able(checkpoint: Checkpoint, exc: Exception) -> CheckpointError:
    """The error a store raises for a checkpoint holding a value that is not JSON-able."""
    return CheckpointError(
        f"cannot save checkpoint {checkpoint.id!r} of run {checkpoint.run_id!r}: it holds a "
        f"value that is not JSON-able ({exc}); encode payload values before checkpointing"
    )


def describe_validation_error(exc: ValidationError) -> str:
    """The first problem of a validation error in one line, without the (maybe huge) input."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "document"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"
