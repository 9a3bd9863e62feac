"""``QdrantVectorStore`` passes core's vector store conformance suite in Qdrant's local mode (in
memory and on disk), and fails clearly on a server it cannot reach."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import numpy as np
import pytest
import pytest_asyncio

from agentic_core import StorageError, VectorPoint, VectorStore, VectorStoreError
from agentic_core.testing.conformance import VectorStoreConformance
from agentic_storage import QdrantVectorStore
from tests.fixtures.servers import free_port


@pytest.fixture
def fast_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on tmpfs when there is one (Qdrant's on-disk local mode is slow on disk)."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(dir=shm, prefix="agentic-qdrant-") as path:
            yield Path(path)
    else:
        yield tmp_path


class TestQdrantInMemory(VectorStoreConformance):
    @pytest_asyncio.fixture
    async def vector_store(self) -> AsyncIterator[VectorStore]:
        store = QdrantVectorStore(":memory:")
        yield store
        await store.close()


class TestQdrantOnDisk(VectorStoreConformance):
    large_collection_size = 500

    @pytest_asyncio.fixture
    async def vector_store(self, fast_dir: Path) -> AsyncIterator[VectorStore]:
        store = QdrantVectorStore(str(fast_dir / "qdrant"))
        yield store
        await store.close()


async def test_ten_thousand_points_search_like_brute_force() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(10_000, 64))
    async with QdrantVectorStore(":memory:", batch_size=1000) as store:
        await store.create_collection("big", 64)
        await store.upsert(
            "big",
            [
                VectorPoint(id=f"doc-{i}", vector=v.tolist(), payload={"n": i, "even": i % 2 == 0})
                for i, v in enumerate(vectors)
            ],
        )
        query = rng.normal(size=64)

        hits = await store.search("big", query.tolist(), limit=10)
        ranged = await store.search(
            "big", query.tolist(), limit=10, filter={"n": {"gte": 5000}, "even": True}
        )

    normed = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = normed @ (query / np.linalg.norm(query))
    order = np.argsort(-scores)
    assert [h.id for h in hits] == [f"doc-{i}" for i in order[:10]]
    allowed = [i for i in order if i >= 5000 and i % 2 == 0]
    assert [h.id for h in ranged] == [f"doc-{i}" for i in allowed[:10]]
    assert all(h.payload["n"] >= 5000 and h.payload["even"] for h in ranged)


async def test_the_reserved_id_key_is_refused_in_a_payload() -> None:
    async with QdrantVectorStore() as store:
        await store.create_collection("docs", 2)

        with pytest.raises(VectorStoreError, match="_agentic_id"):
            await store.upsert(
                "docs", [VectorPoint(id="a", vector=[1, 0], payload={"_agentic_id": "b"})]
            )


async def test_points_persist_on_disk_across_store_objects(fast_dir: Path) -> None:
    path = str(fast_dir / "persist")
    async with QdrantVectorStore(path) as first:
        await first.create_collection("docs", 2, distance="dot")
        await first.upsert("docs", [VectorPoint(id="kept", vector=[1, 2], payload={"x": 1})])

    async with QdrantVectorStore(path) as second:
        await second.create_collection("docs", 2, distance="dot")  # same settings: a no-op
        [hit] = await second.search("docs", [1.0, 0.0])
        with pytest.raises(VectorStoreError, match=r"'docs'.*dimension 2"):
            await second.create_collection("docs", 3)

    assert hit.id == "kept"
    assert hit.payload == {"x": 1}


async def test_an_unreachable_server_raises_storage_error_without_the_key() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.warns(UserWarning, match="insecure connection"):  # qdrant-client's own warning
        store = QdrantVectorStore(url, api_key="secret-key-123", timeout_s=2)

    with pytest.raises(StorageError, match=f"cannot reach Qdrant at {url}") as info:
        await store.create_collection("docs", 2)

    assert "secret-key-123" not in str(info.value)
    assert "secret-key-123" not in repr(store)
    await store.close()
