"""InMemoryStateStore and InMemoryCheckpointStore: behaviour beyond the conformance suites."""

from __future__ import annotations

import math

import pytest

from agentic_core._errors import SerializationError
from agentic_core.stores import InMemoryCheckpointStore, InMemoryStateStore
from agentic_core.testing.conformance import make_checkpoint


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (math.nan, "nan"),
        ({"limits": [math.inf]}, "inf"),
        ({1: "one"}, "key 1 (a int, not str)"),
        ({"when": {1, 2}}, "value['when'] (a set)"),
    ],
    ids=["nan", "inf", "int-key", "set"],
)
async def test_state_store_error_names_the_key_and_the_bad_part(value: object, named: str) -> None:
    store = InMemoryStateStore()

    with pytest.raises(SerializationError, match="session/7") as caught:
        await store.set("session/7", value)

    assert named in str(caught.value)


async def test_state_store_refuses_a_cycle() -> None:
    store = InMemoryStateStore()
    cyclic: list[object] = []
    cyclic.append(cyclic)

    with pytest.raises(SerializationError, match="cycle"):
        await store.set("loop", cyclic)


async def test_state_store_returns_tuples_as_lists() -> None:
    store = InMemoryStateStore()

    await store.set("pair", (1, ("a", None)))

    assert await store.get("pair") == [1, ["a", None]]


@pytest.mark.parametrize("ttl_s", [0, -1.0, math.nan])
async def test_state_store_refuses_a_ttl_that_is_not_positive(ttl_s: float) -> None:
    store = InMemoryStateStore()

    with pytest.raises(ValueError, match="ttl_s"):
        await store.set("key", 1, ttl_s=ttl_s)


async def test_state_store_expiry_follows_its_clock() -> None:
    clock = FakeClock()
    store = InMemoryStateStore(clock=clock)
    await store.set("key", "value", ttl_s=10)

    clock.now += 9.9
    assert await store.get("key") == "value"
    clock.now += 0.1
    assert await store.get("key") is None


async def test_state_store_purges_expired_keys_nobody_reads() -> None:
    clock = FakeClock()
    store = InMemoryStateStore(clock=clock)
    for i in range(100):
        await store.set(f"temp/{i}", i, ttl_s=1)

    clock.now += 60
    await store.set("other", 0)

    assert list(store._entries) == ["other"]  # pyright: ignore[reportPrivateUsage]


async def test_checkpoint_store_moves_an_id_saved_again_under_another_run() -> None:
    store = InMemoryCheckpointStore()
    await store.save(make_checkpoint(run_id="run-a", checkpoint_id="same"))

    await store.save(make_checkpoint(run_id="run-b", checkpoint_id="same"))

    assert await store.list(run_id="run-a") == []
    assert await store.latest("run-a") is None
    assert [m.run_id for m in await store.list()] == ["run-b"]
