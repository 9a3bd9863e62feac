"""Vector search: points, results, the VectorStore protocol and the Embedder protocol.

The rules every ``VectorStore`` follows (``VectorStoreConformance`` checks each one):

- **Collections.** ``create_collection(name, dimension, distance=...)`` with ``distance`` one of
  ``"cosine"``, ``"dot"``, ``"euclid"``. Creating a collection that exists with the same
  dimension and distance does nothing; with another dimension or distance it raises
  ``VectorStoreError`` naming the collection and both settings. Every other method raises
  ``VectorStoreError`` naming the collection when it does not exist.
- **Points.** A point's ``id`` is any string; ``upsert`` replaces the point with the same id.
  Every vector of an ``upsert`` (and the query vector of ``search``) has the collection's
  dimension and finite numbers, else ``VectorStoreError`` naming the collection, the point and
  both dimensions, with nothing written. A payload is JSON-able (``SerializationError`` naming
  the point otherwise, nothing written) and reads back equal.
- **Scores.** ``"cosine"``: cosine similarity; ``"dot"``: the dot product; both higher-is-closer,
  results best first, ``score_threshold`` a minimum. ``"euclid"``: the Euclidean distance,
  lower-is-closer, results nearest first, ``score_threshold`` a maximum. At most ``limit``
  results.
- **Filters.** ``filter`` maps a top-level payload field to a condition, and a point matches when
  every condition holds: a ``str``/``int``/``bool``/``float`` value means equal; a non-empty list
  of them means equal to any; a dict of ``gt``/``gte``/``lt``/``lte`` numbers means within that
  range. A payload value that is a list matches when any of its items does. A malformed
  condition raises ``VectorStoreError`` naming the field. A filter on a field that no point of a
  non-empty collection carries raises ``VectorStoreError`` naming the field (a typo would
  otherwise silently find nothing).
- **Delete.** ``delete(collection, ids)`` removes those points; unknown ids are ignored.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DISTANCES",
    "Distance",
    "Embedder",
    "VectorPoint",
    "VectorSearchResult",
    "VectorStore",
]

Distance = Literal["cosine", "dot", "euclid"]
"""How a collection compares vectors."""

DISTANCES: tuple[Distance, ...] = ("cosine", "dot", "euclid")
"""Every ``Distance``, in the order the docs list them."""


class VectorPoint(BaseModel):
    """A vector to store: its id (any string), the numbers, and a JSON-able payload."""

    model_config = ConfigDict(defer_build=True)

    id: str
    vector: list[float]
    payload: dict[str, Any] = Field(default_factory=dict[str, Any])


class VectorSearchResult(BaseModel):
    """One search hit: the point's id, its score (see ``VectorStore``), and its payload."""

    model_config = ConfigDict(defer_build=True)

    id: str
    score: float
    payload: dict[str, Any] = Field(default_factory=dict[str, Any])


@runtime_checkable
class VectorStore(Protocol):
    """Collections of vectors with payloads, searched by similarity and filtered by payload.

    The module docstring of ``agentic_core.protocols._vector`` states the rules every
    implementation follows (collections, ids, scores, filters, errors).
    """

    async def create_collection(
        self, name: str, dimension: int, *, distance: str = "cosine"
    ) -> None: ...

    async def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None: ...

    async def search(
        self,
        collection: str,
        vector: Sequence[float],
        *,
        limit: int = 10,
        score_threshold: float | None = None,
        filter: Mapping[str, Any] | None = None,  # noqa: A002 - the protocol's public name
    ) -> builtins.list[VectorSearchResult]: ...

    async def delete(self, collection: str, ids: Sequence[str]) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of ``dimension`` numbers, one per text, in order."""

    dimension: int

    async def embed(self, texts: Sequence[str]) -> builtins.list[builtins.list[float]]: ...
