"""Conformance suites: one definition of a correct checkpoint store, state store and sandbox.

Every back-end, in every package, proves itself by running the same tests. Subclass a suite in a
test module, name the subclass ``Test...`` so pytest collects it, and give it the store under test
as a fixture (``checkpoint_store`` or ``state_store``), sync or async, with any fixtures it needs:

```python
from agentic_core.testing.conformance import CheckpointStoreConformance, StateStoreConformance


class TestFileCheckpointStore(CheckpointStoreConformance):
    @pytest.fixture
    def checkpoint_store(self, tmp_path: Path) -> CheckpointStore:
        return FileCheckpointStore(tmp_path)


class TestRedisStateStore(StateStoreConformance):
    ttl_s, ttl_wait_s = 0.2, 1.0  # slower expiry than the defaults allow for

    @pytest_asyncio.fixture
    async def state_store(self, redis_url: str) -> AsyncIterator[StateStore]:
        store = RedisStateStore(redis_url, namespace=uuid.uuid4().hex)
        yield store
        await store.close()
```

Each test must get a new, empty store. The suites need pytest and pytest-asyncio (they work in
both its ``auto`` and ``strict`` modes; in ``strict`` mode declare an async fixture with
``pytest_asyncio.fixture``). Import this module from tests only: it imports pytest. Class
attributes tune the timing-dependent tests for slower back-ends (``ttl_s``, ``ttl_wait_s``).
"""

# ruff: noqa: S101  (a test suite: plain asserts are how pytest reports failures)

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, cast

import pytest

from agentic_core._errors import CheckpointError, SerializationError
from agentic_core.protocols._checkpoint import CheckpointStore
from agentic_core.protocols._state import StateStore
from agentic_core.stores import Checkpoint, CheckpointMetadata
from agentic_core.testing._sandbox_conformance import (
    InteractiveSandboxConformance,
    SandboxConformance,
)

__all__ = [
    "CheckpointStoreConformance",
    "InteractiveSandboxConformance",
    "SandboxConformance",
    "StateStoreConformance",
    "make_checkpoint",
]

_EPOCH = datetime(2025, 1, 1, tzinfo=UTC)


def make_checkpoint(
    *,
    run_id: str = "run-1",
    superstep: int = 0,
    workflow_id: str = "workflow-1",
    checkpoint_id: str | None = None,
    created_at: datetime | None = None,
    shared_state: dict[str, Any] | None = None,
) -> Checkpoint:
    """A small checkpoint with a payload in every field, for store tests.

    The id defaults to ``"<run_id>-step-<superstep>"`` and ``created_at`` to a fixed instant plus
    ``superstep`` seconds, so checkpoints built here sort predictably.
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
        pending_requests=[{"request_id": "r-1", "source_executor_id": "ask", "data": {"q": "?"}}],
        executor_states={"writer": {"seen": [True, False]}},
        outputs_so_far=superstep,
        metadata={"note": "conformance"},
    )


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

    # --- list ------------------------------------------------------------------------------------

    async def test_list_of_an_empty_store_is_empty(self, checkpoint_store: CheckpointStore) -> None:
        assert await checkpoint_store.list() == []

    async def test_list_returns_the_metadata_of_each_checkpoint(
        self, checkpoint_store: CheckpointStore
    ) -> None:
        checkpoint = make_checkpoint(superstep=2)
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


_JSON_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -7,
    2**40,
    1.0,
    0.1,
    -2.5e-300,
    "",
    'héllo ✓ "quoted" \\ / \n',
    [],
    {},
    [1, "two", 3.0, None, True, [], {}],
    {"nested": {"list": [{"deep": [1, 2, {"x": None}]}], "flag": False}, "n": 1.5},
]


def _same_json(got: object, expected: object) -> bool:
    """Equal, and of the same JSON type at every level (``1`` is not ``1.0``, nor ``True``)."""
    if type(got) is not type(expected):
        return False
    if isinstance(expected, list):
        got_items, expected_items = cast("list[object]", got), cast("list[object]", expected)
        return len(got_items) == len(expected_items) and all(
            map(_same_json, got_items, expected_items)
        )
    if isinstance(expected, dict):
        got_map, expected_map = cast("dict[str, object]", got), cast("dict[str, object]", expected)
        return got_map.keys() == expected_map.keys() and all(
            _same_json(got_map[key], value) for key, value in expected_map.items()
        )
    return got == expected


class StateStoreConformance:
    """The behaviour every ``StateStore`` must have; subclass it as ``Test...``.

    The subclass provides the store as a fixture named ``state_store`` (see the module
    docstring); every test must receive a fresh, empty store. Back-ends whose expiry is coarse
    raise ``ttl_s`` and ``ttl_wait_s``.
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]
    ttl_s: ClassVar[float] = 0.05
    """The short TTL the expiry tests set."""
    ttl_wait_s: ClassVar[float] = 0.3
    """How long the expiry tests wait for ``ttl_s`` to pass (a generous margin over it)."""
    concurrent_sets: ClassVar[int] = 50
    """How many ``set`` calls ``test_concurrent_sets_all_land`` runs at once."""

    # --- get, set, delete, exists ----------------------------------------------------------------

    async def test_store_satisfies_the_protocol(self, state_store: StateStore) -> None:
        assert isinstance(state_store, StateStore)

    async def test_get_of_a_missing_key_returns_none(self, state_store: StateStore) -> None:
        assert await state_store.get("missing") is None
        assert await state_store.exists("missing") is False

    @pytest.mark.parametrize(
        "value", _JSON_VALUES, ids=[f"{type(v).__name__}-{i}" for i, v in enumerate(_JSON_VALUES)]
    )
    async def test_every_json_type_round_trips(self, state_store: StateStore, value: Any) -> None:
        await state_store.set("key", value)

        assert _same_json(await state_store.get("key"), value)

    async def test_a_stored_none_exists(self, state_store: StateStore) -> None:
        await state_store.set("empty", None)

        assert await state_store.exists("empty") is True
        assert await state_store.keys() == ["empty"]

    async def test_set_overwrites_the_previous_value(self, state_store: StateStore) -> None:
        await state_store.set("key", {"version": 1})

        await state_store.set("key", [2])

        assert await state_store.get("key") == [2]

    async def test_exists_reports_a_stored_key(self, state_store: StateStore) -> None:
        await state_store.set("present", 1)

        assert await state_store.exists("present") is True
        assert await state_store.exists("absent") is False

    async def test_delete_removes_a_key_and_returns_true(self, state_store: StateStore) -> None:
        await state_store.set("key", "value")

        assert await state_store.delete("key") is True
        assert await state_store.get("key") is None
        assert await state_store.exists("key") is False

    async def test_delete_of_a_missing_key_returns_false(self, state_store: StateStore) -> None:
        assert await state_store.delete("missing") is False

    async def test_keys_work_with_slashes_colons_and_unicode(self, state_store: StateStore) -> None:
        key = "tenant:1/session/ünïcode ✓"

        await state_store.set(key, "value")

        assert await state_store.get(key) == "value"
        assert await state_store.keys("tenant:1/") == [key]

    # --- keys ------------------------------------------------------------------------------------

    async def test_keys_of_an_empty_store_is_empty(self, state_store: StateStore) -> None:
        assert await state_store.keys() == []

    async def test_keys_lists_every_key_sorted(self, state_store: StateStore) -> None:
        for key in ["b", "a/2", "c", "a/1"]:
            await state_store.set(key, 0)

        assert await state_store.keys() == ["a/1", "a/2", "b", "c"]

    async def test_keys_filters_by_prefix(self, state_store: StateStore) -> None:
        for key in ["runs/1/a", "runs/1/b", "runs/10/a", "runs/2/a", "other"]:
            await state_store.set(key, 0)

        assert await state_store.keys("runs/1/") == ["runs/1/a", "runs/1/b"]
        assert await state_store.keys("runs/1") == ["runs/1/a", "runs/1/b", "runs/10/a"]
        assert await state_store.keys("nothing/") == []

    async def test_keys_treats_the_prefix_literally(self, state_store: StateStore) -> None:
        for key in ["a*b", "a?c", "a[x]", "a%", "ab", "a_"]:
            await state_store.set(key, 0)

        assert await state_store.keys("a*") == ["a*b"]
        assert await state_store.keys("a?") == ["a?c"]
        assert await state_store.keys("a[") == ["a[x]"]
        assert await state_store.keys("a%") == ["a%"]
        assert await state_store.keys("a_") == ["a_"]

    async def test_keys_omits_deleted_keys(self, state_store: StateStore) -> None:
        await state_store.set("a", 1)
        await state_store.set("b", 2)

        await state_store.delete("a")

        assert await state_store.keys() == ["b"]

    # --- TTL -------------------------------------------------------------------------------------

    async def test_a_value_with_a_ttl_is_visible_before_it_expires(
        self, state_store: StateStore
    ) -> None:
        await state_store.set("key", "value", ttl_s=60)

        assert await state_store.get("key") == "value"
        assert await state_store.exists("key") is True
        assert await state_store.keys() == ["key"]

    async def test_a_value_disappears_after_its_ttl(self, state_store: StateStore) -> None:
        await state_store.set("short", "gone soon", ttl_s=self.ttl_s)
        await state_store.set("long", "stays", ttl_s=60)
        await state_store.set("forever", "stays")

        await asyncio.sleep(self.ttl_wait_s)

        assert await state_store.get("short") is None
        assert await state_store.exists("short") is False
        assert await state_store.keys() == ["forever", "long"]
        assert await state_store.get("long") == "stays"

    async def test_delete_of_an_expired_key_returns_false(self, state_store: StateStore) -> None:
        await state_store.set("short", 1, ttl_s=self.ttl_s)

        await asyncio.sleep(self.ttl_wait_s)

        assert await state_store.delete("short") is False

    async def test_set_without_ttl_clears_an_earlier_ttl(self, state_store: StateStore) -> None:
        await state_store.set("key", "first", ttl_s=self.ttl_s)

        await state_store.set("key", "second")
        await asyncio.sleep(self.ttl_wait_s)

        assert await state_store.get("key") == "second"

    async def test_a_key_can_be_set_again_after_it_expired(self, state_store: StateStore) -> None:
        await state_store.set("key", "first", ttl_s=self.ttl_s)
        await asyncio.sleep(self.ttl_wait_s)

        await state_store.set("key", "second")

        assert await state_store.get("key") == "second"

    # --- JSON-ability and independence -----------------------------------------------------------

    @pytest.mark.parametrize(
        "value",
        [object(), {1, 2}, b"bytes", datetime(2025, 1, 1, tzinfo=UTC), {"inner": [object()]}],
        ids=["object", "set", "bytes", "datetime", "nested-object"],
    )
    async def test_a_value_that_is_not_json_able_is_rejected(
        self, state_store: StateStore, value: Any
    ) -> None:
        with pytest.raises(SerializationError, match=re.escape("bad-key")):
            await state_store.set("bad-key", value)

        assert await state_store.exists("bad-key") is False

    async def test_a_rejected_value_keeps_the_previous_one(self, state_store: StateStore) -> None:
        await state_store.set("key", "good")

        with pytest.raises(SerializationError):
            await state_store.set("key", {"bad": object()})

        assert await state_store.get("key") == "good"

    async def test_changing_a_value_after_set_does_not_change_the_store(
        self, state_store: StateStore
    ) -> None:
        value: dict[str, Any] = {"items": [1, 2], "nested": {"x": 1}}
        await state_store.set("key", value)

        value["items"].append(3)
        value["nested"]["x"] = 2
        value["added"] = True

        assert await state_store.get("key") == {"items": [1, 2], "nested": {"x": 1}}

    async def test_changing_a_got_value_does_not_change_the_store(
        self, state_store: StateStore
    ) -> None:
        await state_store.set("key", {"items": [1, 2]})
        got = cast("dict[str, list[int]]", await state_store.get("key"))

        got["items"].append(3)

        assert await state_store.get("key") == {"items": [1, 2]}

    # --- concurrency -----------------------------------------------------------------------------

    async def test_concurrent_sets_all_land(self, state_store: StateStore) -> None:
        count = self.concurrent_sets

        await asyncio.gather(*(state_store.set(f"k/{i:03d}", {"i": i}) for i in range(count)))

        assert await state_store.keys("k/") == [f"k/{i:03d}" for i in range(count)]
        values = await asyncio.gather(*(state_store.get(f"k/{i:03d}") for i in range(count)))
        assert values == [{"i": i} for i in range(count)]
