"""The orchestrator keeps no copy of the stored-run status rule: ``agentic runs``, the viewer and
``Workflow.get_state`` apply core's one ``stored_run_status`` and name statuses with core's
``RunStatus``."""

from __future__ import annotations

from pathlib import Path
from typing import Never, get_args

import agentic_core
from agentic_core import (
    Executor,
    FileCheckpointStore,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_orchestrator import _run_summary
from agentic_orchestrator._run_summary import RunSummary, summarize_checkpoint
from agentic_orchestrator._viewer import _record, _sources, _views


def test_the_status_rule_and_names_are_cores_own_objects() -> None:
    assert _run_summary.stored_run_status is agentic_core.stored_run_status
    assert _run_summary.RunStatus is agentic_core.RunStatus
    # The viewer's modules use core's names, not a private copy of their own.
    assert vars(_sources)["stored_run_status"] is agentic_core.stored_run_status
    assert vars(_views)["RunStatus"] is agentic_core.RunStatus
    assert vars(_record)["RunStatus"] is agentic_core.RunStatus


def test_a_summary_takes_every_status_core_names() -> None:
    statuses = get_args(agentic_core.RunStatus)
    assert statuses == ("running", "waiting", "interrupted", "completed", "failed")
    assert get_args(RunSummary.model_fields["status"].annotation) == statuses


class Asker(Executor):
    @handler
    async def ask(self, text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(f"ok to {text}?", str)

    @response_handler
    async def answered(self, question: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{question} {answer}")


async def test_agentic_runs_and_get_state_read_a_stored_run_alike(tmp_path: Path) -> None:
    store = FileCheckpointStore(tmp_path)
    workflow = (
        WorkflowBuilder("asking")
        .set_start_executor(Asker("asker"))
        .with_checkpointing(store)
        .build()
    )
    paused = await workflow.run("ship")
    latest = await store.latest(paused.run_id)
    assert latest is not None
    state = await workflow.get_state(paused.run_id, checkpoint_store=store)
    summary = summarize_checkpoint(latest, source="checkpoints")
    assert summary.status == state.status == "waiting"
    [request] = paused.pending_requests
    done = await workflow.run(
        checkpoint_id=state.checkpoint_id,
        checkpoint_store=store,
        responses={request.request_id: "yes"},
    )
    latest = await store.latest(done.run_id)
    assert latest is not None
    summary = summarize_checkpoint(latest, source="checkpoints")
    state = await workflow.get_state(done.run_id, checkpoint_store=store)
    assert summary.status == state.status == "completed"
