"""NatsKVStateStore against a real nats-server: the StateStore conformance suite, plus values in
parts, keys of any characters, TTLs, an unreachable or restarted server, foreign values; and the
key escaping (property tests)."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
import pytest_asyncio
from hypothesis import given, settings
from hypothesis import strategies as st
from kv_helpers import bucket_subjects, delete_bucket, new_bucket
from nats.aio.client import Client as NatsClient

from agentic_bus import NatsBus
from agentic_bus._kv._framing import ttl_header
from agentic_bus._kv._keys import decode_key, encode_key
from agentic_bus._kv._state import NatsKVStateStore
from agentic_core import Memory, StateStoreCheckpointStore, StateStoreMemoryProvider, StorageError
from agentic_core.protocols import CheckpointStore, StateStore
from agentic_core.testing.conformance import CheckpointStoreConformance, StateStoreConformance
from tests.fixtures.servers import ServerProcess, free_port

pytestmark = pytest.mark.timeout(60)

KV_KEY = re.compile(r"^[-/_=a-zA-Z0-9]+$")  # one KV token: the KV alphabet without "."
PASSWORD = "s3cret-Pa55word"  # noqa: S105 - a made-up password that must never be shown


@pytest_asyncio.fixture
async def raw_client(nats_server: str) -> AsyncIterator[NatsClient]:
    client = await nats.connect(nats_server)
    yield client
    await client.close()


@pytest_asyncio.fixture
async def store(nats_server: str) -> AsyncIterator[NatsKVStateStore]:
    bucket = new_bucket()
    kv_store = NatsKVStateStore(nats_server, bucket=bucket)
    yield kv_store
    await kv_store.close()
    await delete_bucket(nats_server, bucket)


class TestNatsKVStateStore(StateStoreConformance):
    # nats-server's smallest per-message TTL is one second; it removes expired messages within
    # ~10 ms of their TTL (measured), so 0.5 s of margin is plenty.
    ttl_s, ttl_wait_s = 1.0, 1.5

    @pytest_asyncio.fixture
    async def state_store(self, store: NatsKVStateStore) -> AsyncIterator[StateStore]:
        yield store


# --- key escaping --------------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_escaped_keys_are_one_kv_token_and_round_trip(key: str) -> None:
    token = encode_key(key)

    assert KV_KEY.match(token)
    assert decode_key(token) == key


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=8), st.text(max_size=8))
def test_escaping_is_injective_and_keeps_prefixes(a: str, b: str) -> None:
    assert (encode_key(a) == encode_key(b)) == (a == b)
    if a:
        assert encode_key(a + b).startswith(encode_key(a))
        assert encode_key(b).startswith(encode_key(a)) == b.startswith(a)


@pytest.mark.parametrize(
    ("key", "token"),
    [
        ("sessions/42", "sessions/42"),
        ("a.b", "a=2Eb"),
        ("=", "=3D"),
        ("", "="),
        ("*>", "=2A=3E"),
        ("ü", "=C3=BC"),
        ("\ud800", "=ED=A0=80"),  # a lone surrogate still round-trips
    ],
)
def test_escaping_examples(key: str, token: str) -> None:
    assert encode_key(key) == token
    assert decode_key(token) == key


@pytest.mark.parametrize("token", ["", "a.b", "=4", "=zz", "=41", "=3d", "=FF", "a b"])
def test_decoding_refuses_what_encoding_never_writes(token: str) -> None:
    with pytest.raises(ValueError, match=re.escape(repr(token)) if token else "empty"):
        decode_key(token)


# --- values in parts -----------------------------------------------------------------------------


async def test_a_3_mb_value_round_trips_in_parts_and_its_parts_go_with_it(
    store: NatsKVStateStore, raw_client: NatsClient
) -> None:
    big = {"blob": secrets.token_hex(1_500_000), "n": 1}  # 3 MB of JSON
    other = {"blob": secrets.token_hex(1_400_000), "n": 2}

    await store.set("big", big)
    first_parts = {s for s in await bucket_subjects(raw_client, store.bucket) if ".part." in s}
    assert await store.get("big") == big
    assert len(first_parts) == 6  # 3,000,021 bytes in parts of 512 KiB
    assert await store.keys() == ["big"]

    await store.set("big", other)  # overwrite: new parts in, old parts out
    second_parts = {s for s in await bucket_subjects(raw_client, store.bucket) if ".part." in s}
    assert await store.get("big") == other
    assert len(second_parts) == 6
    assert not first_parts & second_parts

    await store.set("big", "small now")
    assert await bucket_subjects(raw_client, store.bucket) == {"big": 1}
    assert await store.get("big") == "small now"

    await store.set("big", big)
    assert await store.delete("big") is True
    assert await bucket_subjects(raw_client, store.bucket) == {}
    assert await store.get("big") is None


async def test_concurrent_writers_of_one_large_key_leave_one_whole_value(
    store: NatsKVStateStore, raw_client: NatsClient
) -> None:
    values = [{"i": i, "blob": secrets.token_hex(400_000)} for i in range(5)]  # 2 parts each

    await asyncio.gather(*(store.set("contended", value) for value in values))

    assert await store.get("contended") in values
    parts = [s for s in await bucket_subjects(raw_client, store.bucket) if ".part." in s]
    assert len(parts) == 2  # only the winner's parts are left
    assert len({p.split(".")[2] for p in parts}) == 1


@pytest.mark.parametrize("damage", ["overwrite", "remove"])
async def test_a_corrupt_or_missing_part_raises_storage_error_naming_the_key(
    store: NatsKVStateStore, raw_client: NatsClient, damage: str
) -> None:
    await store.set("doc/big", {"blob": secrets.token_hex(400_000)})
    [part, *_] = sorted(s for s in await bucket_subjects(raw_client, store.bucket) if ".part." in s)
    js = raw_client.jetstream()
    if damage == "overwrite":
        await js.publish(f"$KV.{store.bucket}.{part}", b"garbage")
    else:
        await js.purge_stream(f"KV_{store.bucket}", subject=f"$KV.{store.bucket}.{part}")

    with pytest.raises(StorageError, match=re.escape("'doc/big'")) as caught:
        await store.get("doc/big")

    assert "missing" in str(caught.value) if damage == "remove" else "sha256" in str(caught.value)
    await store.set("doc/big", "repaired")  # a write replaces the broken value
    assert await store.get("doc/big") == "repaired"


# --- keys ----------------------------------------------------------------------------------------

ODD_KEYS = [
    "a.b",
    "a..b",
    ".lead",
    "trail.",
    "*",
    "a*b",
    ">",
    "a.>",
    "with space",
    " ",
    "tab\there",
    "ünïcödé ✓ 🚀",
    "=",
    "=3D",
    "%2E",
    "",
    "x" * 500,
]


async def test_keys_of_any_characters_round_trip_through_keys(store: NatsKVStateStore) -> None:
    for i, key in enumerate(ODD_KEYS):
        await store.set(key, i)

    assert await store.keys() == sorted(ODD_KEYS)
    for i, key in enumerate(ODD_KEYS):
        assert await store.get(key) == i
    assert await store.keys("a.") == ["a..b", "a.>", "a.b"]
    assert await store.keys("=") == ["=", "=3D"]
    assert await store.keys("*") == ["*"]
    assert await store.keys(">") == [">"]


async def test_a_key_too_long_for_a_subject_is_refused_by_name(store: NatsKVStateStore) -> None:
    key = "ü" * 1000  # 6,000 bytes escaped

    with pytest.raises(StorageError, match="too long"):
        await store.set(key, 1)

    assert await store.get(key) is None
    assert await store.exists(key) is False
    assert await store.delete(key) is False
    await store.set("still-works", 1)  # the connection survived
    assert await store.keys() == ["still-works"]


# --- TTL -----------------------------------------------------------------------------------------


def test_ttl_header_is_milliseconds_of_at_least_one_second() -> None:
    assert ttl_header(0.05) == "1000ms"
    assert ttl_header(1) == "1000ms"
    assert ttl_header(1.5) == "1500ms"
    assert ttl_header(86_400) == "86400000ms"


async def test_a_sub_second_ttl_lasts_one_second_and_large_values_expire_too(
    store: NatsKVStateStore,
) -> None:
    big = {"blob": secrets.token_hex(400_000)}
    await store.set("short", 1, ttl_s=0.05)
    await store.set("big", big, ttl_s=1)
    await store.set("kept", 2, ttl_s=1)
    await store.set("kept", 3)  # a plain set clears the TTL
    await asyncio.sleep(0.5)

    assert await store.get("short") == 1
    assert await store.get("big") == big

    await asyncio.sleep(1.0)
    assert await store.keys() == ["kept"]
    assert await store.get("big") is None
    assert await store.get("kept") == 3


# --- connections ---------------------------------------------------------------------------------


async def test_an_unreachable_server_raises_storage_error_naming_the_host_not_the_password() -> (
    None
):
    port = free_port()
    store = NatsKVStateStore(f"nats://ada:{PASSWORD}@127.0.0.1:{port}", connect_timeout_s=0.5)

    with pytest.raises(StorageError) as caught:
        await store.get("key")

    message = str(caught.value)
    assert f"127.0.0.1:{port}" in message
    assert PASSWORD not in message
    assert PASSWORD not in repr(store)
    assert PASSWORD not in store.url
    await store.close()


async def test_the_store_works_again_after_the_server_restarts(
    own_nats_server: ServerProcess,
) -> None:
    store = NatsKVStateStore(own_nats_server.url, bucket="restart", timeout_s=1.0)
    await store.set("survives", {"n": 1})

    own_nats_server.kill()
    with pytest.raises(StorageError, match="restart"):
        await store.get("survives")
    own_nats_server.start_again()

    value = await retry_until_ok(lambda: store.get("survives"))
    assert value == {"n": 1}
    await store.set("after", 2)
    assert await store.keys() == ["after", "survives"]
    await store.close()


async def retry_until_ok(call: Any, deadline_s: float = 15.0) -> Any:
    """``await call()`` until it stops raising StorageError (the client reconnects meanwhile)."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            return await call()
        except StorageError:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def test_a_bus_or_client_given_is_used_and_left_open(nats_server: str) -> None:
    bucket = new_bucket()
    bus = NatsBus(nats_server)
    client = await nats.connect(nats_server)
    try:
        for target in (bus, client):
            store = NatsKVStateStore(target, bucket=bucket)
            await store.set("k", "v")
            assert await store.get("k") == "v"
            assert store.url == nats_server
            await store.close()
        assert bus.is_connected
        assert client.is_connected
    finally:
        await bus.close()
        await client.close()
        await delete_bucket(nats_server, bucket)


async def test_a_closed_store_refuses_calls(store: NatsKVStateStore) -> None:
    async with store:
        await store.set("k", 1)

    with pytest.raises(StorageError, match="closed"):
        await store.get("k")


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="bucket"):
        NatsKVStateStore(bucket="a.b")
    with pytest.raises(ValueError, match="replicas"):
        NatsKVStateStore(replicas=0)


async def test_set_refuses_a_non_positive_ttl(store: NatsKVStateStore) -> None:
    with pytest.raises(ValueError, match="ttl_s"):
        await store.set("k", 1, ttl_s=0)


# --- the stored bytes ----------------------------------------------------------------------------


async def test_values_keep_their_framing_on_the_wire(
    store: NatsKVStateStore, raw_client: NatsClient
) -> None:
    js = raw_client.jetstream()
    await store.set("small", {"b": 2})
    await store.set("large", "x" * 1_500_000)
    await js.publish(f"$KV.{store.bucket}.written-before", b'\x00J{"a": [1, 2]}')

    small = await js.get_last_msg(f"KV_{store.bucket}", f"$KV.{store.bucket}.small")
    large = await js.get_last_msg(f"KV_{store.bucket}", f"$KV.{store.bucket}.large")

    assert await store.get("written-before") == {"a": [1, 2]}  # stored by an earlier release
    assert (small.data or b"")[:2] == b"\x00J"
    assert json.loads((small.data or b"")[2:]) == {"b": 2}
    assert (large.data or b"").startswith(b'\x00P{"v":1,"id":')  # a manifest of parts


# --- values that are not ours --------------------------------------------------------------------


@pytest.mark.parametrize(
    "data", [b"plain text", b"\x00Jnot json {", b"\x00P{not a manifest"], ids=str
)
async def test_a_foreign_value_raises_storage_error_naming_the_key(
    store: NatsKVStateStore, raw_client: NatsClient, data: bytes
) -> None:
    await store.set("theirs/1", "ours first")
    await raw_client.jetstream().publish(f"$KV.{store.bucket}.theirs/1", data)

    with pytest.raises(StorageError, match=re.escape("'theirs/1'")):
        await store.get("theirs/1")

    assert await store.exists("theirs/1") is True
    assert await store.delete("theirs/1") is True


async def test_a_foreign_key_name_raises_storage_error_in_keys(
    store: NatsKVStateStore, raw_client: NatsClient
) -> None:
    await store.set("ours", 1)
    await raw_client.jetstream().publish(f"$KV.{store.bucket}.bad=zz", b"\x00J1")

    with pytest.raises(StorageError, match=re.escape("bad=zz")):
        await store.keys()


# --- core's StateStore-backed classes on NATS KV -------------------------------------------------


class TestStateStoreCheckpointStoreOnNats(CheckpointStoreConformance):
    """Core's generic checkpoint store works on the NATS KV state store too."""

    @pytest_asyncio.fixture
    async def checkpoint_store(self, store: NatsKVStateStore) -> AsyncIterator[CheckpointStore]:
        yield StateStoreCheckpointStore(store)


async def test_memories_in_nats_kv_are_shared_by_every_process(nats_server: str) -> None:
    bucket = new_bucket()
    writer_store = NatsKVStateStore(nats_server, bucket=bucket)  # one machine
    reader_store = NatsKVStateStore(nats_server, bucket=bucket)  # another, its own connection
    try:
        writer = StateStoreMemoryProvider(writer_store)
        reader = StateStoreMemoryProvider(reader_store)
        await writer.store_memory("agent.1", "ada", Memory(content="likes tea", importance=0.9))
        await writer.store_memory("agent.1", "bob", Memory(content="likes coffee"))
        mine = await reader.get_memories("agent.1", "ada")
        assert [m.content for m in mine] == ["likes tea"]  # scoped to the user, not bob's
        assert await reader.get_memories("agent.2", "ada") == []
    finally:
        await writer_store.close()
        await reader_store.close()
        await delete_bucket(nats_server, bucket)
