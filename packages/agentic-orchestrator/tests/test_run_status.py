"""One run-status rule: a stored run reads the same in ``agentic runs`` and the viewer's
``/api/runs``; a run the viewer watches adds only ``running`` and ``failed``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from agentic_core import Checkpoint, FileCheckpointStore, WorkflowCompletedEvent, WorkflowRunState
from agentic_orchestrator import RunViewer
from agentic_orchestrator._cli import app
from agentic_orchestrator._run_summary import stored_run_status
from agentic_orchestrator._viewer._record import RunRecord

REQUEST = {"$t": "agentic_core.RequestInfoEvent", "v": {"request_id": "r1", "data": "ok?"}}


def checkpoint(run_id: str, *, messages: bool = False, requests: bool = False) -> Checkpoint:
    return Checkpoint(
        id=f"{run_id}-cp",
        workflow_id="wf",
        workflow_name="flow",
        run_id=run_id,
        superstep=1,
        workflow_fingerprint="f",
        pending_messages={"editor": [{"text": "draft"}]} if messages else {},
        pending_requests=[REQUEST] if requests else [],
    )


STORED = {
    "done": checkpoint("done"),
    "paused": checkpoint("paused", requests=True),
    "stopped": checkpoint("stopped", messages=True),
}


@pytest.mark.parametrize(
    ("run_id", "status"), [("done", "completed"), ("paused", "waiting"), ("stopped", "interrupted")]
)
def test_a_stored_run_status_comes_from_its_latest_checkpoint(run_id: str, status: str) -> None:
    assert stored_run_status(STORED[run_id]) == status


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    store = FileCheckpointStore(tmp_path)

    async def save() -> None:
        for saved in STORED.values():
            await store.save(saved)

    asyncio.run(save())
    return tmp_path


def viewer_rows(directory: Path) -> dict[str, dict[str, Any]]:
    async def listed() -> dict[str, Any]:
        viewer = RunViewer(checkpoint_store=directory)
        transport = httpx.ASGITransport(app=viewer.app)
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                return (await c.get("/api/runs")).json()
        finally:
            await viewer.aclose()

    listing = asyncio.run(listed())
    assert listing["errors"] == []
    return {row["run_id"]: row for row in listing["runs"]}


def test_the_same_checkpoint_reads_the_same_in_agentic_runs_and_the_viewer(
    directory: Path,
) -> None:
    result = CliRunner().invoke(app, ["runs", str(directory), "--json"])
    assert result.exit_code == 0, result.output
    cli = {row["run_id"]: row for row in json.loads(result.stdout)}
    viewer = viewer_rows(directory)

    assert {run_id: row["status"] for run_id, row in cli.items()} == {
        "done": "completed",
        "paused": "waiting",
        "stopped": "interrupted",
    }
    assert cli == viewer  # one RunSummary: every field alike, not only the status


def test_both_listings_keep_the_keys_they_always_had(directory: Path) -> None:
    result = CliRunner().invoke(app, ["runs", str(directory), "--json"])
    row = next(r for r in json.loads(result.stdout) if r["run_id"] == "stopped")
    assert (row["workflow"], row["last_superstep"], row["checkpoints"]) == ("flow", 1, 1)
    assert (row["pending_executors"], row["pending_request_ids"]) == (["editor"], [])
    assert row["last_checkpoint_id"] == "stopped-cp"
    paused = viewer_rows(directory)["paused"]
    assert (paused["workflow_name"], paused["superstep_count"]) == ("flow", 2)
    assert (paused["pending_request_count"], paused["source"]) == (1, "checkpoints")


@pytest.mark.parametrize(
    ("state", "status"),
    [
        (WorkflowRunState.COMPLETED, "completed"),
        (WorkflowRunState.IDLE_WITH_PENDING_REQUESTS, "waiting"),
        (WorkflowRunState.CANCELLED, "interrupted"),
        (WorkflowRunState.FAILED, "failed"),
    ],
)
def test_a_watched_run_ends_with_the_word_its_checkpoint_would_give(
    state: WorkflowRunState, status: str
) -> None:
    record = RunRecord("r", source="live")
    assert record.status == "running"
    record.apply(WorkflowCompletedEvent(superstep_count=2, duration_s=0.1, status=state))
    assert record.view().status == status
