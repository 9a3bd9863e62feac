"""``agentic runs DIR``: the runs a checkpoint directory holds, and where each stands."""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import Console
from rich.table import Table

from agentic_core import (
    Checkpoint,
    CheckpointError,
    CheckpointMetadata,
    FileCheckpointStore,
    RunStatus,
)
from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._run_summary import RunSummary, summarize_checkpoint

__all__ = ["list_runs", "run_details", "show_run", "show_runs"]


def _store(directory: Path) -> FileCheckpointStore:
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a directory of checkpoints")
    return FileCheckpointStore(directory)


async def list_runs(directory: Path) -> list[RunSummary]:
    """Every run under ``directory``, most recently updated first."""
    store = _store(directory)
    try:
        metadata = await store.list()
        by_run: dict[str, list[CheckpointMetadata]] = {}
        for item in metadata:
            by_run.setdefault(item.run_id, []).append(item)
        summaries: list[RunSummary] = []
        for run_id, items in by_run.items():
            latest = await store.latest(run_id)
            if latest is None:
                continue
            summaries.append(_summary(latest, len(items)))
    except CheckpointError as exc:
        raise UsageError(f"{directory}: {exc}") from None
    return sorted(summaries, key=lambda s: s.updated_at, reverse=True)


def _summary(latest: Checkpoint, count: int) -> RunSummary:
    return summarize_checkpoint(latest, source="checkpoints", checkpoints=count)


async def run_details(directory: Path, run_id: str) -> tuple[RunSummary, list[CheckpointMetadata]]:
    """One run's summary and its checkpoints, oldest first."""
    store = _store(directory)
    try:
        history = await store.list(run_id=run_id)
        latest = await store.latest(run_id)
    except CheckpointError as exc:
        raise UsageError(f"{directory}: {exc}") from None
    if latest is None:
        raise UsageError(f"no run {run_id!r} in {directory}")
    return _summary(latest, len(history)), sorted(
        history, key=lambda m: (m.superstep, m.created_at)
    )


def show_runs(console: Console, summaries: list[RunSummary]) -> None:
    """A table of runs."""
    if not summaries:
        console.print("no checkpointed runs")
        return
    table = Table(title="checkpointed runs", box=box.SIMPLE_HEAD)
    for column in ("run id", "workflow", "superstep", "status", "checkpoints", "updated"):
        table.add_column(column, no_wrap=True, min_width=len(column))
    styles: dict[RunStatus, str] = {
        "completed": "green",
        "waiting": "yellow",
        "interrupted": "red",
        "running": "yellow",
        "failed": "red",
    }
    for summary in summaries:
        table.add_row(
            summary.run_id,
            summary.workflow_name,
            str(summary.last_superstep),
            f"[{styles[summary.status]}]{summary.status}[/]",
            str(summary.checkpoints),
            f"{summary.updated_at:%Y-%m-%d %H:%M:%S}",
        )
    console.print(table)


def show_run(console: Console, summary: RunSummary, history: list[CheckpointMetadata]) -> None:
    """One run: where it stands, then each checkpoint."""
    console.print(f"run {summary.run_id} ({summary.workflow_name}): {summary.status}", markup=False)
    if summary.pending_executors:
        console.print(f"next superstep runs: {', '.join(summary.pending_executors)}", markup=False)
    if summary.pending_request_ids:
        console.print(
            f"waiting on requests: {', '.join(summary.pending_request_ids)}", markup=False
        )
    table = Table(title="checkpoints", box=box.SIMPLE_HEAD)
    for column in ("superstep", "checkpoint id", "created", "forked from"):
        table.add_column(column, no_wrap=True)
    for item in history:
        table.add_row(
            str(item.superstep),
            item.id,
            f"{item.created_at:%Y-%m-%d %H:%M:%S}",
            item.parent_checkpoint_id or "",
        )
    console.print(table)
