"""agentic-storage's stores are found by name through core's registry (the dependency rule:
agentic-orchestrator and other siblings reach them only this way)."""

from __future__ import annotations

import pytest

from agentic_core import registry
from agentic_storage import QdrantVectorStore, RedisCheckpointStore, RedisStateStore


@pytest.mark.parametrize(
    ("group", "name", "expected"),
    [
        ("agentic.checkpoint_stores", "redis", RedisCheckpointStore),
        ("agentic.state_stores", "redis", RedisStateStore),
        ("agentic.vector_stores", "qdrant", QdrantVectorStore),
    ],
)
def test_each_store_is_registered_under_its_group(group: str, name: str, expected: type) -> None:
    assert name in registry.available(group)
    assert registry.load(group, name) is expected
