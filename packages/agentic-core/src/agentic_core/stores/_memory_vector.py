"""``InMemoryVectorStore``: the in-process ``VectorStore`` for tests, demos and small corpora."""

from __future__ import annotations

import builtins
import heapq
import json
import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentic_core._errors import VectorStoreError
from agentic_core.protocols._vector import Distance, VectorPoint, VectorSearchResult
from agentic_core.stores._vector_filter import VectorCondition, parse_vector_filter
from agentic_core.stores._vector_rules import check_distance, check_vector, check_vector_points

__all__ = ["InMemoryVectorStore"]


@dataclass(slots=True)
class _Point:
    vector: list[float]
    norm: float
    payload_json: str
    """What ``search`` returns a fresh copy of."""
    payload: dict[str, Any]
    """A private parsed copy, for filters."""


@dataclass(slots=True)
class _Collection:
    dimension: int
    distance: Distance
    points: dict[str, _Point] = field(default_factory=dict[str, _Point])


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return math.fsum(map(operator.mul, a, b))


class InMemoryVectorStore:
    """A ``VectorStore`` held in this process: exact (brute-force) search, nothing persisted.

    Follows every rule of the ``VectorStore`` protocol (``agentic_core.protocols._vector``):
    cosine, dot and Euclidean distances, payload filters, errors naming the collection. Search
    compares the query with every point of the collection in pure Python, so it suits tests,
    demos and collections of a few thousand points; use a real vector database (e.g.
    ``agentic_storage.QdrantVectorStore``) beyond that. Payloads are kept as JSON text, so stored
    and returned payloads are independent copies. Every method runs without awaiting, so
    concurrent tasks never see a half-done change.

    Example:
        ```python
        store = InMemoryVectorStore()
        await store.create_collection("docs", dimension=3)
        await store.upsert("docs", [VectorPoint(id="a", vector=[1, 0, 0], payload={"lang": "en"})])
        hits = await store.search("docs", [1, 0.1, 0], limit=1, filter={"lang": "en"})
        ```
    """

    def __init__(self) -> None:
        self._collections: dict[str, _Collection] = {}

    def __repr__(self) -> str:
        return f"InMemoryVectorStore(collections={sorted(self._collections)!r})"

    async def create_collection(
        self, name: str, dimension: int, *, distance: str = "cosine"
    ) -> None:
        """Create ``name``; nothing happens if it exists with the same settings.

        Raises:
            ValueError: ``dimension`` is below 1 or ``distance`` is unknown.
            VectorStoreError: ``name`` exists with another dimension or distance.
        """
        checked = check_distance(distance, dimension)
        existing = self._collections.get(name)
        if existing is None:
            self._collections[name] = _Collection(dimension, checked)
        elif (existing.dimension, existing.distance) != (dimension, checked):
            raise VectorStoreError(
                f"collection {name!r} exists with dimension {existing.dimension} and distance "
                f"{existing.distance!r}; cannot create it with dimension {dimension} and "
                f"distance {checked!r}"
            )

    async def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or replace ``points``; all are checked before any is written.

        Raises:
            VectorStoreError: no such collection, or a vector of the wrong dimension.
            SerializationError: a payload is not JSON-able.
        """
        target = self._collection(collection)
        for point, vector, payload_json in check_vector_points(
            collection, target.dimension, points
        ):
            norm = math.sqrt(_dot(vector, vector))
            target.points[point.id] = _Point(vector, norm, payload_json, json.loads(payload_json))

    async def search(
        self,
        collection: str,
        vector: Sequence[float],
        *,
        limit: int = 10,
        score_threshold: float | None = None,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the protocol's public name
    ) -> builtins.list[VectorSearchResult]:
        """The ``limit`` closest points matching ``filter``, best first (see the protocol).

        Raises:
            ValueError: ``limit`` is below 1.
            VectorStoreError: no such collection, a query of the wrong dimension, a malformed
                filter, or a filter on a field no point carries.
        """
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit!r}")
        target = self._collection(collection)
        query = check_vector(collection, target.dimension, vector)
        conditions = parse_vector_filter(collection, filter)
        query_norm = math.sqrt(_dot(query, query))
        higher_is_closer = target.distance != "euclid"
        scored: list[tuple[float, str, _Point]] = []
        for point_id, point in target.points.items():
            if conditions and not all(c.matches(point.payload) for c in conditions):
                continue
            score = _score(target.distance, query, query_norm, point)
            if score_threshold is not None and (
                score < score_threshold if higher_is_closer else score > score_threshold
            ):
                continue
            scored.append((score, point_id, point))
        if not scored and conditions:
            _check_fields_known(collection, target, conditions)
        best = (
            heapq.nsmallest(limit, scored, key=lambda s: (-s[0], s[1]))
            if higher_is_closer
            else heapq.nsmallest(limit, scored, key=lambda s: (s[0], s[1]))
        )
        return [
            VectorSearchResult(id=point_id, score=score, payload=json.loads(point.payload_json))
            for score, point_id, point in best
        ]

    async def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Remove the points with these ids; unknown ids are ignored.

        Raises:
            VectorStoreError: no such collection.
        """
        target = self._collection(collection)
        for point_id in ids:
            target.points.pop(point_id, None)

    def _collection(self, name: str) -> _Collection:
        found = self._collections.get(name)
        if found is None:
            raise VectorStoreError(
                f"collection {name!r} does not exist; create it with create_collection first"
            )
        return found


def _score(distance: Distance, query: list[float], query_norm: float, point: _Point) -> float:
    if distance == "dot":
        return _dot(query, point.vector)
    if distance == "euclid":
        return math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(query, point.vector, strict=True)))
    if query_norm == 0.0 or point.norm == 0.0:
        return 0.0
    return _dot(query, point.vector) / (query_norm * point.norm)


def _check_fields_known(
    collection: str, target: _Collection, conditions: Sequence[VectorCondition]
) -> None:
    """Raise for a filtered field that no point carries (only worth asking when nothing matched)."""
    if not target.points:
        return
    for condition in conditions:
        if not any(condition.field in point.payload for point in target.points.values()):
            raise VectorStoreError(
                f"filter field {condition.field!r}: no point of collection {collection!r} has "
                "it in its payload (a typo?)"
            )
