"""The Redis stores pass core's conformance suites unchanged, against a real ``redis-server``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest_asyncio

from agentic_core import StateStoreCheckpointStore
from agentic_core.protocols import CheckpointStore, StateStore
from agentic_core.testing.conformance import CheckpointStoreConformance, StateStoreConformance
from agentic_storage import RedisCheckpointStore, RedisStateStore


def _prefix() -> str:
    """A fresh namespace per test: the session's one server then holds many empty stores."""
    return f"test-{uuid.uuid4().hex}"


class TestRedisStateStore(StateStoreConformance):
    concurrent_sets = 100

    @pytest_asyncio.fixture
    async def state_store(self, redis_server: str) -> AsyncIterator[StateStore]:
        store = RedisStateStore(redis_server, prefix=_prefix())
        yield store
        await store.close()


class TestRedisStateStoreWithoutPrefix(StateStoreConformance):
    """An empty prefix uses the keys as they are: a dedicated database per test keeps it empty."""

    @pytest_asyncio.fixture
    async def state_store(self, redis_server: str) -> AsyncIterator[StateStore]:
        store = RedisStateStore(redis_server.rsplit("/", 1)[0] + "/3", prefix="")
        client = await store._connection.client()  # pyright: ignore[reportPrivateUsage]
        await client.flushdb()  # pyright: ignore[reportUnknownMemberType]
        yield store
        await store.close()


class TestRedisCheckpointStore(CheckpointStoreConformance):
    concurrent_saves = 100

    @pytest_asyncio.fixture
    async def checkpoint_store(self, redis_server: str) -> AsyncIterator[CheckpointStore]:
        store = RedisCheckpointStore(redis_server, prefix=_prefix())
        yield store
        await store.close()


class TestRedisCheckpointStoreCompressedWithTtl(CheckpointStoreConformance):
    """Every checkpoint compressed (threshold 0) and a TTL refreshed on each save."""

    @pytest_asyncio.fixture
    async def checkpoint_store(self, redis_server: str) -> AsyncIterator[CheckpointStore]:
        store = RedisCheckpointStore(
            redis_server, prefix=_prefix(), ttl_days=1, compress_above_bytes=0
        )
        yield store
        await store.close()


class TestStateStoreCheckpointStoreOnRedis(CheckpointStoreConformance):
    """Core's generic checkpoint store works on the Redis state store too."""

    @pytest_asyncio.fixture
    async def checkpoint_store(self, redis_server: str) -> AsyncIterator[CheckpointStore]:
        state = RedisStateStore(redis_server, prefix=_prefix())
        yield StateStoreCheckpointStore(state)
        await state.close()
