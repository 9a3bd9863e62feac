"""``QdrantVectorStore`` passes core's vector store conformance suite in Qdrant's local mode (in
memory and on disk), maps ids, filters and errors onto Qdrant, and fails clearly on a server it
cannot reach or that refuses it."""

from __future__ import annotations

import asyncio
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import pytest_asyncio
from qdrant_client import AsyncQdrantClient
from qdrant_client.http.exceptions import UnexpectedResponse

from agentic_core import (
    SerializationError,
    StorageError,
    VectorPoint,
    VectorStore,
    VectorStoreError,
)
from agentic_core.testing.conformance import VectorStoreConformance
from agentic_storage import QdrantVectorStore
from agentic_storage._qdrant import ID_PAYLOAD_KEY, point_uuid
from agentic_storage._qdrant_errors import public_location, translate_error
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


# --- ids and payloads ---------------------------------------------------------------------------


async def test_ids_are_stored_as_stable_uuids_and_read_back_as_given() -> None:
    client = AsyncQdrantClient(location=":memory:")
    store = QdrantVectorStore(client=client)
    ids = ["doc/1", "42", str(uuid.UUID(int=7))]
    await store.create_collection("docs", 2)
    await store.upsert("docs", [VectorPoint(id=i, vector=[1, 0], payload={"k": i}) for i in ids])

    hits = await store.search("docs", [1.0, 0.0])
    raw, _ = await client.scroll("docs", limit=10, with_payload=True)

    assert sorted(h.id for h in hits) == sorted(ids)
    assert all(h.payload == {"k": h.id} for h in hits)  # the reserved key is stripped
    assert {str(r.id): (r.payload or {})[ID_PAYLOAD_KEY] for r in raw} == {
        point_uuid(i): i for i in ids
    }
    # Stable across processes and releases: a changed mapping would orphan every stored point.
    assert point_uuid("doc/1") == "839f6785-45ad-5c63-8982-cfcd16b4fc8c"
    await store.close()
    assert await client.collection_exists("docs")  # a client passed in stays open
    await client.close()


async def test_the_reserved_id_key_is_refused_before_any_batch_is_sent() -> None:
    async with QdrantVectorStore(batch_size=1) as store:
        await store.create_collection("docs", 2)
        good = [VectorPoint(id=f"p{i}", vector=[1, i]) for i in range(3)]
        bad = VectorPoint(id="bad", vector=[1, 0], payload={ID_PAYLOAD_KEY: "b"})

        with pytest.raises(VectorStoreError, match=rf"'bad'.*'docs'.*{ID_PAYLOAD_KEY}"):
            await store.upsert("docs", [*good, bad])

        assert await store.search("docs", [1.0, 0.0]) == []


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        (VectorPoint(id="bad", vector=[1, 0, 0]), VectorStoreError),
        (VectorPoint(id="bad", vector=[1, float("nan")]), VectorStoreError),
        (VectorPoint(id="bad", vector=[1, 0], payload={"x": object()}), SerializationError),
    ],
    ids=["dimension", "nan", "payload"],
)
async def test_a_bad_point_last_in_a_batched_upsert_writes_nothing(
    bad: VectorPoint, error: type[Exception]
) -> None:
    async with QdrantVectorStore(batch_size=2) as store:
        await store.create_collection("docs", 2)
        good = [VectorPoint(id=f"p{i}", vector=[1, i]) for i in range(5)]

        with pytest.raises(error, match="'bad'"):
            await store.upsert("docs", [*good, bad])

        assert await store.search("docs", [1.0, 0.0]) == []


async def test_upsert_sends_batches_of_batch_size(monkeypatch: pytest.MonkeyPatch) -> None:
    client = AsyncQdrantClient(location=":memory:")
    sent: list[int] = []
    upsert = client.upsert

    async def counting_upsert(collection_name: str, points: Sequence[Any], **kwargs: Any) -> Any:
        sent.append(len(points))
        return await upsert(collection_name, points=points, **kwargs)

    monkeypatch.setattr(client, "upsert", counting_upsert)
    store = QdrantVectorStore(client=client, batch_size=4)
    await store.create_collection("docs", 2)

    await store.upsert("docs", [VectorPoint(id=f"p{i}", vector=[1, i]) for i in range(10)])

    assert sent == [4, 4, 2]
    assert len(await store.search("docs", [1.0, 0.0], limit=20)) == 10
    await client.close()


# --- search and filters -------------------------------------------------------------------------


async def test_numbers_filter_by_value_whether_int_or_float() -> None:
    async with QdrantVectorStore() as store:
        await store.create_collection("docs", 2)
        await store.upsert(
            "docs",
            [
                VectorPoint(id="int", vector=[1, 0], payload={"n": 3, "flag": True}),
                VectorPoint(id="float", vector=[1, 0], payload={"n": 3.0, "flag": 1}),
                VectorPoint(id="other", vector=[1, 0], payload={"n": 3.5, "flag": False}),
                VectorPoint(id="big", vector=[1, 0], payload={"n": 2**60 + 1}),
            ],
        )

        async def ids(condition: object) -> list[str]:
            hits = await store.search("docs", [1.0, 0.0], filter={"n": condition})
            return sorted(h.id for h in hits)

        assert await ids(3) == ["float", "int"]
        assert await ids(3.0) == ["float", "int"]
        assert await ids([3.5, 7]) == ["other"]
        assert await ids(2**60 + 1) == ["big"]
        assert await ids(2**60) == []
        assert await ids({"gt": 3, "lte": 3.5}) == ["other"]
        flagged = await store.search("docs", [1.0, 0.0], filter={"flag": True})
        assert [h.id for h in flagged] == ["int"]  # true is not the number 1


async def test_a_filter_typo_raises_but_a_null_value_counts_as_carried() -> None:
    async with QdrantVectorStore() as store:
        await store.create_collection("notes", 2)
        await store.upsert(
            "notes", [VectorPoint(id="a", vector=[1, 0], payload={"topic": "x", "owner": None})]
        )

        with pytest.raises(VectorStoreError, match=r"'topc'.*'notes'"):
            await store.search("notes", [1.0, 0.0], filter={"topc": "x"})
        assert await store.search("notes", [1.0, 0.0], filter={"owner": "ada"}) == []
        assert await store.search("notes", [1.0, 0.0], filter={"topic": "y"}) == []


# --- collections --------------------------------------------------------------------------------


async def test_another_dimension_or_distance_for_an_existing_collection_names_both() -> None:
    async with QdrantVectorStore() as store:
        await store.create_collection("docs", 4, distance="dot")

        with pytest.raises(VectorStoreError, match=r"'docs'.*dimension 4.*dimension 8"):
            await store.create_collection("docs", 8, distance="dot")
        with pytest.raises(VectorStoreError, match=r"'docs'.*'dot'.*'euclid'"):
            await store.create_collection("docs", 4, distance="euclid")


async def test_a_collection_deleted_behind_the_stores_back_is_reported_missing() -> None:
    client = AsyncQdrantClient(location=":memory:")
    store = QdrantVectorStore(client=client)
    await store.create_collection("docs", 2)
    await store.search("docs", [1.0, 0.0])  # the settings are cached now
    await client.delete_collection("docs")

    with pytest.raises(VectorStoreError, match="collection 'docs' does not exist"):
        await store.search("docs", [1.0, 0.0])
    with pytest.raises(VectorStoreError, match="collection 'docs' does not exist"):
        await store.upsert("docs", [VectorPoint(id="a", vector=[1.0, 0.0])])
    await store.create_collection("docs", 3)  # and it may be made again, differently
    await client.close()


async def test_a_name_qdrant_refuses_raises_vector_store_error_naming_it() -> None:
    async with QdrantVectorStore() as store:
        with pytest.raises(VectorStoreError, match="'a/b'"):
            await store.create_collection("a/b", 2)


async def test_a_closed_store_refuses_every_call() -> None:
    store = QdrantVectorStore()
    await store.create_collection("docs", 2)
    await store.close()
    await store.close()  # idempotent

    with pytest.raises(StorageError, match="closed"):
        await store.search("docs", [1.0, 0.0])
    with pytest.raises(StorageError, match="closed"):
        await store.create_collection("other", 2)


@pytest.mark.parametrize(
    "kwargs",
    [{"location": ""}, {"batch_size": 0}, {"timeout_s": 0}],
    ids=["no-location", "batch-size", "timeout"],
)
def test_bad_settings_raise_value_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        QdrantVectorStore(**kwargs)


# --- servers ------------------------------------------------------------------------------------


class _RefusingServer:
    """An HTTP server on a free loopback port that answers every request with one status."""

    def __init__(self, status: int, reason: str, error: str) -> None:
        body = b'{"status": {"error": "%s"}, "time": 0.0}' % error.encode()
        self._reply = (
            f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode() + body
        self.requests: list[bytes] = []
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._answer, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    async def _answer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.requests.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(self._reply)
        await writer.drain()
        writer.close()
        await writer.wait_closed()


async def test_a_server_refusing_the_api_key_raises_storage_error_without_the_key() -> None:
    server = _RefusingServer(403, "Forbidden", "Invalid api-key")
    async with server as url:
        with pytest.warns(UserWarning, match="insecure connection"):  # qdrant-client's own
            store = QdrantVectorStore(url, api_key="secret-key-123")
        with pytest.raises(StorageError) as info:
            await store.search("docs", [1.0, 0.0])
        await store.close()

    message = str(info.value)
    assert f"Qdrant at {url}" in message
    assert "HTTP 403 Forbidden: Invalid api-key; check the API key" in message
    assert "'docs'" in message
    assert "secret-key-123" not in message
    assert b"secret-key-123" in server.requests[0]  # the key was sent, just never shown


async def test_a_url_that_is_not_qdrant_is_a_storage_error_not_a_missing_collection() -> None:
    async with _RefusingServer(404, "Not Found", "no such page") as url:
        store = QdrantVectorStore(url)
        with pytest.raises(StorageError, match="HTTP 404 Not Found"):
            await store.search("docs", [1.0, 0.0])
        await store.close()


def test_a_servers_404_on_a_collection_is_a_missing_collection() -> None:
    refused = UnexpectedResponse(
        404, "Not Found", b'{"status": {"error": "Collection `docs` not found"}}', httpx.Headers()
    )
    bad_request = UnexpectedResponse(
        400, "Bad Request", b'{"status": {"error": "Wrong input: bad vector"}}', httpx.Headers()
    )

    missing = translate_error(refused, location="http://q:6333", collection="docs")
    lookup = translate_error(refused, location="http://q:6333", collection="docs", lookup=True)
    wrong = translate_error(bad_request, location="http://q:6333", collection="docs")

    assert isinstance(missing, VectorStoreError)
    assert "collection 'docs' does not exist" in str(missing)
    assert isinstance(lookup, StorageError)
    assert not isinstance(lookup, VectorStoreError)
    assert isinstance(wrong, VectorStoreError)
    assert "'docs'" in str(wrong)
    assert "Wrong input: bad vector" in str(wrong)
    assert translate_error(RuntimeError("other"), location="x", collection="docs") is None


async def test_a_password_in_the_url_is_never_shown() -> None:
    url = "https://ada:hunter2@qdrant.example:6333/prefix?api_key=k3y"

    store = QdrantVectorStore(url)
    await store.close()

    assert public_location(url) == "https://ada:***@qdrant.example:6333/prefix"
    assert repr(store) == "QdrantVectorStore('https://ada:***@qdrant.example:6333/prefix')"
