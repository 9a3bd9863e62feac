"""Where a stored run stands: ``RunSnapshot`` (what ``Workflow.get_state`` returns) and the
one rule of a stored run's status, read from its latest checkpoint alone."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentic_core.graph._serialization import TypeRegistry
from agentic_core.protocols._checkpoint import Checkpoint
from agentic_core.protocols._events import RequestInfoEvent

RunStatus = Literal["running", "waiting", "interrupted", "completed", "failed"]
"""Where a run stands. ``waiting``: stopped with requests to answer; ``interrupted``: stopped
with messages waiting for a next superstep (Ctrl-C, a crash, a cancel, a failed superstep:
resume it); ``completed``: nothing left to do. ``running`` and ``failed`` are known only of a
run whose events someone watches: a checkpoint store alone never says them."""


def stored_run_status(latest: Checkpoint) -> RunStatus:
    """The status of a run whose latest checkpoint is ``latest``: ``waiting``,
    ``interrupted`` or ``completed``.

    A checkpoint cannot tell a run stopped from one still running in a process nobody watches:
    pending messages read as ``interrupted`` (resumable), as the run that wrote it last left it.
    """
    if latest.pending_requests:
        return "waiting"
    if any(latest.pending_messages.values()):
        return "interrupted"
    return "completed"


class RunSnapshot(BaseModel):
    """A run as its latest checkpoint holds it (LangGraph's ``StateSnapshot``).

    ``outputs`` are the outputs stored with the checkpoint that ended the run's last call
    (bounded, see ``Checkpoint.outputs``): they are the last ``len(outputs)`` of the
    ``outputs_count`` outputs the run yielded; ``outputs_left_out`` says how many came before
    them and are not stored (cut by the cap, or yielded before an interruption: an
    ``interrupted`` run's outputs since its last pause are counted, not stored).

    Example:
        ```python
        state = await workflow.get_state(run_id, checkpoint_store=store)
        if state.status == "waiting":
            answers = {r.request_id: "yes" for r in state.pending_requests}
            await workflow.run(
                checkpoint_id=state.checkpoint_id, checkpoint_store=store, responses=answers
            )
        ```
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    workflow_id: str
    workflow_name: str
    status: RunStatus
    last_superstep: int
    """The last superstep completed (``-1``: a fork saved before its first superstep)."""
    next_executors: list[str] = Field(default_factory=list[str])
    """The executors the next superstep runs (LangGraph's ``next``); empty unless
    ``interrupted``."""
    outputs: list[Any] = Field(default_factory=list[Any])
    outputs_count: int = 0
    """How many outputs the run yielded so far (``Checkpoint.outputs_so_far``)."""
    outputs_left_out: int = 0
    """How many of the first outputs are not in ``outputs``."""
    pending_requests: list[RequestInfoEvent] = Field(default_factory=list[RequestInfoEvent])
    shared_state: dict[str, Any] = Field(default_factory=dict[str, Any])
    checkpoint_id: str
    """The latest checkpoint: resume (or fork) from it."""
    parent_checkpoint_id: str | None = None
    """On a fork's first checkpoint: the checkpoint of another run it was forked from."""
    updated_at: datetime
    """When the latest checkpoint was written."""


def _of_run(request: RequestInfoEvent, run_id: str) -> RequestInfoEvent:
    """A request as the run waits for it (a fork waits for its origin's requests too)."""
    if request.run_id == run_id:
        return request
    return request.model_copy(update={"run_id": run_id})


def snapshot_of(checkpoint: Checkpoint, registry: TypeRegistry) -> RunSnapshot:
    """The snapshot of the run whose latest checkpoint is ``checkpoint`` (decoded with
    ``registry``; a value it cannot decode raises ``SerializationError``)."""
    decode = registry.decode
    run_id = checkpoint.run_id
    outputs = [decode(value) for value in checkpoint.outputs or ()]
    return RunSnapshot(
        run_id=run_id,
        workflow_id=checkpoint.workflow_id,
        workflow_name=checkpoint.workflow_name,
        status=stored_run_status(checkpoint),
        last_superstep=checkpoint.superstep,
        next_executors=sorted(k for k, v in checkpoint.pending_messages.items() if v),
        outputs=outputs,
        outputs_count=checkpoint.outputs_so_far,
        outputs_left_out=max(checkpoint.outputs_so_far - len(outputs), 0),
        pending_requests=[_of_run(decode(r), run_id) for r in checkpoint.pending_requests],
        shared_state=decode(checkpoint.shared_state),
        checkpoint_id=checkpoint.id,
        parent_checkpoint_id=checkpoint.parent_checkpoint_id,
        updated_at=checkpoint.created_at,
    )
