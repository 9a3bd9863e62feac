"""``QdrantVectorStore``: core's ``VectorStore`` on Qdrant (local mode or a server)."""

from __future__ import annotations

import builtins
import contextlib
import json
import uuid
from collections.abc import Generator, Mapping, Sequence
from typing import Any, Self, cast

import httpx
from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from agentic_core import StorageError, VectorPoint, VectorSearchResult, VectorStoreError
from agentic_core.stores import (
    VectorCondition,
    check_distance,
    check_vector,
    check_vector_points,
    parse_vector_filter,
)

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
    ``StorageError`` naming the URL (never the API key).

    Args:
        location: ``":memory:"``, a directory, or a server URL.
        api_key: the server's API key (URL mode).
        batch_size: points per upsert request.
        timeout_s: bound on each request to a server.
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
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        self._location = location
        self._batch_size = batch_size
        self._owns_client = client is None
        if client is not None:
            self._client = client
        elif location == ":memory:":
            self._client = AsyncQdrantClient(location=":memory:")
        elif location.startswith(("http://", "https://")):
            # No version probe at construction: qdrant-client runs it in a thread that prints a
            # traceback when the server is down; the first request reports that clearly instead.
            self._client = AsyncQdrantClient(
                url=location, api_key=api_key, timeout=int(timeout_s), check_compatibility=False
            )
        else:
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
        """Close the client this store made (idempotent); a client passed in is left open."""
        if self._owns_client:
            with self._errors():
                await self._client.close()

    async def create_collection(
        self, name: str, dimension: int, *, distance: str = "cosine"
    ) -> None:
        """Create ``name``; nothing happens if it exists with the same settings.

        Raises:
            ValueError: ``dimension`` is below 1 or ``distance`` is unknown.
            VectorStoreError: ``name`` exists with another dimension or distance.
            StorageError: the server is unreachable.
        """
        checked = check_distance(distance, dimension)
        existing = await self._settings(name, must_exist=False)
        if existing is None:
            with self._errors():
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
            StorageError: the server is unreachable.
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
            StorageError: the server is unreachable.
        """
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit!r}")
        dimension, _ = await self._require(collection)
        query = check_vector(collection, dimension, vector)
        conditions = parse_vector_filter(collection, filter)
        query_filter = (
            models.Filter(must=[_condition(c) for c in conditions]) if conditions else None
        )
        with self._errors(collection):
            response = await self._client.query_points(
                collection,
                query=query,
                limit=limit,
                score_threshold=score_threshold,
                query_filter=query_filter,
                with_payload=True,
            )
        if not response.points and conditions:
            await self._check_fields_known(collection, conditions)
        return [_result(point) for point in response.points]

    async def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove the points with these ids; unknown ids are ignored.

        Raises:
            VectorStoreError: no such collection.
            StorageError: the server is unreachable.
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
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        with self._errors(name):
            exists = await self._client.collection_exists(name)
            info = await self._client.get_collection(name) if exists else None
        if info is None:
            if must_exist:
                raise VectorStoreError(
                    f"collection {name!r} does not exist; create it with create_collection first"
                )
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
        with self._errors(collection):
            if (await self._client.count(collection, exact=False)).count == 0:
                return
            for condition in conditions:
                carried = models.Filter(
                    must_not=[
                        models.IsEmptyCondition(is_empty=models.PayloadField(key=condition.field))
                    ]
                )
                found = await self._client.count(collection, count_filter=carried, exact=False)
                if found.count == 0:
                    raise VectorStoreError(
                        f"filter field {condition.field!r}: no point of collection "
                        f"{collection!r} has it in its payload (a typo?)"
                    )

    @contextlib.contextmanager
    def _errors(self, collection: str | None = None) -> Generator[None]:
        """Qdrant's transport errors as ``StorageError`` naming the location (not the key)."""
        try:
            yield
        except (ResponseHandlingException, httpx.HTTPError) as exc:
            about = "" if collection is None else f" (collection {collection!r})"
            raise StorageError(
                f"cannot reach Qdrant at {self._location}{about}: {type(exc).__name__}: {exc}; "
                "is the server running and the URL right?"
            ) from None
        except UnexpectedResponse as exc:
            about = "" if collection is None else f" (collection {collection!r})"
            raise StorageError(
                f"Qdrant at {self._location} refused a request{about}: HTTP "
                f"{exc.status_code} {exc.reason_phrase}"
            ) from None


def _condition(condition: VectorCondition) -> models.Condition:
    if condition.is_range:
        return models.FieldCondition(
            key=condition.field,
            range=models.Range(
                gt=condition.gt, gte=condition.gte, lt=condition.lt, lte=condition.lte
            ),
        )
    matches = [_equals(condition.field, value) for value in condition.values]
    return matches[0] if len(matches) == 1 else models.Filter(should=matches)


def _equals(field: str, value: str | int | float | bool) -> models.Condition:
    if isinstance(value, float):
        return models.FieldCondition(key=field, range=models.Range(gte=value, lte=value))
    return models.FieldCondition(key=field, match=models.MatchValue(value=value))


def _result(point: models.ScoredPoint) -> VectorSearchResult:
    payload = dict(point.payload or {})
    point_id = payload.pop(ID_PAYLOAD_KEY, None)
    return VectorSearchResult(
        id=point_id if isinstance(point_id, str) else str(point.id),
        score=point.score,
        payload=payload,
    )
