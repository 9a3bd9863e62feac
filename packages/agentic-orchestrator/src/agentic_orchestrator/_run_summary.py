"""Where a run stands, one rule for ``agentic runs`` and the run viewer.

A stored run's status comes from its latest checkpoint by core's rule
(``agentic_core.stored_run_status``, the one ``Workflow.get_state`` applies too), so the same
checkpoint reads the same in the command line, the viewer's ``/api/runs`` and ``get_state``;
the viewer adds the states only a watched run has (``running``, ``failed``). ``RunStatus`` is
core's too (``agentic_core.RunStatus``); both stay importable from here. :class:`RunSummary` is
one row of either listing (``agentic runs --json`` prints it, ``/api/runs`` returns it).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from agentic_core import Checkpoint, RunStatus, stored_run_status

__all__ = [
    "TERMINAL_STATUSES",
    "RunSource",
    "RunStatus",
    "RunSummary",
    "stored_run_status",
    "summarize_checkpoint",
]

RunSource = Literal["live", "checkpoints", "nats"]
"""Where a run was seen: its events in this process, a checkpoint store, NATS."""

TERMINAL_STATUSES: frozenset[RunStatus] = frozenset({"completed", "failed"})


class RunSummary(BaseModel):
    """One run in a listing: what it is, where it stands, and what it waits for."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    workflow_id: str
    workflow_name: str
    status: RunStatus
    superstep_count: int
    """Supersteps run so far (a stored run: its latest checkpoint's superstep + 1)."""
    updated_at: datetime
    source: RunSource
    pending_executors: list[str] = Field(default_factory=list[str])
    """The executors the next superstep runs (messages wait for them)."""
    pending_request_ids: list[str] = Field(default_factory=list[str])
    checkpoints: int | None = None
    """How many checkpoints the store holds for the run (``None``: not read from a store)."""
    last_checkpoint_id: str | None = None

    @computed_field
    @property
    def pending_request_count(self) -> int:
        """How many requests wait for an answer."""
        return len(self.pending_request_ids)

    @computed_field
    @property
    def workflow(self) -> str:
        """The workflow's name, under the key ``agentic runs --json`` has always printed."""
        return self.workflow_name

    @computed_field
    @property
    def last_superstep(self) -> int:
        """The last superstep run (``-1`` before the first), as ``agentic runs`` shows it."""
        return self.superstep_count - 1


def summarize_checkpoint(
    latest: Checkpoint, *, source: RunSource, checkpoints: int | None = None
) -> RunSummary:
    """The summary of a stored run whose latest checkpoint is ``latest``."""
    return RunSummary(
        run_id=latest.run_id,
        workflow_id=latest.workflow_id,
        workflow_name=latest.workflow_name,
        status=stored_run_status(latest),
        superstep_count=latest.superstep + 1,
        updated_at=latest.created_at,
        source=source,
        pending_executors=sorted(k for k, v in latest.pending_messages.items() if v),
        pending_request_ids=latest.pending_request_ids,
        checkpoints=checkpoints,
        last_checkpoint_id=latest.id,
    )
