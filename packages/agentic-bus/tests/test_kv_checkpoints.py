"""NatsCheckpointStore against a real nats-server: the CheckpointStore conformance suite, large
checkpoints in parts, corrupt data, and fencing (claims, epochs, a coordinator overtaken)."""

from __future__ import annotations

import asyncio
import re
import secrets
import uuid
from collections.abc import AsyncIterator

import nats
import pytest
import pytest_asyncio
from kv_helpers import bucket_subjects, delete_bucket
from nats.aio.client import Client as NatsClient

from agentic_bus import CoordinatorFencedError
from agentic_bus._kv._checkpoints import NatsCheckpointStore, RunHead
from agentic_bus._kv._keys import encode_key
from agentic_core import Checkpoint, CheckpointError, StorageError
from agentic_core.protocols import CheckpointStore
from agentic_core.testing.conformance import CheckpointStoreConformance, make_checkpoint
from tests.fixtures.servers import free_port

pytestmark = pytest.mark.timeout(60)

RUN = "run-1"


@pytest_asyncio.fixture
async def bucket(nats_server: str) -> AsyncIterator[str]:
    name = f"t{uuid.uuid4().hex[:12]}"
    yield name
    await delete_bucket(nats_server, name)


@pytest_asyncio.fixture
async def store(nats_server: str, bucket: str) -> AsyncIterator[NatsCheckpointStore]:
    async with NatsCheckpointStore(nats_server, bucket=bucket) as checkpoints:
        yield checkpoints


@pytest_asyncio.fixture
async def other(nats_server: str, bucket: str) -> AsyncIterator[NatsCheckpointStore]:
    """A second store instance on the same bucket: another coordinator process."""
    async with NatsCheckpointStore(nats_server, bucket=bucket) as checkpoints:
        yield checkpoints


@pytest_asyncio.fixture
async def raw_client(nats_server: str) -> AsyncIterator[NatsClient]:
    client = await nats.connect(nats_server)
    yield client
    await client.close()


class TestNatsCheckpointStore(CheckpointStoreConformance):
    @pytest_asyncio.fixture
    async def checkpoint_store(self, store: NatsCheckpointStore) -> AsyncIterator[CheckpointStore]:
        yield store


# --- large and corrupt checkpoints ---------------------------------------------------------------


async def test_a_2_mb_checkpoint_round_trips_in_parts(
    store: NatsCheckpointStore, raw_client: NatsClient
) -> None:
    big = make_checkpoint(shared_state={"blob": secrets.token_hex(1_000_000)})

    await store.save(big)

    subjects = await bucket_subjects(raw_client, store.bucket)
    assert len([s for s in subjects if s.startswith(f"cp.{big.id}.part.")]) == 4
    assert await store.load(big.id) == big
    assert await store.latest(big.run_id) == big
    assert await store.list() == [big.to_metadata()]
    assert await store.delete(big.id) is True
    assert await bucket_subjects(raw_client, store.bucket) == {}


@pytest.mark.parametrize(
    "data",
    [
        b"not ours",
        b"\x00J{}",
        b"\x00J" + make_checkpoint(checkpoint_id="another").model_dump_json().encode(),
    ],
    ids=["foreign", "not-a-checkpoint", "another-id"],
)
async def test_a_corrupt_checkpoint_raises_checkpoint_error_naming_the_id(
    store: NatsCheckpointStore, raw_client: NatsClient, data: bytes
) -> None:
    checkpoint = make_checkpoint(checkpoint_id="ck/1 ✓")
    await store.save(checkpoint)
    await raw_client.jetstream().publish(f"$KV.{store.bucket}.cp.{encode_key(checkpoint.id)}", data)

    with pytest.raises(CheckpointError, match=re.escape("'ck/1 ✓'")):
        await store.load(checkpoint.id)
    with pytest.raises(CheckpointError, match=re.escape("'ck/1 ✓'")):
        await store.latest(checkpoint.run_id)

    assert await store.delete(checkpoint.id) is True
    assert await store.list() == []


async def test_a_missing_part_raises_checkpoint_error_naming_the_id(
    store: NatsCheckpointStore, raw_client: NatsClient
) -> None:
    big = make_checkpoint(
        checkpoint_id="big-one", shared_state={"blob": secrets.token_hex(300_000)}
    )
    await store.save(big)
    [part, *_] = [s for s in await bucket_subjects(raw_client, store.bucket) if ".part." in s]
    await raw_client.jetstream().purge_stream(
        f"KV_{store.bucket}", subject=f"$KV.{store.bucket}.{part}"
    )

    with pytest.raises(CheckpointError, match=r"'big-one'.*missing"):
        await store.load("big-one")


async def test_corrupt_metadata_raises_checkpoint_error_naming_the_key(
    store: NatsCheckpointStore, raw_client: NatsClient
) -> None:
    await store.save(make_checkpoint())
    await raw_client.jetstream().publish(f"$KV.{store.bucket}.run.{RUN}.cp.bogus", b"\x00J[]")

    with pytest.raises(CheckpointError, match=re.escape(f"run.{RUN}.cp.bogus")):
        await store.list(run_id=RUN)


async def test_an_id_saved_again_in_another_run_moves_to_that_run(
    store: NatsCheckpointStore,
) -> None:
    await store.save(make_checkpoint(run_id="run-a", checkpoint_id="same"))
    moved = make_checkpoint(run_id="run-b", checkpoint_id="same")

    await store.save(moved)

    assert await store.list(run_id="run-a") == []
    assert await store.list() == [moved.to_metadata()]
    assert await store.load("same") == moved


async def test_an_unreachable_server_raises_storage_error() -> None:
    port = free_port()
    store = NatsCheckpointStore(f"nats://127.0.0.1:{port}", connect_timeout_s=0.5)

    with pytest.raises(StorageError, match=f"127.0.0.1:{port}"):
        await store.load("anything")
    await store.close()


async def test_a_nats_client_given_is_used_and_left_open(
    raw_client: NatsClient, bucket: str
) -> None:
    async with NatsCheckpointStore(raw_client, bucket=bucket) as store:
        await store.save(make_checkpoint())
        assert await store.latest(RUN) == make_checkpoint()

    assert raw_client.is_connected


# --- fencing -------------------------------------------------------------------------------------


def step(superstep: int, coordinator: str) -> Checkpoint:
    return make_checkpoint(superstep=superstep, checkpoint_id=f"{coordinator}-{superstep}")


async def test_a_claim_starts_at_epoch_one_and_each_claim_bumps_it(
    store: NatsCheckpointStore, other: NatsCheckpointStore
) -> None:
    assert await store.head(RUN) is None

    assert await store.claim_run(RUN, "coord-a") == 1
    assert await other.claim_run(RUN, "coord-b") == 2
    assert await store.claim_run(RUN, "coord-a") == 3

    head = await other.head(RUN)
    assert isinstance(head, RunHead)
    assert (head.run_id, head.epoch, head.coordinator_id) == (RUN, 3, "coord-a")
    assert head.checkpoint_id is None
    assert store.claimed_epoch(RUN) == 3
    assert other.claimed_epoch(RUN) == 2


async def test_a_first_claim_adopts_the_runs_latest_checkpoint(
    store: NatsCheckpointStore, other: NatsCheckpointStore
) -> None:
    for superstep in range(3):
        await store.save(step(superstep, "local"))

    await other.claim_run(RUN, "coord-b")

    head = await store.head(RUN)
    assert head is not None
    assert (head.checkpoint_id, head.superstep) == ("local-2", 2)
    assert await store.latest(RUN) == step(2, "local")


async def test_an_overtaken_coordinator_is_fenced_and_its_checkpoint_never_becomes_latest(
    store: NatsCheckpointStore, other: NatsCheckpointStore
) -> None:
    a, b = store, other
    assert await a.claim_run(RUN, "coord-a") == 1
    await a.save(step(1, "a"))
    assert await b.latest(RUN) == step(1, "a")

    assert await b.claim_run(RUN, "coord-b") == 2

    with pytest.raises(CoordinatorFencedError) as caught:
        await a.save(step(2, "a"))
    message = str(caught.value)
    assert "'run-1'" in message
    assert "epoch 1" in message
    assert "epoch 2" in message
    assert "'coord-b'" in message
    assert caught.value.superstep == 2
    assert await a.load("a-2") is None
    assert await a.latest(RUN) == step(1, "a")
    assert await b.latest(RUN) == step(1, "a")
    assert a.claimed_epoch(RUN) is None

    await b.save(step(2, "b"))
    await b.save(step(3, "b"))
    assert await a.latest(RUN) == step(3, "b")
    head = await a.head(RUN)
    assert head is not None
    assert (head.epoch, head.coordinator_id, head.checkpoint_id, head.superstep) == (
        2,
        "coord-b",
        "b-3",
        3,
    )


async def test_a_claim_between_write_and_commit_fences_and_removes_the_written_checkpoint(
    store: NatsCheckpointStore, other: NatsCheckpointStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = store, other
    await a.claim_run(RUN, "coord-a")
    await a.save(step(1, "a"))
    write = a._write  # pyright: ignore[reportPrivateUsage]

    async def write_then_lose_the_run(checkpoint: Checkpoint, text: str) -> None:
        await write(checkpoint, text)
        await b.claim_run(RUN, "coord-b")  # overtaken after the write, before the head moved

    monkeypatch.setattr(a, "_write", write_then_lose_the_run)

    with pytest.raises(CoordinatorFencedError, match="epoch 2"):
        await a.save(step(9, "a"))

    assert await b.load("a-9") is None
    assert [m.id for m in await b.list(run_id=RUN)] == ["a-1"]
    assert await b.latest(RUN) == step(1, "a")


async def test_concurrent_claims_have_one_winner_per_revision(
    nats_server: str, bucket: str
) -> None:
    stores = [NatsCheckpointStore(nats_server, bucket=bucket) for _ in range(3)]
    try:
        for round_ in range(15):
            epochs = await asyncio.gather(
                *(s.claim_run(RUN, f"coord-{i}") for i, s in enumerate(stores))
            )
            assert sorted(epochs) == [3 * round_ + 1, 3 * round_ + 2, 3 * round_ + 3]
            winner = epochs.index(max(epochs))
            head = await stores[0].head(RUN)
            assert head is not None
            assert (head.epoch, head.coordinator_id) == (max(epochs), f"coord-{winner}")

            saves = await asyncio.gather(
                *(s.save(step(round_, f"c{i}")) for i, s in enumerate(stores)),
                return_exceptions=True,
            )

            committed = [i for i, r in enumerate(saves) if not isinstance(r, BaseException)]
            assert committed == [winner]
            assert all(
                isinstance(r, CoordinatorFencedError) for i, r in enumerate(saves) if i != winner
            )
            assert await stores[1].latest(RUN) == step(round_, f"c{winner}")
    finally:
        for s in stores:
            await s.close()


async def test_saves_of_a_run_this_store_never_claimed_are_not_fenced(
    store: NatsCheckpointStore, other: NatsCheckpointStore
) -> None:
    await store.claim_run(RUN, "coord-a")
    await store.save(step(1, "a"))

    await other.save(step(5, "observer"))  # no claim: saved, but does not move the head

    assert await other.load("observer-5") == step(5, "observer")
    assert await other.latest(RUN) == step(1, "a")
    assert await other.latest("unclaimed-run") is None


async def test_a_released_run_is_saved_without_fencing(
    store: NatsCheckpointStore, other: NatsCheckpointStore
) -> None:
    await store.claim_run(RUN, "coord-a")
    await other.claim_run(RUN, "coord-b")

    await store.release_run(RUN)
    await store.save(step(1, "a"))

    assert store.claimed_epoch(RUN) is None
    assert await store.load("a-1") == step(1, "a")


async def test_delete_all_removes_the_head_and_fences_its_coordinator(
    store: NatsCheckpointStore, other: NatsCheckpointStore
) -> None:
    await store.claim_run(RUN, "coord-a")
    await store.save(step(1, "a"))

    assert await other.delete_all(RUN) == 1

    assert await other.head(RUN) is None
    with pytest.raises(CoordinatorFencedError, match="head was deleted"):
        await store.save(step(2, "a"))
    assert await other.list() == []


async def test_cleanup_keeps_the_checkpoint_the_head_names(
    store: NatsCheckpointStore, other: NatsCheckpointStore
) -> None:
    await store.claim_run(RUN, "coord-a")
    await store.save(step(1, "a"))
    await other.save(step(7, "stray"))  # an unclaimed save with a higher superstep

    assert await store.cleanup_keep_last(RUN, 1) == 0

    assert [m.id for m in await store.list(run_id=RUN)] == ["a-1", "stray-7"]
    assert await store.latest(RUN) == step(1, "a")


async def test_claim_refuses_an_empty_coordinator_id(store: NatsCheckpointStore) -> None:
    with pytest.raises(ValueError, match="coordinator_id"):
        await store.claim_run(RUN, "")
