# pyright: strict
"""Type-checked (pyright strict) uses of the agentic_storage API: fails CI if the types regress.

It also runs as a test module, without a server: the Redis stores are built (they connect on
first use) and pointed at a closed port to check their error, and Qdrant runs in local mode.
"""

from __future__ import annotations

from typing import assert_type

import pytest

from agentic_core import (
    AgenticError,
    ChatAgent,
    CheckpointStore,
    HashingEmbedder,
    Memory,
    MemoryProvider,
    StateStore,
    VectorPoint,
    VectorSearchResult,
    VectorStore,
)
from agentic_core.testing import ScriptedChatClient
from agentic_storage import (
    KeyPatterns,
    QdrantVectorStore,
    RedisCheckpointStore,
    RedisStateStore,
    StorageError,
    VectorMemoryProvider,
)

CLOSED_PORT = "redis://:secret@127.0.0.1:1/0"
"""Nothing listens on port 1: a command fails at once with a connection error."""


async def test_the_redis_stores_implement_core_protocols() -> None:
    async with RedisStateStore(CLOSED_PORT, prefix="typing", retries=0) as state:
        as_protocol: StateStore = state
        assert_type(state.url, str)
        assert_type(state.redis_key("a"), str)
        assert "secret" not in state.url
        with pytest.raises(StorageError):
            await as_protocol.get("a")
    checkpoints: CheckpointStore = RedisCheckpointStore(CLOSED_PORT, ttl_days=7, retries=0)
    assert isinstance(checkpoints, CheckpointStore)


async def test_qdrant_in_local_mode_is_a_vector_store() -> None:
    async with QdrantVectorStore(":memory:", batch_size=64) as store:
        as_protocol: VectorStore = store
        await as_protocol.create_collection("docs", 3)
        await as_protocol.upsert("docs", [VectorPoint(id="a", vector=[1, 0, 0], payload={"n": 1})])
        hits = await as_protocol.search("docs", [1, 0.1, 0], limit=1, filter={"n": {"gte": 1}})

    assert_type(hits, list[VectorSearchResult])
    assert [hit.id for hit in hits] == ["a"]


async def test_vector_memory_recalls_what_a_user_said() -> None:
    memory = VectorMemoryProvider(QdrantVectorStore(":memory:"), HashingEmbedder(), top_k=3)
    as_protocol: MemoryProvider = memory
    agent = ChatAgent(
        ScriptedChatClient(["Noted."]), "You are helpful.", id="helper", memory_provider=memory
    )

    await agent.run("I live in Paris.", thread=agent.get_new_thread(user_id="ada"))
    memories = await as_protocol.get_memories("helper", "ada")

    assert_type(memories, list[Memory])
    assert [m.content for m in memories] == ["I live in Paris."]


def test_key_patterns_escape_ids() -> None:
    assert_type(KeyPatterns.agent_state("a:b"), str)
    assert KeyPatterns.agent_state("a:b") == "agents:a%3Ab:state"


def test_storage_errors_are_core_errors() -> None:
    assert issubclass(StorageError, AgenticError)
