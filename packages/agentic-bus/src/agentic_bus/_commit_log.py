"""The committed log: each superstep's outputs leave the system only after its checkpoint.

``CommittingStore`` wraps the runtime's checkpoint store: it adds the outputs of the superstep
just applied to the checkpoint (``metadata["agentic_bus.outputs"]``, encoded), saves it (a fenced
compare-and-set for runs the runtime claimed), and only then publishes one message on
``agentic.workflow.<run>.committed`` (``Nats-Msg-Id`` = run and superstep, so a coordinator
that re-publishes after a crash adds nothing). ``committed_outputs`` reads the log back: every
committed output of a run exactly once, in order, whatever coordinators crashed on the way.
"""

from __future__ import annotations

import builtins
import json
from collections.abc import Awaitable, Callable
from typing import Any

from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from agentic_bus._kv._blobs import BLOB_THRESHOLD, Blobs
from agentic_bus._streams import EVENTS_MAX_AGE_S, EVENTS_STREAM
from agentic_bus._subjects import Subjects, subject_token
from agentic_bus._task_wire import BlobRef
from agentic_core import (
    Checkpoint,
    CheckpointError,
    CheckpointMetadata,
    CheckpointStore,
    WorkflowGraph,
)

__all__ = ["OUTPUTS_KEY", "CommittingStore", "committed_outputs", "publish_committed"]

OUTPUTS_KEY = "agentic_bus.outputs"


async def publish_committed(
    js: JetStreamContext, subjects: Subjects, checkpoint: Checkpoint, blobs: Blobs
) -> None:
    """Append ``checkpoint``'s superstep to its run's committed log (idempotent); outputs
    too large for a message go by claim check (kept as long as the events stream keeps them)."""
    outputs: list[Any] = list(checkpoint.metadata.get(OUTPUTS_KEY, []))
    body: dict[str, Any] = {
        "superstep": checkpoint.superstep,
        "checkpoint_id": checkpoint.id,
        "outputs_base": checkpoint.outputs_so_far - len(outputs),
        "outputs": outputs,
    }
    data = json.dumps(body, separators=(",", ":")).encode()
    if len(data) > BLOB_THRESHOLD:
        key = f"committed.{subject_token(checkpoint.run_id)}.{checkpoint.superstep}"
        outputs_json = json.dumps(outputs, separators=(",", ":")).encode()
        ref = await blobs.put(key, outputs_json, ttl_s=EVENTS_MAX_AGE_S)
        body["outputs"] = None
        body["blob"] = ref.model_dump()
        data = json.dumps(body, separators=(",", ":")).encode()
    await js.publish(
        subjects.committed(checkpoint.run_id),
        data,
        headers={"Nats-Msg-Id": f"{checkpoint.run_id}:committed:{checkpoint.superstep}"},
    )


async def last_committed_superstep(
    js: JetStreamContext, subjects: Subjects, run_id: str
) -> int | None:
    """The superstep of the run's last committed-log entry, or None."""
    try:
        stored = await js.get_last_msg(EVENTS_STREAM, subjects.committed(run_id))
    except NotFoundError:
        return None
    return int(json.loads(stored.data or b"{}").get("superstep", -1))


async def committed_outputs(
    js: JetStreamContext, subjects: Subjects, run_id: str, workflow: WorkflowGraph, blobs: Blobs
) -> list[Any]:
    """Every output the run committed, decoded, in order, each once."""
    outputs: list[Any] = []
    last = -1
    sequence = 0
    subject = subjects.committed(run_id)
    while True:
        try:
            stored = await js.get_msg(EVENTS_STREAM, seq=sequence + 1, next=True, subject=subject)  # pyright: ignore[reportUnknownMemberType]
        except NotFoundError:
            return outputs
        sequence = stored.seq or sequence + 1
        entry = json.loads(stored.data or b"{}")
        if entry["superstep"] <= last:
            continue  # a late copy from a fenced coordinator
        last = entry["superstep"]
        encoded = entry["outputs"]
        if entry.get("blob") is not None:
            encoded = json.loads(await blobs.get(BlobRef.model_validate(entry["blob"])))
        outputs.extend(workflow.type_registry.decode(v) for v in encoded)


class CommittingStore:
    """A ``CheckpointStore`` that records each superstep's outputs and logs them after the save.

    ``take_outputs(run_id)`` gives the encoded outputs of the superstep just applied (the
    runtime's stash); ``after_commit(checkpoint)`` publishes the committed-log entry.
    ``run_driver`` is the runtime that owns the store: a run paused here and answered with
    ``workflow.run(responses=...)`` goes on through it (core's run-driver hook), on workers.
    """

    def __init__(
        self,
        inner: CheckpointStore,
        take_outputs: Callable[[str], list[Any] | None],
        after_commit: Callable[[Checkpoint], Awaitable[None]],
        *,
        driver: object = None,
    ) -> None:
        self.inner = inner
        self._take_outputs = take_outputs
        self._after_commit = after_commit
        self.run_driver = driver

    def __repr__(self) -> str:
        return f"CommittingStore({self.inner!r})"

    async def save(self, checkpoint: Checkpoint) -> str:
        outputs = self._take_outputs(checkpoint.run_id)
        if outputs is not None:
            metadata = {**checkpoint.metadata, OUTPUTS_KEY: outputs}
            checkpoint = checkpoint.model_copy(update={"metadata": metadata})
        checkpoint_id = await self.inner.save(checkpoint)
        try:
            await self._after_commit(checkpoint)
        except Exception as exc:
            raise CheckpointError(
                f"checkpoint {checkpoint_id!r} of run {checkpoint.run_id} is saved but its "
                f"committed-log entry could not be published: {type(exc).__name__}: {exc}; "
                "resume the run to publish it"
            ) from exc
        return checkpoint_id

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        return await self.inner.load(checkpoint_id)

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        return await self.inner.list(workflow_id=workflow_id, run_id=run_id)

    async def latest(self, run_id: str) -> Checkpoint | None:
        return await self.inner.latest(run_id)

    async def delete(self, checkpoint_id: str) -> bool:
        return await self.inner.delete(checkpoint_id)

    async def delete_all(self, run_id: str) -> int:
        return await self.inner.delete_all(run_id)

    async def cleanup_keep_last(self, run_id: str, n: int) -> int:
        return await self.inner.cleanup_keep_last(run_id, n)
