"""What every checkpoint store here shares: the listing order, argument checks, encoding."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from agentic_core._errors import CheckpointError
from agentic_core.protocols._checkpoint import Checkpoint, CheckpointMetadata

__all__ = [
    "check_keep_last",
    "checkpoint_order",
    "describe_validation_error",
    "dump_checkpoint_dict",
    "dump_checkpoint_json",
]


def checkpoint_order(metadata: CheckpointMetadata) -> tuple[int, datetime, str]:
    """Sort key: superstep, then creation time (naive times read as UTC), then id for ties."""
    created_at = metadata.created_at
    if created_at.tzinfo is None:
        created_at = created_at.replace(tzinfo=UTC)
    return (metadata.superstep, created_at, metadata.id)


def check_keep_last(n: int) -> None:
    """Refuse a negative ``n`` for ``cleanup_keep_last`` (0 deletes every checkpoint of the run)."""
    if n < 0:
        raise ValueError(f"cleanup_keep_last needs n >= 0 checkpoints to keep, got {n}")


def dump_checkpoint_json(checkpoint: Checkpoint) -> str:
    """``checkpoint.model_dump_json()``, or ``CheckpointError`` naming the checkpoint."""
    try:
        return checkpoint.model_dump_json()
    except PydanticSerializationError as exc:
        raise _not_json_able(checkpoint, exc) from exc


def dump_checkpoint_dict(checkpoint: Checkpoint) -> dict[str, Any]:
    """``checkpoint.model_dump(mode="json")``, or ``CheckpointError`` naming the checkpoint."""
    try:
        return checkpoint.model_dump(mode="json")
    except PydanticSerializationError as exc:
        raise _not_json_able(checkpoint, exc) from exc


def _not_json_able(checkpoint: Checkpoint, exc: Exception) -> CheckpointError:
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
