"""StateStoreCheckpointStore: key layout, TTL, and corrupt data in the underlying store."""

from __future__ import annotations

import asyncio

import pytest

from agentic_core._errors import CheckpointError
from agentic_core.stores import InMemoryStateStore, StateStoreCheckpointStore
from agentic_core.testing.conformance import make_checkpoint


async def test_a_checkpoint_takes_a_data_key_and_a_run_index_key() -> None:
    state = InMemoryStateStore()
    store = StateStoreCheckpointStore(state, prefix="cp")
    checkpoint = make_checkpoint(run_id="run-1", checkpoint_id="c1")

    await store.save(checkpoint)

    assert await state.keys() == ["cp/checkpoint/c1", "cp/run/run-1/c1"]
    assert await state.get("cp/checkpoint/c1") == checkpoint.model_dump(mode="json")
    assert await state.get("cp/run/run-1/c1") == checkpoint.to_metadata().model_dump(mode="json")


async def test_an_index_entry_older_than_forks_and_request_listings_still_lists() -> None:
    state = InMemoryStateStore()
    store = StateStoreCheckpointStore(state, prefix="cp")
    checkpoint = make_checkpoint(run_id="run-1", checkpoint_id="c1")
    await store.save(checkpoint)
    entry = checkpoint.to_metadata().model_dump(
        mode="json", exclude={"parent_checkpoint_id", "pending_request_ids"}
    )
    await state.set("cp/run/run-1/c1", entry)

    [listed] = await store.list()

    assert (listed.id, listed.parent_checkpoint_id, listed.pending_request_ids) == ("c1", None, [])
    assert await store.latest("run-1") == checkpoint


async def test_ids_with_slashes_cannot_collide_with_other_runs() -> None:
    store = StateStoreCheckpointStore(InMemoryStateStore())
    nested = make_checkpoint(run_id="team/run", checkpoint_id="a/b")
    plain = make_checkpoint(run_id="team", checkpoint_id="run/a")

    await store.save(nested)
    await store.save(plain)

    assert [m.id for m in await store.list(run_id="team")] == ["run/a"]
    assert await store.latest("team/run") == nested
    assert await store.delete_all("team") == 1
    assert await store.load("a/b") == nested


async def test_two_prefixes_share_one_state_store_independently() -> None:
    state = InMemoryStateStore()
    first = StateStoreCheckpointStore(state, prefix="one")
    second = StateStoreCheckpointStore(state, prefix="one-more")
    await first.save(make_checkpoint())

    assert await second.list() == []
    assert await second.latest("run-1") is None


async def test_checkpoints_expire_with_the_ttl() -> None:
    store = StateStoreCheckpointStore(InMemoryStateStore(), ttl_s=0.05)
    checkpoint = make_checkpoint()
    await store.save(checkpoint)
    assert await store.load(checkpoint.id) == checkpoint

    await asyncio.sleep(0.3)

    assert await store.load(checkpoint.id) is None
    assert await store.list() == []
    assert await store.latest(checkpoint.run_id) is None
    assert await store.delete(checkpoint.id) is False


async def test_without_a_ttl_checkpoints_do_not_expire() -> None:
    state = InMemoryStateStore()
    store = StateStoreCheckpointStore(state, ttl_s=None)
    await store.save(make_checkpoint())

    await asyncio.sleep(0.1)

    assert len(await store.list()) == 1


@pytest.mark.parametrize("ttl_s", [0, -5.0])
def test_a_ttl_that_is_not_positive_is_refused(ttl_s: float) -> None:
    with pytest.raises(ValueError, match="ttl_s"):
        StateStoreCheckpointStore(InMemoryStateStore(), ttl_s=ttl_s)


async def test_corrupt_checkpoint_data_raises_naming_the_key() -> None:
    state = InMemoryStateStore()
    store = StateStoreCheckpointStore(state)
    await store.save(make_checkpoint(checkpoint_id="c1"))
    await state.set("checkpoints/checkpoint/c1", {"id": "c1", "superstep": "many"})

    with pytest.raises(CheckpointError, match="'checkpoints/checkpoint/c1'"):
        await store.load("c1")
    with pytest.raises(CheckpointError, match="'checkpoints/checkpoint/c1'"):
        await store.latest("run-1")


async def test_a_corrupt_index_entry_raises_naming_the_key() -> None:
    state = InMemoryStateStore()
    store = StateStoreCheckpointStore(state)
    await store.save(make_checkpoint(checkpoint_id="c1"))
    await state.set("checkpoints/run/run-1/c1", "garbage")

    with pytest.raises(CheckpointError, match="'checkpoints/run/run-1/c1'"):
        await store.list()


async def test_a_corrupt_checkpoint_can_still_be_deleted() -> None:
    state = InMemoryStateStore()
    store = StateStoreCheckpointStore(state)
    await store.save(make_checkpoint(checkpoint_id="c1"))
    await state.set("checkpoints/checkpoint/c1", {"run_id": "run-1", "broken": True})

    assert await store.delete("c1") is True
    assert await state.keys() == []


async def test_latest_skips_an_index_entry_whose_checkpoint_is_gone() -> None:
    state = InMemoryStateStore()
    store = StateStoreCheckpointStore(state)
    older = make_checkpoint(superstep=1)
    await store.save(older)
    await store.save(make_checkpoint(superstep=2))
    await state.delete("checkpoints/checkpoint/run-1-step-2")

    assert await store.latest("run-1") == older
