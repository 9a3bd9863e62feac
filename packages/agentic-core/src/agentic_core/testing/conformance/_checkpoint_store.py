"""The checkpoint store conformance suite: what every ``CheckpointStore`` must do.

Subclass ``CheckpointStoreConformance`` as ``Test...`` and provide the store as a fixture named
``checkpoint_store`` (a fresh, empty store for every test):

```python
class TestFileCheckpointStore(CheckpointStoreConformance):
    @pytest.fixture
    def checkpoint_store(self, tmp_path: Path) -> CheckpointStore:
        return FileCheckpointStore(tmp_path)
```

``make_checkpoint`` builds the checkpoints the suite saves; a back-end's own tests can use it too.
"""

# ruff: noqa: S101  (a test suite: plain asserts are how pytest reports failures)

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import pytest

from agentic_core._errors import CheckpointError
from agentic_core.protocols._checkpoint import Checkpoint, CheckpointMetadata, CheckpointStore

__all__ = ["CheckpointStoreConformance", "make_checkpoint"]

_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
_OUTPUTS: list[Any] = [{"$t": "tests.Note", "v": {"text": "fin ✓"}}, 2, None]


def make_checkpoint(
    *,
    run_id: str = "run-1",
    superstep: int = 0,
    workflow_id: str = "workflow-1",
    checkpoint_id: str | None = None,
    created_at: datetime | None = None,
    shared_state: dict[str, Any] | None = None,
    pending_request_ids: Sequence[str] = ("r-1",),
    parent_checkpoint_id: str | None = None,
    outputs: list[Any] | None = _OUTPUTS,
) -> Checkpoint:
    """A small checkpoint with a payload in every field, for store tests.

    The id defaults to ``"<run_id>-step-<superstep>"`` and ``created_at`` to a fixed instant plus
    ``superstep`` seconds, so checkpoints built here sort predictably. ``pending_requests`` holds
    one request per id of ``pending_request_ids``, in that order, encoded as the engine writes a
    ``RequestInfoEvent``; ``parent_checkpoint_id`` marks the checkpoint as a fork's first one;
    ``outputs`` are the run's stored outputs (``None``: a checkpoint that stores none).
    """
    return Checkpoint(
        id=f"{run_id}-step-{superstep}" if checkpoint_id is None else checkpoint_id,
        workflow_id=workflow_id,
        workflow_name="conformance",
        run_id=run_id,
        superstep=superstep,
        workflow_fingerprint="fingerprint-1",
        created_at=created_at
        if created_at is not None
        else _EPOCH + timedelta(seconds=superstep, microseconds=123),
        pending_messages={"writer": [{"text": "héllo ✓", "n": 1}, "plain"]},
        fan_in_buffers={"join": {"a": [1.5, None], "b": []}},
        shared_state={"counter": superstep, "nested": {"items": [1, 2]}}
        if shared_state is None
        else shared_state,
        pending_requests=[
            _encoded_request(request_id, run_id) for request_id in pending_request_ids
        ],
        executor_states={"writer": {"seen": [True, False]}},
        outputs_so_far=superstep,
        outputs=None if outputs is None else list(outputs),
        metadata={"note": "conformance"},
        parent_checkpoint_id=parent_checkpoint_id,
    )


def _encoded_request(request_id: str, run_id: str) -> dict[str, Any]:
    """A pending ``RequestInfoEvent`` as the workflow's type registry encodes it."""
    return {
        "$t": "agentic_core.RequestInfoEvent",
        "v": {
            "request_id": request_id,
            "source_executor_id": "ask",
            "data": {"question": "approve?"},
            "response_type": {"$t": "type", "v": "str"},
            "run_id": run_id,
        },
    }


def _ids(listed: list[CheckpointMetadata]) -> list[str]:
    return [metadata.id for metadata in listed]


class CheckpointStoreConformance:
    """The behaviour every ``CheckpointStore`` must have; subclass it as ``Test...``.

    The subclass provides the store as a fixture named ``checkpoint_store`` (see the module
    docstring); every test must receive a fresh, empty store.
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]
    concurrent_saves: ClassVar[int] = 50
    """How many saves ``test_concurrent_saves_are_all_retrievable`` runs at once."""

    # --- save and load ---------------------------------------------------------------------------

    async def test_store_satisfies_the_protocol(self, checkpoint_store: CheckpointStore) -> None:
        assert isinstance(checkpoint_store, CheckpointStore)

    async def test_save_returns_the_checkpoint_id(self, checkpoint_store: CheckpointStore) -> None:
        checkpoint = make_checkpoint()

        assert await checkpoint_store.save(checkpoint) == checkpoint.id

    async def test_load_returns_a_checkpoint_equal_to_the_saved_one(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint(superstep=3)
        await checkpoint_store.save(checkpoint)

        loaded = await checkpoint_store.load(checkpoint.id)

        assert loaded == checkpoint
        assert loaded is not None
        assert loaded.created_at == checkpoint.created_at
        assert loaded.created_at.utcoffset() == timedelta(0)

    async def test_load_of_an_unknown_id_returns_none(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint())

        assert await checkpoint_store.load("no-such-checkpoint") is None

    async def test_saving_an_id_again_replaces_the_checkpoint(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        first = make_checkpoint(checkpoint_id="same", shared_state={"version": 1})
        second = make_checkpoint(checkpoint_id="same", shared_state={"version": 2})
        await checkpoint_store.save(first)

        await checkpoint_store.save(second)

        assert await checkpoint_store.load("same") == second
        assert _ids(await checkpoint_store.list(run_id=first.run_id)) == ["same"]

    async def test_saving_a_value_that_is_not_json_able_raises_checkpoint_error(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint(shared_state={"bad": object()})

        with pytest.raises(CheckpointError):
            await checkpoint_store.save(checkpoint)

    # --- immutability ----------------------------------------------------------------------------

    async def test_changing_a_loaded_checkpoint_does_not_change_the_store(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint()
        await checkpoint_store.save(checkpoint)
        loaded = await checkpoint_store.load(checkpoint.id)
        assert loaded is not None

        loaded.shared_state["nested"]["items"].append(99)
        loaded.shared_state["added"] = True
        loaded.pending_messages["writer"].clear()

        assert await checkpoint_store.load(checkpoint.id) == make_checkpoint()

    async def test_changing_the_saved_object_after_save_does_not_change_the_store(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint()
        await checkpoint_store.save(checkpoint)

        checkpoint.shared_state["nested"]["items"].append(99)
        checkpoint.executor_states["writer"]["seen"] = []

        assert await checkpoint_store.load(checkpoint.id) == make_checkpoint()

    async def test_changing_listed_pending_request_ids_does_not_change_the_store(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint(superstep=0, pending_request_ids=["r-1"]))
        await checkpoint_store.save(make_checkpoint(superstep=1, pending_request_ids=[]))
        waiting, idle = await checkpoint_store.list()
        [waiting_in_run, idle_in_run] = await checkpoint_store.list(run_id="run-1")

        waiting.pending_request_ids.append("r-2")
        idle.pending_request_ids.append("r-3")
        waiting_in_run.pending_request_ids.clear()
        idle_in_run.pending_request_ids.append("r-4")

        for listed in [await checkpoint_store.list(), await checkpoint_store.list(run_id="run-1")]:
            assert [m.pending_request_ids for m in listed] == [["r-1"], []]

    async def test_changing_the_saved_object_after_save_does_not_change_the_listing(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint(pending_request_ids=["r-1"])
        await checkpoint_store.save(checkpoint)

        checkpoint.pending_requests.extend(
            make_checkpoint(pending_request_ids=["r-2"]).pending_requests
        )

        assert await checkpoint_store.list() == [
            make_checkpoint(pending_request_ids=["r-1"]).to_metadata()
        ]

    # --- list ------------------------------------------------------------------------------------

    async def test_list_of_an_empty_store_is_empty(self, checkpoint_store: CheckpointStore) -> None:
        assert await checkpoint_store.list() == []

    async def test_list_returns_the_metadata_of_each_checkpoint(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint(
            superstep=2, pending_request_ids=["r-1", "r-2"], parent_checkpoint_id="run-0-step-1"
        )
        await checkpoint_store.save(checkpoint)

        assert await checkpoint_store.list() == [checkpoint.to_metadata()]

    async def test_list_orders_every_checkpoint_by_superstep(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        for run_id, superstep in [("run-b", 2), ("run-a", 0), ("run-b", 1), ("run-a", 3)]:
            await checkpoint_store.save(make_checkpoint(run_id=run_id, superstep=superstep))

        listed = await checkpoint_store.list()

        assert [m.superstep for m in listed] == [0, 1, 2, 3]
        assert [m.run_id for m in listed] == ["run-a", "run-b", "run-b", "run-a"]

    async def test_list_orders_equal_supersteps_by_creation_time(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        late = make_checkpoint(checkpoint_id="a-late", created_at=_EPOCH + timedelta(seconds=2))
        early = make_checkpoint(checkpoint_id="z-early", created_at=_EPOCH + timedelta(seconds=1))
        await checkpoint_store.save(late)
        await checkpoint_store.save(early)

        assert _ids(await checkpoint_store.list(run_id="run-1")) == ["z-early", "a-late"]

    async def test_list_filters_by_run_id(self, checkpoint_store: CheckpointStore) -> None:
        await checkpoint_store.save(make_checkpoint(run_id="run-a", superstep=0))
        await checkpoint_store.save(make_checkpoint(run_id="run-b", superstep=0))
        await checkpoint_store.save(make_checkpoint(run_id="run-a", superstep=1))

        listed = await checkpoint_store.list(run_id="run-a")

        assert _ids(listed) == ["run-a-step-0", "run-a-step-1"]

    async def test_list_filters_by_workflow_id(self, checkpoint_store: CheckpointStore) -> None:
        await checkpoint_store.save(make_checkpoint(run_id="run-a", workflow_id="wf-1"))
        await checkpoint_store.save(make_checkpoint(run_id="run-b", workflow_id="wf-2"))
        await checkpoint_store.save(make_checkpoint(run_id="run-c", workflow_id="wf-1"))

        listed = await checkpoint_store.list(workflow_id="wf-1")

        assert sorted(m.run_id for m in listed) == ["run-a", "run-c"]

    async def test_list_filters_by_workflow_id_and_run_id_together(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint(run_id="run-a", workflow_id="wf-1"))
        await checkpoint_store.save(make_checkpoint(run_id="run-b", workflow_id="wf-1"))

        assert _ids(await checkpoint_store.list(workflow_id="wf-1", run_id="run-b")) == [
            "run-b-step-0"
        ]
        assert await checkpoint_store.list(workflow_id="wf-2", run_id="run-b") == []

    async def test_list_of_an_unknown_run_is_empty(self, checkpoint_store: CheckpointStore) -> None:
        await checkpoint_store.save(make_checkpoint())

        assert await checkpoint_store.list(run_id="no-such-run") == []

    # --- pending requests and forks --------------------------------------------------------------

    async def test_list_reports_the_pending_request_ids_in_request_order(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint(pending_request_ids=["r-2", "r-1", "r-3"]))

        for listed in [
            await checkpoint_store.list(),
            await checkpoint_store.list(run_id="run-1"),
            await checkpoint_store.list(workflow_id="workflow-1"),
        ]:
            assert [m.pending_request_ids for m in listed] == [["r-2", "r-1", "r-3"]]

    async def test_list_reports_no_pending_request_ids_where_none_wait(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint(superstep=0, pending_request_ids=["r-1"]))
        await checkpoint_store.save(make_checkpoint(superstep=1, pending_request_ids=[]))

        listed = await checkpoint_store.list(run_id="run-1")

        assert [m.pending_request_ids for m in listed] == [["r-1"], []]

    async def test_list_reports_the_parent_checkpoint_id_of_each_checkpoint(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint(run_id="run-a", superstep=1))
        await checkpoint_store.save(
            make_checkpoint(run_id="run-b", superstep=2, parent_checkpoint_id="run-a-step-1")
        )
        await checkpoint_store.save(make_checkpoint(run_id="run-b", superstep=3))

        everything = await checkpoint_store.list()
        fork = await checkpoint_store.list(run_id="run-b")

        assert [(m.id, m.parent_checkpoint_id) for m in everything] == [
            ("run-a-step-1", None),
            ("run-b-step-2", "run-a-step-1"),
            ("run-b-step-3", None),
        ]
        assert [m.parent_checkpoint_id for m in fork] == ["run-a-step-1", None]

    async def test_load_round_trips_the_parent_checkpoint_id(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        fork = make_checkpoint(run_id="run-b", parent_checkpoint_id="run-a-step-1")
        await checkpoint_store.save(fork)

        loaded = await checkpoint_store.load(fork.id)
        latest = await checkpoint_store.latest("run-b")

        assert loaded == fork
        assert loaded is not None
        assert loaded.parent_checkpoint_id == "run-a-step-1"
        assert latest is not None
        assert latest.parent_checkpoint_id == "run-a-step-1"

    async def test_load_round_trips_the_run_outputs_and_their_absence(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        ended = make_checkpoint(superstep=1)
        midway = make_checkpoint(superstep=0, outputs=None)
        await checkpoint_store.save(ended)
        await checkpoint_store.save(midway)

        loaded_ended = await checkpoint_store.load(ended.id)
        loaded_midway = await checkpoint_store.load(midway.id)
        latest = await checkpoint_store.latest(ended.run_id)

        assert loaded_ended is not None
        assert loaded_ended.outputs == ended.outputs
        assert latest is not None
        assert latest.outputs == ended.outputs
        assert loaded_midway is not None
        assert loaded_midway.outputs is None

    # --- latest ----------------------------------------------------------------------------------

    async def test_latest_returns_the_highest_superstep(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        for superstep in [1, 5, 3]:
            await checkpoint_store.save(make_checkpoint(superstep=superstep))

        latest = await checkpoint_store.latest("run-1")

        assert latest == make_checkpoint(superstep=5)

    async def test_latest_breaks_superstep_ties_by_creation_time(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        newer = make_checkpoint(checkpoint_id="a-newer", created_at=_EPOCH + timedelta(seconds=9))
        older = make_checkpoint(checkpoint_id="z-older", created_at=_EPOCH + timedelta(seconds=1))
        await checkpoint_store.save(newer)
        await checkpoint_store.save(older)

        latest = await checkpoint_store.latest("run-1")

        assert latest is not None
        assert latest.id == "a-newer"

    async def test_latest_looks_only_at_the_given_run(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint(run_id="run-a", superstep=1))
        await checkpoint_store.save(make_checkpoint(run_id="run-b", superstep=7))

        latest = await checkpoint_store.latest("run-a")

        assert latest == make_checkpoint(run_id="run-a", superstep=1)

    async def test_latest_of_an_unknown_run_is_none(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint())

        assert await checkpoint_store.latest("no-such-run") is None

    # --- delete ----------------------------------------------------------------------------------

    async def test_delete_removes_the_checkpoint_and_returns_true(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint()
        await checkpoint_store.save(checkpoint)

        assert await checkpoint_store.delete(checkpoint.id) is True
        assert await checkpoint_store.load(checkpoint.id) is None
        assert await checkpoint_store.list() == []
        assert await checkpoint_store.latest(checkpoint.run_id) is None

    async def test_delete_of_an_unknown_id_returns_false(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint()
        await checkpoint_store.save(checkpoint)
        await checkpoint_store.delete(checkpoint.id)

        assert await checkpoint_store.delete(checkpoint.id) is False
        assert await checkpoint_store.delete("never-saved") is False

    async def test_delete_keeps_the_other_checkpoints(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        for superstep in range(3):
            await checkpoint_store.save(make_checkpoint(superstep=superstep))

        await checkpoint_store.delete("run-1-step-1")

        assert _ids(await checkpoint_store.list()) == ["run-1-step-0", "run-1-step-2"]

    async def test_delete_all_removes_the_run_and_counts_its_checkpoints(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        for superstep in range(3):
            await checkpoint_store.save(make_checkpoint(run_id="run-a", superstep=superstep))
        await checkpoint_store.save(make_checkpoint(run_id="run-b"))

        deleted = await checkpoint_store.delete_all("run-a")

        assert deleted == 3
        assert await checkpoint_store.list(run_id="run-a") == []
        assert await checkpoint_store.latest("run-a") is None
        assert await checkpoint_store.load("run-a-step-0") is None
        assert _ids(await checkpoint_store.list()) == ["run-b-step-0"]

    async def test_delete_all_of_an_unknown_run_returns_zero(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint())

        assert await checkpoint_store.delete_all("no-such-run") == 0
        assert len(await checkpoint_store.list()) == 1

    # --- cleanup_keep_last -----------------------------------------------------------------------

    async def test_cleanup_keep_last_keeps_the_newest_n(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        for superstep in [4, 0, 2, 1, 3]:
            await checkpoint_store.save(make_checkpoint(superstep=superstep))

        deleted = await checkpoint_store.cleanup_keep_last("run-1", 2)

        assert deleted == 3
        assert _ids(await checkpoint_store.list(run_id="run-1")) == [
            "run-1-step-3",
            "run-1-step-4",
        ]
        assert await checkpoint_store.load("run-1-step-0") is None

    async def test_cleanup_keep_last_uses_creation_time_within_a_superstep(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        newer = make_checkpoint(checkpoint_id="a-newer", created_at=_EPOCH + timedelta(seconds=9))
        older = make_checkpoint(checkpoint_id="z-older", created_at=_EPOCH + timedelta(seconds=1))
        await checkpoint_store.save(newer)
        await checkpoint_store.save(older)

        assert await checkpoint_store.cleanup_keep_last("run-1", 1) == 1
        assert _ids(await checkpoint_store.list()) == ["a-newer"]

    async def test_cleanup_keep_last_with_n_above_the_count_deletes_nothing(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        for superstep in range(3):
            await checkpoint_store.save(make_checkpoint(superstep=superstep))

        assert await checkpoint_store.cleanup_keep_last("run-1", 3) == 0
        assert await checkpoint_store.cleanup_keep_last("run-1", 10) == 0
        assert len(await checkpoint_store.list(run_id="run-1")) == 3

    async def test_cleanup_keep_last_zero_deletes_the_whole_run(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        for superstep in range(3):
            await checkpoint_store.save(make_checkpoint(superstep=superstep))

        assert await checkpoint_store.cleanup_keep_last("run-1", 0) == 3
        assert await checkpoint_store.latest("run-1") is None

    async def test_cleanup_keep_last_leaves_other_runs_alone(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        for superstep in range(3):
            await checkpoint_store.save(make_checkpoint(run_id="run-a", superstep=superstep))
            await checkpoint_store.save(make_checkpoint(run_id="run-b", superstep=superstep))

        await checkpoint_store.cleanup_keep_last("run-a", 1)

        assert len(await checkpoint_store.list(run_id="run-b")) == 3

    async def test_cleanup_keep_last_of_an_unknown_run_returns_zero(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        assert await checkpoint_store.cleanup_keep_last("no-such-run", 1) == 0

    async def test_cleanup_keep_last_rejects_a_negative_n(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        await checkpoint_store.save(make_checkpoint())

        with pytest.raises(ValueError, match="n >= 0"):
            await checkpoint_store.cleanup_keep_last("run-1", -1)
        assert len(await checkpoint_store.list()) == 1

    # --- concurrency -----------------------------------------------------------------------------

    async def test_concurrent_saves_are_all_retrievable(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoints = [
            make_checkpoint(run_id=f"run-{i % 5}", superstep=i)
            for i in range(self.concurrent_saves)
        ]

        saved = await asyncio.gather(*(checkpoint_store.save(c) for c in checkpoints))

        assert saved == [c.id for c in checkpoints]
        loaded = await asyncio.gather(*(checkpoint_store.load(c.id) for c in checkpoints))
        assert loaded == checkpoints
        assert len(await checkpoint_store.list()) == len(checkpoints)

    async def test_concurrent_saves_to_one_run_keep_its_index_whole(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoints = [make_checkpoint(superstep=i) for i in range(self.concurrent_saves)]

        await asyncio.gather(*(checkpoint_store.save(c) for c in checkpoints))

        listed = await checkpoint_store.list(run_id="run-1")
        assert [m.superstep for m in listed] == list(range(self.concurrent_saves))
        assert await checkpoint_store.latest("run-1") == checkpoints[-1]
