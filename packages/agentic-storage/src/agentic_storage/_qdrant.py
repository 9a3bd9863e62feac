"""``QdrantVectorStore``: core's ``VectorStore`` on Qdrant (local mode or a server)."""

from __future__ import annotations

import builtins
import contextlib
import json
import math
import uuid
from collections.abc import Generator, Mapping, Sequence
from typing import Any, Self, cast

from qdrant_client import AsyncQdrantClient, models

from agentic_core import StorageError, VectorPoint, VectorSearchResult, VectorStoreError
from agentic_core.stores import (
    VectorCondition,
    check_distance,
    check_vector,
    check_vector_points,
    parse_vector_filter,
)
from agentic_storage._qdrant_errors import missing_collection, public_location, translate_error
from agentic_storage._qdrant_filter import carried_filter, qdrant_filter
from agentic_storage._qdrant_local import answer_threadsafety_probe

__all__ = ["ID_PAYLOAD_KEY", "QdrantVectorStore"]

ID_PAYLOAD_KEY = "_agentic_id"
"""Where a point's own id is kept in its Qdrant payload (Qdrant ids are UUIDs or integers)."""

_ID_NAMESPACE = uuid.UUID("6f1d8a52-5b0e-4f7e-9a4e-2c1b7d9e0a11")
_DISTANCES = {
    "cosine": models.Distance.COSINE,
    "dot": models.Distance.DOT,
    "euclid": models.Distance.EUCLID,
}
_NAMES = {value: key for key, value in _DISTANCES.items()}


def point_uuid(point_id: str) -> str:
    """The stable Qdrant id of a point id: a UUID5 of it, the same in every process."""
    return str(uuid.uuid5(_ID_NAMESPACE, point_id))


class QdrantVectorStore:
    """A ``VectorStore`` on Qdrant through ``AsyncQdrantClient``.

    ``location`` is ``":memory:"`` (Qdrant's local mode, in this process), a directory path
    (local mode persisted there; one process at a time), or an ``http(s)://`` URL of a Qdrant
    server. It follows every rule of core's ``VectorStore`` protocol: ids are any strings (each
    stored under a stable UUID5, the original kept in the payload under ``_agentic_id``, which
    a user payload may not use), upserts are checked whole before anything is written and sent
    in batches of ``batch_size``, filters become Qdrant ``FieldCondition``s, and a filter on a
    field no point carries raises ``VectorStoreError`` (checked only when a filtered search finds
    nothing, so a normal search pays nothing for it). An unreachable server raises
    ``StorageError`` naming the URL (never the API key, nor a password in the URL).

    Each collection's dimension and distance are read once and cached. Local mode is Qdrant's
    pure-Python engine: fine for tests and tens of thousands of points (a search of 10,000
    points takes milliseconds, a filtered one about 150 ms, as it checks the filter point by
    point); use a server beyond that.

    Args:
        location: ``":memory:"``, a directory, or a server URL.
        api_key: the server's API key (URL mode).
        batch_size: points per upsert request.
        timeout_s: bound on each request to a server, in seconds (rounded up to whole ones).
        client: an ``AsyncQdrantClient`` to use instead (never closed by the store).

    Example:
        ```python
        store = QdrantVectorStore(":memory:")
        await store.create_collection("docs", dimension=3)
        await store.upsert("docs", [VectorPoint(id="a", vector=[1, 0, 0], payload={"n": 1})])
        hits = await store.search("docs", [1, 0.1, 0], filter={"n": {"gte": 1}})
        await store.close()
        ```
    """

    def __init__(
        self,
        location: str = ":memory:",
        *,
        api_key: str | None = None,
        batch_size: int = 256,
        timeout_s: float = 30.0,
        client: AsyncQdrantClient | None = None,
    ) -> None:
        if not location:
            raise ValueError("location must be ':memory:', a directory or an http(s):// URL")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        if not timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
        self._location = public_location(location)
        self._batch_size = batch_size
        self._owns_client = client is None
        self._closed = False
        if client is not None:
            self._client = client
        elif location == ":memory:":
            self._client = AsyncQdrantClient(location=":memory:")
        elif location.startswith(("http://", "https://")):
            # No version probe at construction: qdrant-client runs it in a thread that prints a
            # traceback when the server is down; the first request reports that clearly instead.
            self._client = AsyncQdrantClient(
                url=location,
                api_key=api_key,
                timeout=math.ceil(timeout_s),  # the client takes whole seconds
                check_compatibility=False,
            )
        else:
            answer_threadsafety_probe()  # before qdrant-client asks on a connection it leaks
            self._client = AsyncQdrantClient(path=location)
        self._collections: dict[str, tuple[int, str]] = {}

    @property
    def location(self) -> str:
        """Where the vectors live: ``":memory:"``, a directory or a server URL."""
        return self._location

    def __repr__(self) -> str:
        return f"QdrantVectorStore({self._location!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the client this store made (idempotent); a client passed in is left open.

        The store cannot be used afterwards (``StorageError``).
        """
        if self._closed:
            return
        self._closed = True
        if self._owns_client:
            with self._errors():
                await self._client.close()

    async def create_collection(
        self, name: str, dimension: int, *, distance: str = "cosine"
    ) -> None:
        """Create ``name``; nothing happens if it exists with the same settings.

        Raises:
            ValueError: ``dimension`` is below 1 or ``distance`` is unknown.
            VectorStoreError: ``name`` exists with another dimension or distance, or Qdrant
                refuses the name.
            StorageError: the server is unreachable, or the store is closed.
        """
        checked = check_distance(distance, dimension)
        existing = await self._settings(name, must_exist=False)
        if existing is None:
            with self._errors(name):
                await self._client.create_collection(
                    name,
                    vectors_config=models.VectorParams(
                        size=dimension, distance=_DISTANCES[checked]
                    ),
                )
            self._collections[name] = (dimension, checked)
        elif existing != (dimension, checked):
            raise VectorStoreError(
                f"collection {name!r} exists with dimension {existing[0]} and distance "
                f"{existing[1]!r}; cannot create it with dimension {dimension} and distance "
                f"{checked!r}"
            )

    async def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or replace ``points``: all are checked before the first batch is sent.

        Raises:
            VectorStoreError: no such collection, a vector of the wrong dimension, or a payload
                using the reserved ``_agentic_id`` key.
            SerializationError: a payload is not JSON-able.
            StorageError: the server is unreachable, or the store is closed.
        """
        dimension, _ = await self._require(collection)
        structs: list[models.PointStruct] = []
        for point, vector, payload_json in check_vector_points(collection, dimension, points):
            if ID_PAYLOAD_KEY in point.payload:
                raise VectorStoreError(
                    f"point {point.id!r} of collection {collection!r}: the payload key "
                    f"{ID_PAYLOAD_KEY!r} is reserved for the point's id; nothing was written"
                )
            payload = cast("dict[str, Any]", json.loads(payload_json))
            payload[ID_PAYLOAD_KEY] = point.id
            structs.append(
                models.PointStruct(id=point_uuid(point.id), vector=vector, payload=payload)
            )
        for start in range(0, len(structs), self._batch_size):
            with self._errors(collection):
                await self._client.upsert(
                    collection, points=structs[start : start + self._batch_size], wait=True
                )

    async def search(
        self,
        collection: str,
        vector: Sequence[float],
        *,
        limit: int = 10,
        score_threshold: float | None = None,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the protocol's public name
    ) -> builtins.list[VectorSearchResult]:
        """The ``limit`` closest points matching ``filter``, best first (see core's protocol).

        Raises:
            ValueError: ``limit`` is below 1.
            VectorStoreError: no such collection, a query of the wrong dimension, a malformed
                filter, or a filter on a field no point carries.
            StorageError: the server is unreachable, or the store is closed.
        """
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit!r}")
        dimension, _ = await self._require(collection)
        query = check_vector(collection, dimension, vector)
        conditions = parse_vector_filter(collection, filter)
        with self._errors(collection):
            response = await self._client.query_points(
                collection,
                query=query,
                limit=limit,
                score_threshold=score_threshold,
                query_filter=qdrant_filter(conditions),
                with_payload=True,
            )
        if not response.points and conditions:
            await self._check_fields_known(collection, conditions)
        return [_result(point) for point in response.points]

    async def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove the points with these ids; unknown ids are ignored.

        Raises:
            VectorStoreError: no such collection.
            StorageError: the server is unreachable, or the store is closed.
        """
        await self._require(collection)
        if not ids:
            return
        selector = models.PointIdsList(points=[point_uuid(point_id) for point_id in ids])
        with self._errors(collection):
            await self._client.delete(collection, points_selector=selector, wait=True)

    async def _require(self, name: str) -> tuple[int, str]:
        found = await self._settings(name, must_exist=True)
        assert found is not None  # must_exist raised otherwise  # noqa: S101
        return found

    async def _settings(self, name: str, *, must_exist: bool) -> tuple[int, str] | None:
        """``(dimension, distance)`` of a collection (cached), or None / an error if missing."""
        if self._closed:
            raise StorageError(f"{self!r} is closed; make a new store")
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        with self._errors(name, lookup=True):
            exists = await self._client.collection_exists(name)
            info = await self._client.get_collection(name) if exists else None
        if info is None:
            if must_exist:
                raise missing_collection(name)
            return None
        params = info.config.params.vectors
        if not isinstance(params, models.VectorParams):
            raise VectorStoreError(
                f"collection {name!r} uses named vectors, which this store does not read; "
                "use a collection made by create_collection"
            )
        settings = (params.size, _NAMES[params.distance])
        self._collections[name] = settings
        return settings

    async def _check_fields_known(
        self, collection: str, conditions: Sequence[VectorCondition]
    ) -> None:
        """Raise for a filtered field that no point carries (asked only when nothing matched)."""
        # Exact counts: a server's estimate of a filter on an unindexed field may be 0 wrongly.
        with self._errors(collection):
            total = await self._client.count(collection, exact=True)
        if total.count == 0:
            return
        for condition in conditions:
            carried = carried_filter(condition.field)
            with self._errors(collection):
                found = await self._client.count(collection, count_filter=carried, exact=True)
            if found.count == 0:
                raise VectorStoreError(
                    f"filter field {condition.field!r}: no point of collection "
                    f"{collection!r} has it in its payload (a typo?)"
                )

    @contextlib.contextmanager
    def _errors(self, collection: str | None = None, *, lookup: bool = False) -> Generator[None]:
        """Qdrant's errors as ours, naming the location (never the key) and the collection."""
        try:
            yield
        except Exception as exc:
            translated = translate_error(
                exc, location=self._location, collection=collection, lookup=lookup
            )
            if translated is None:
                raise
            if collection is not None and isinstance(translated, VectorStoreError):
                # Deleted behind our back, perhaps: look the settings up again next time.
                self._collections.pop(collection, None)
            raise translated from None


def _result(point: models.ScoredPoint) -> VectorSearchResult:
    payload = dict(point.payload or {})
    point_id = payload.pop(ID_PAYLOAD_KEY, None)
    return VectorSearchResult(
        id=point_id if isinstance(point_id, str) else str(point.id),
        score=point.score,
        payload=payload,
    )
