"""The run viewer over a checkpoint directory: runs listed from their checkpoints, a paused run
answered and completed by a viewer started after the one that ran it, and the errors of a store
that fails or of a run whose workflow the viewer does not hold."""

from __future__ import annotations

import builtins
from pathlib import Path

import httpx
import pytest
import structlog

from agentic_core import (
    Checkpoint,
    CheckpointMetadata,
    FileCheckpointStore,
    StorageError,
    registry,
)
from agentic_orchestrator import RunViewer

from ._viewer_flows import approval, settled, shouting


@pytest.fixture
async def paused_run(tmp_path: Path) -> tuple[Path, str]:
    """A run of ``approval`` started by one viewer, saved to a directory, waiting for an answer;
    that viewer is gone when the test starts."""
    first = RunViewer([approval()], checkpoint_store=tmp_path)
    try:
        run_id = await first.start("cats")
        assert (await settled(first, run_id)).status == "waiting"
    finally:
        await first.aclose()
    return tmp_path, run_id


def client_of(viewer: RunViewer) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=viewer.app), base_url="http://127.0.0.1:8765"
    )


async def test_a_stored_run_is_listed_from_its_checkpoints(paused_run: tuple[Path, str]) -> None:
    directory, run_id = paused_run
    viewer = RunViewer([approval()], checkpoint_store=directory)
    async with client_of(viewer) as client:
        listing = (await client.get("/api/runs")).json()

    assert listing["errors"] == []
    [row] = listing["runs"]
    assert row["run_id"] == run_id
    assert row["source"] == "checkpoints"
    assert row["status"] == "waiting"
    assert row["pending_request_count"] == 1
    assert row["workflow_name"] == "approval"
    assert row["superstep_count"] == 2


async def test_a_stored_run_view_rebuilds_supersteps_and_requests(
    paused_run: tuple[Path, str],
) -> None:
    directory, run_id = paused_run
    viewer = RunViewer([approval()], checkpoint_store=directory)
    async with client_of(viewer) as client:
        view = (await client.get(f"/api/runs/{run_id}")).json()

    assert view["source"] == "checkpoints"
    assert view["status"] == "waiting"
    assert view["can_answer"] is True
    assert view["mermaid"].startswith("flowchart TD")
    assert view["supersteps"] == [
        {"superstep": 0, "executors": {"writer": "completed"}},
        {"superstep": 1, "executors": {"approver": "completed"}},
    ]
    [request] = view["pending_requests"]
    assert request["data"] == {"text": "a post about cats"}
    assert request["response_schema"] == {"type": "boolean"}
    assert [e["type"] for e in view["events"]] == ["Checkpoint", "Checkpoint"]


async def test_a_restarted_viewer_answers_a_stored_run_and_it_completes(
    paused_run: tuple[Path, str],
) -> None:
    directory, run_id = paused_run
    viewer = RunViewer([approval()], checkpoint_store=directory)
    try:
        async with client_of(viewer) as client:
            request_id = (await client.get(f"/api/runs/{run_id}")).json()["pending_requests"][0][
                "request_id"
            ]
            bad = await client.post(
                f"/api/runs/{run_id}/responses", json={"responses": {request_id: [1]}}
            )
            answered = await client.post(
                f"/api/runs/{run_id}/responses", json={"responses": {request_id: True}}
            )
            final = await settled(viewer, run_id)
            listed = (await client.get("/api/runs")).json()["runs"]
    finally:
        await viewer.aclose()

    assert bad.status_code == 400
    assert request_id in bad.json()["error"]
    assert answered.status_code == 202, answered.text
    assert final.run_id == run_id
    assert final.status == "completed"
    assert [o.text for o in final.outputs] == ["published: a post about cats"]
    assert final.supersteps[0].executors == {"writer": "completed"}  # the stored history stays
    assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "completed")]
    latest = await FileCheckpointStore(directory).latest(run_id)
    assert latest is not None
    assert latest.pending_requests == []


async def test_a_run_of_a_workflow_not_held_cannot_be_answered(
    paused_run: tuple[Path, str],
) -> None:
    directory, run_id = paused_run
    viewer = RunViewer([shouting()], checkpoint_store=directory)  # not the graph that ran
    async with client_of(viewer) as client:
        view = (await client.get(f"/api/runs/{run_id}")).json()
        request_id = view["pending_requests"][0]["request_id"]
        response = await client.post(
            f"/api/runs/{run_id}/responses", json={"responses": {request_id: True}}
        )

    assert view["can_answer"] is False
    assert view["mermaid"] is None
    assert view["pending_requests"][0]["data"] == {"text": "a post about cats"}
    assert view["pending_requests"][0]["response_schema"] == {"type": "boolean"}
    assert response.status_code == 409
    assert "approval" in response.json()["error"]


class UnreachableStore:
    """A CheckpointStore whose back-end is down: every call raises StorageError."""

    async def save(self, checkpoint: Checkpoint) -> str:
        raise StorageError("connection refused (store at 127.0.0.1:1)")

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        raise StorageError("connection refused (store at 127.0.0.1:1)")

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        raise StorageError("connection refused (store at 127.0.0.1:1)")

    async def latest(self, run_id: str) -> Checkpoint | None:
        raise StorageError("connection refused (store at 127.0.0.1:1)")

    async def delete(self, checkpoint_id: str) -> bool:
        raise StorageError("connection refused (store at 127.0.0.1:1)")

    async def delete_all(self, run_id: str) -> int:
        raise StorageError("connection refused (store at 127.0.0.1:1)")

    async def cleanup_keep_last(self, run_id: str, n: int) -> int:
        raise StorageError("connection refused (store at 127.0.0.1:1)")


async def test_a_failing_source_is_named_and_the_other_runs_still_listed(
    paused_run: tuple[Path, str],
) -> None:
    directory, run_id = paused_run
    viewer = RunViewer([approval()], checkpoint_store=[directory, UnreachableStore()])
    async with client_of(viewer) as client:
        listing = (await client.get("/api/runs")).json()
        missing = await client.get("/api/runs/not-anywhere")
        found = await client.get(f"/api/runs/{run_id}")

    assert [r["run_id"] for r in listing["runs"]] == [run_id]
    [error] = listing["errors"]
    assert "UnreachableStore" in error
    assert "connection refused" in error
    assert missing.status_code == 502
    assert "UnreachableStore" in missing.json()["error"]
    assert found.status_code == 200


async def test_a_corrupt_checkpoint_is_a_500_naming_the_source(
    paused_run: tuple[Path, str],
) -> None:
    directory, run_id = paused_run
    for file in directory.rglob("*.json"):
        file.write_text("{ not a checkpoint")
    viewer = RunViewer([approval()], checkpoint_store=directory)
    async with client_of(viewer) as client:
        response = await client.get(f"/api/runs/{run_id}")

    assert response.status_code == 500
    assert str(directory) in response.json()["error"]


async def test_a_token_in_a_store_url_shows_neither_in_the_errors_nor_in_the_log(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    token = "s3cr3t-nats-token"  # noqa: S105 - a fake secret
    opened: list[str] = []

    def unreachable(url: str) -> UnreachableStore:
        opened.append(url)
        return UnreachableStore()

    def load(group: str, name: str) -> object:
        assert (group, name) == ("agentic.checkpoint_stores", "nats")
        return unreachable

    monkeypatch.setattr(registry, "load", load)
    viewer = RunViewer(checkpoint_store=f"nats://{token}@127.0.0.1:1")
    with structlog.testing.capture_logs() as logs:
        async with client_of(viewer) as client:
            listing = (await client.get("/api/runs")).json()
    await viewer.aclose()

    assert opened == [f"nats://{token}@127.0.0.1:1"]  # the store itself gets the token
    [error] = listing["errors"]
    assert "nats://***@127.0.0.1:1" in error
    [warning] = [line for line in logs if line["event"] == "viewer.source_failed"]
    assert warning["source"] == "nats://***@127.0.0.1:1"
    assert token not in f"{listing} {logs}"
