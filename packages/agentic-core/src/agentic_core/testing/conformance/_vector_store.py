"""The vector store conformance suite: what every ``VectorStore`` must do.

Subclass ``VectorStoreConformance`` as ``Test...`` and provide the store as a fixture named
``vector_store`` (a fresh, empty store for every test):

```python
class TestQdrantVectorStore(VectorStoreConformance):
    @pytest_asyncio.fixture
    async def vector_store(self) -> AsyncIterator[VectorStore]:
        store = QdrantVectorStore(":memory:")
        yield store
        await store.close()
```

The rules it checks are those of ``agentic_core.protocols._vector``'s module docstring.
"""

# ruff: noqa: S101  (a test suite: plain asserts are how pytest reports failures)

from __future__ import annotations

import asyncio
import math
import random
import re
from typing import Any, ClassVar

import pytest

from agentic_core._errors import SerializationError, VectorStoreError
from agentic_core.protocols._vector import VectorPoint, VectorStore

__all__ = ["VectorStoreConformance"]


def _point(point_id: str, vector: list[float], **payload: Any) -> VectorPoint:
    return VectorPoint(id=point_id, vector=vector, payload=payload)


def _ids(results: list[Any]) -> list[str]:
    return [r.id for r in results]


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


_PEOPLE = [
    _point("ada", [1.0, 0.0, 0.0], name="Ada", age=36, lang="en", tags=["math", "code"], vip=True),
    _point("bob", [0.9, 0.1, 0.0], name="Bob", age=25, lang="fr", tags=["art"], vip=False),
    _point("cy", [0.0, 1.0, 0.0], name="Cy", age=51, lang="en", tags=["code"], vip=False),
    _point("di", [0.0, 0.0, 1.0], name="Di", age=18, lang="de", tags=[], vip=True, score=0.5),
]


class VectorStoreConformance:
    """The behaviour every ``VectorStore`` must have; subclass it as ``Test...``.

    The subclass provides the store as a fixture named ``vector_store``; every test must receive
    a fresh, empty store. ``large_collection_size`` sets the size of the exact top-k test.
    """

    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]
    large_collection_size: ClassVar[int] = 2_000
    """How many random points ``test_a_large_collection_returns_the_exact_top_k`` holds."""
    concurrent_upserts: ClassVar[int] = 50
    """How many ``upsert`` calls ``test_concurrent_upserts_all_land`` runs at once."""

    async def _people(self, store: VectorStore, distance: str = "cosine") -> None:
        await store.create_collection("people", 3, distance=distance)
        await store.upsert("people", _PEOPLE)

    # --- collections ----------------------------------------------------------------------------

    async def test_store_satisfies_the_protocol(self, vector_store: VectorStore) -> None:
        assert isinstance(vector_store, VectorStore)

    async def test_create_collection_twice_with_the_same_settings_keeps_the_points(
        self, vector_store: VectorStore
    ) -> None:
        await self._people(vector_store)

        await vector_store.create_collection("people", 3, distance="cosine")

        assert len(await vector_store.search("people", [1, 0, 0], limit=10)) == len(_PEOPLE)

    async def test_create_collection_with_another_dimension_raises_naming_it(
        self, vector_store: VectorStore
    ) -> None:
        await vector_store.create_collection("docs", 3)

        with pytest.raises(VectorStoreError, match=r"'docs'.*3.*4|'docs'.*4.*3"):
            await vector_store.create_collection("docs", 4)

    async def test_create_collection_with_another_distance_raises_naming_it(
        self, vector_store: VectorStore
    ) -> None:
        await vector_store.create_collection("docs", 3, distance="cosine")

        both = r"'docs'.*('cosine'.*'euclid'|'euclid'.*'cosine')"
        with pytest.raises(VectorStoreError, match=both):
            await vector_store.create_collection("docs", 3, distance="euclid")

    async def test_create_collection_refuses_a_bad_distance_or_dimension(
        self, vector_store: VectorStore
    ) -> None:
        with pytest.raises(ValueError, match="manhattan"):
            await vector_store.create_collection("docs", 3, distance="manhattan")
        with pytest.raises(ValueError, match="dimension"):
            await vector_store.create_collection("docs", 0)

    @pytest.mark.parametrize("method", ["upsert", "search", "delete"])
    async def test_an_unknown_collection_raises_naming_it(
        self, vector_store: VectorStore, method: str
    ) -> None:
        calls = {
            "upsert": lambda: vector_store.upsert("nowhere", [_point("a", [1.0, 0.0])]),
            "search": lambda: vector_store.search("nowhere", [1.0, 0.0]),
            "delete": lambda: vector_store.delete("nowhere", ["a"]),
        }

        with pytest.raises(VectorStoreError, match="'nowhere'"):
            await calls[method]()

    async def test_collections_are_independent(self, vector_store: VectorStore) -> None:
        await vector_store.create_collection("a", 2)
        await vector_store.create_collection("b", 3)
        await vector_store.upsert("a", [_point("x", [1.0, 0.0])])

        assert await vector_store.search("b", [1.0, 0.0, 0.0]) == []
        assert _ids(await vector_store.search("a", [1.0, 0.0])) == ["x"]

    # --- points ---------------------------------------------------------------------------------

    async def test_upsert_replaces_a_point_with_the_same_id(
        self, vector_store: VectorStore
    ) -> None:
        await vector_store.create_collection("docs", 2)
        await vector_store.upsert("docs", [_point("a", [1.0, 0.0], v=1)])

        await vector_store.upsert("docs", [_point("a", [0.0, 1.0], v=2)])

        [hit] = await vector_store.search("docs", [0.0, 1.0], limit=5)
        assert hit.id == "a"
        assert hit.payload == {"v": 2}
        assert hit.score == pytest.approx(1.0, rel=1e-5)

    async def test_a_vector_of_the_wrong_dimension_writes_nothing(
        self, vector_store: VectorStore
    ) -> None:
        await vector_store.create_collection("docs", 3)
        batch = [_point("good", [1.0, 0.0, 0.0]), _point("bad", [1.0, 0.0])]

        with pytest.raises(VectorStoreError, match=r"'bad'.*2.*'docs'.*3"):
            await vector_store.upsert("docs", batch)

        assert await vector_store.search("docs", [1.0, 0.0, 0.0]) == []

    @pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
    async def test_a_non_finite_number_writes_nothing(
        self, vector_store: VectorStore, number: float
    ) -> None:
        await vector_store.create_collection("docs", 2)

        with pytest.raises(VectorStoreError, match="'p'"):
            await vector_store.upsert("docs", [_point("ok", [1.0, 0.0]), _point("p", [number, 0])])

        assert await vector_store.search("docs", [1.0, 0.0]) == []

    async def test_a_query_of_the_wrong_dimension_raises(self, vector_store: VectorStore) -> None:
        await vector_store.create_collection("docs", 3)

        with pytest.raises(VectorStoreError, match=r"2.*'docs'.*3|3.*'docs'.*2"):
            await vector_store.search("docs", [1.0, 0.0])

    @pytest.mark.parametrize("number", [math.nan, math.inf])
    async def test_a_query_with_a_non_finite_number_raises(
        self, vector_store: VectorStore, number: float
    ) -> None:
        await vector_store.create_collection("docs", 2)
        await vector_store.upsert("docs", [_point("a", [1.0, 0.0])])

        with pytest.raises(VectorStoreError, match=r"'docs'"):
            await vector_store.search("docs", [number, 0.0])

    @pytest.mark.parametrize(
        "value",
        [object(), math.nan, {1, 2}, b"bytes", {"nested": {1: "an int key"}}],
        ids=["object", "nan", "set", "bytes", "int-key"],
    )
    async def test_a_payload_that_is_not_json_able_writes_nothing(
        self, vector_store: VectorStore, value: Any
    ) -> None:
        await vector_store.create_collection("docs", 2)
        batch = [_point("good", [1.0, 0.0]), _point("bad", [0.0, 1.0], when=value)]

        with pytest.raises(SerializationError, match="'bad'"):
            await vector_store.upsert("docs", batch)

        assert await vector_store.search("docs", [1.0, 0.0]) == []

    async def test_a_payload_round_trips_equal(self, vector_store: VectorStore) -> None:
        payload = {
            "text": 'héllo ✓ "quoted"\n',
            "n": 7,
            "x": -2.5,
            "ok": True,
            "none": None,
            "list": [1, "two", [3], {"four": 4}],
            "nested": {"deep": {"deeper": [None, False]}},
        }
        await vector_store.create_collection("docs", 2)
        await vector_store.upsert("docs", [VectorPoint(id="p", vector=[1, 0], payload=payload)])

        [hit] = await vector_store.search("docs", [1.0, 0.0])

        assert hit.payload == payload

    async def test_payloads_are_independent_copies(self, vector_store: VectorStore) -> None:
        payload: dict[str, Any] = {"items": [1, 2]}
        await vector_store.create_collection("docs", 2)
        await vector_store.upsert("docs", [VectorPoint(id="p", vector=[1, 0], payload=payload)])
        payload["items"].append(3)
        [hit] = await vector_store.search("docs", [1.0, 0.0])
        hit.payload["items"].append(4)

        [again] = await vector_store.search("docs", [1.0, 0.0])

        assert again.payload == {"items": [1, 2]}

    async def test_ids_are_any_strings(self, vector_store: VectorStore) -> None:
        ids = ["1", "", "a/b c", "ünïcode ✓", "550e8400-e29b-41d4-a716-446655440000", "x" * 200]
        await vector_store.create_collection("docs", 2)

        await vector_store.upsert(
            "docs", [_point(point_id, [1.0, float(i)]) for i, point_id in enumerate(ids)]
        )

        found = await vector_store.search("docs", [1.0, 0.0], limit=10)
        assert sorted(_ids(found)) == sorted(ids)
        await vector_store.delete("docs", ids[:2])
        assert sorted(_ids(await vector_store.search("docs", [1.0, 0.0]))) == sorted(ids[2:])

    async def test_an_empty_payload_reads_back_empty(self, vector_store: VectorStore) -> None:
        await vector_store.create_collection("docs", 2)
        await vector_store.upsert("docs", [VectorPoint(id="p", vector=[0.5, 0.5])])

        [hit] = await vector_store.search("docs", [1.0, 0.0])

        assert hit.payload == {}

    # --- scores ---------------------------------------------------------------------------------

    async def test_cosine_scores_are_cosine_similarities_best_first(
        self, vector_store: VectorStore
    ) -> None:
        await self._people(vector_store, "cosine")
        query = [1.0, 0.2, 0.0]

        hits = await vector_store.search("people", query, limit=4)

        assert _ids(hits) == ["bob", "ada", "cy", "di"]
        expected = {p.id: _cosine(query, p.vector) for p in _PEOPLE}
        for hit in hits:
            assert hit.score == pytest.approx(expected[hit.id], rel=1e-5, abs=1e-6)

    async def test_cosine_ignores_the_vectors_lengths(self, vector_store: VectorStore) -> None:
        await vector_store.create_collection("docs", 2)
        await vector_store.upsert("docs", [_point("long", [10.0, 0.0]), _point("short", [0, 0.5])])

        hits = await vector_store.search("docs", [3.0, 0.0], limit=2)

        assert _ids(hits) == ["long", "short"]
        assert hits[0].score == pytest.approx(1.0, rel=1e-5)
        assert hits[1].score == pytest.approx(0.0, abs=1e-6)

    async def test_dot_scores_are_dot_products_best_first(self, vector_store: VectorStore) -> None:
        await vector_store.create_collection("docs", 2, distance="dot")
        await vector_store.upsert(
            "docs", [_point("a", [1.0, 1.0]), _point("b", [3.0, 0.0]), _point("c", [-1.0, 2.0])]
        )

        hits = await vector_store.search("docs", [2.0, 1.0], limit=3)

        assert _ids(hits) == ["b", "a", "c"]
        assert [h.score for h in hits] == pytest.approx([6.0, 3.0, 0.0], rel=1e-5, abs=1e-6)

    async def test_euclid_scores_are_distances_nearest_first(
        self, vector_store: VectorStore
    ) -> None:
        await vector_store.create_collection("docs", 2, distance="euclid")
        await vector_store.upsert(
            "docs", [_point("far", [4.0, 4.0]), _point("near", [1.0, 1.0]), _point("o", [0, 0])]
        )

        hits = await vector_store.search("docs", [1.0, 2.0], limit=3)

        assert _ids(hits) == ["near", "o", "far"]
        expected = [1.0, math.sqrt(5), math.sqrt(13)]
        assert [h.score for h in hits] == pytest.approx(expected, rel=1e-5)

    async def test_score_threshold_is_a_minimum_for_similarities(
        self, vector_store: VectorStore
    ) -> None:
        await self._people(vector_store, "cosine")

        hits = await vector_store.search("people", [1.0, 0.2, 0.0], score_threshold=0.9)

        assert _ids(hits) == ["bob", "ada"]

    async def test_score_threshold_is_a_minimum_for_dot_products(
        self, vector_store: VectorStore
    ) -> None:
        await vector_store.create_collection("docs", 2, distance="dot")
        await vector_store.upsert(
            "docs", [_point("a", [1.0, 1.0]), _point("b", [3.0, 0.0]), _point("c", [-1.0, 2.0])]
        )

        hits = await vector_store.search("docs", [2.0, 1.0], score_threshold=2.5)

        assert _ids(hits) == ["b", "a"]

    async def test_score_threshold_is_a_maximum_for_euclid(self, vector_store: VectorStore) -> None:
        await vector_store.create_collection("docs", 2, distance="euclid")
        await vector_store.upsert(
            "docs", [_point("far", [4.0, 4.0]), _point("near", [1.0, 1.0]), _point("o", [0, 0])]
        )

        hits = await vector_store.search("docs", [1.0, 2.0], score_threshold=2.5)

        assert _ids(hits) == ["near", "o"]

    async def test_limit_bounds_the_results(self, vector_store: VectorStore) -> None:
        await self._people(vector_store)

        assert _ids(await vector_store.search("people", [1.0, 0.2, 0.0], limit=1)) == ["bob"]
        with pytest.raises(ValueError, match="limit"):
            await vector_store.search("people", [1.0, 0.0, 0.0], limit=0)

    async def test_a_search_of_an_empty_collection_is_empty(
        self, vector_store: VectorStore
    ) -> None:
        await vector_store.create_collection("docs", 2)

        assert await vector_store.search("docs", [1.0, 0.0]) == []

    # --- filters --------------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("condition", "expected"),
        [
            ({"lang": "en"}, ["ada", "cy"]),
            ({"age": 25}, ["bob"]),
            ({"vip": True}, ["ada", "di"]),
            ({"vip": False}, ["bob", "cy"]),
            ({"score": 0.5}, ["di"]),
            ({"lang": ["fr", "de"]}, ["bob", "di"]),
            ({"age": {"gte": 25, "lt": 51}}, ["ada", "bob"]),
            ({"age": {"gt": 25}}, ["ada", "cy"]),
            ({"age": {"lte": 25}}, ["bob", "di"]),
            ({"tags": "code"}, ["ada", "cy"]),
            ({"tags": ["art", "math"]}, ["ada", "bob"]),
            ({"lang": "en", "vip": False}, ["cy"]),
            ({"lang": "en", "age": {"lt": 30}}, []),
            ({"name": "Nobody"}, []),
        ],
        ids=[
            "str", "int", "bool-true", "bool-false", "float", "any-of", "range", "gt", "lte",
            "list-payload", "list-payload-any-of", "and", "and-empty", "no-match",
        ],
    )  # fmt: skip
    async def test_filters_select_the_matching_points(
        self, vector_store: VectorStore, condition: dict[str, Any], expected: list[str]
    ) -> None:
        await self._people(vector_store)

        hits = await vector_store.search("people", [1.0, 1.0, 1.0], limit=10, filter=condition)

        assert sorted(_ids(hits)) == expected

    async def test_a_filter_keeps_the_score_order(self, vector_store: VectorStore) -> None:
        await self._people(vector_store)

        hits = await vector_store.search("people", [0.0, 1.0, 0.1], filter={"lang": "en"})

        assert _ids(hits) == ["cy", "ada"]

    @pytest.mark.parametrize(
        "condition",
        [None, [], {"between": [1, 2]}, {"gt": "ten"}, {"gt": True}, {"gt": math.nan}, {},
         [object()], [[1]], object()],
        ids=["none", "empty-list", "unknown-op", "str-bound", "bool-bound", "nan-bound",
             "empty-range", "bad-item", "nested-list", "object"],
    )  # fmt: skip
    async def test_a_malformed_condition_raises_naming_the_field(
        self, vector_store: VectorStore, condition: Any
    ) -> None:
        await self._people(vector_store)

        with pytest.raises(VectorStoreError, match=re.escape("'age'")):
            await vector_store.search("people", [1.0, 0.0, 0.0], filter={"age": condition})

    async def test_a_filter_on_a_field_no_point_has_raises_naming_it(
        self, vector_store: VectorStore
    ) -> None:
        await self._people(vector_store)

        with pytest.raises(VectorStoreError, match=r"'langauge'.*'people'"):
            await vector_store.search("people", [1.0, 0.0, 0.0], filter={"langauge": "en"})

    async def test_a_filter_on_an_empty_collection_finds_nothing(
        self, vector_store: VectorStore
    ) -> None:
        await vector_store.create_collection("docs", 3)

        assert await vector_store.search("docs", [1.0, 0.0, 0.0], filter={"any": "thing"}) == []

    # --- delete ---------------------------------------------------------------------------------

    async def test_delete_removes_points_and_ignores_unknown_ids(
        self, vector_store: VectorStore
    ) -> None:
        await self._people(vector_store)

        await vector_store.delete("people", ["ada", "nobody"])
        await vector_store.delete("people", [])

        hits = await vector_store.search("people", [1.0, 0.0, 0.0], limit=10)
        assert sorted(_ids(hits)) == ["bob", "cy", "di"]

    # --- scale and concurrency ------------------------------------------------------------------

    async def test_a_large_collection_returns_the_exact_top_k(
        self, vector_store: VectorStore
    ) -> None:
        rng = random.Random(7)  # noqa: S311 - test data, not secrets
        dimension, count = 16, self.large_collection_size
        vectors = [[rng.gauss(0, 1) for _ in range(dimension)] for _ in range(count)]
        await vector_store.create_collection("big", dimension)
        for start in range(0, count, 500):
            await vector_store.upsert(
                "big",
                [_point(f"p{i}", vectors[i], n=i) for i in range(start, min(start + 500, count))],
            )
        query = [rng.gauss(0, 1) for _ in range(dimension)]

        hits = await vector_store.search("big", query, limit=10)
        filtered = await vector_store.search("big", query, limit=10, filter={"n": {"lt": 100}})

        scores = sorted(((_cosine(query, v), f"p{i}") for i, v in enumerate(vectors)), reverse=True)
        assert _ids(hits) == [point_id for _, point_id in scores[:10]]
        assert [h.score for h in hits] == pytest.approx([s for s, _ in scores[:10]], rel=1e-4)
        under = [(s, p) for s, p in scores if int(p[1:]) < 100]
        assert _ids(filtered) == [point_id for _, point_id in under[:10]]

    async def test_concurrent_upserts_all_land(self, vector_store: VectorStore) -> None:
        count = self.concurrent_upserts
        await vector_store.create_collection("docs", 2)

        await asyncio.gather(
            *(
                vector_store.upsert("docs", [_point(f"p{i:03d}", [1.0, i / count], i=i)])
                for i in range(count)
            )
        )

        hits = await vector_store.search("docs", [1.0, 0.0], limit=count)
        assert sorted(_ids(hits)) == [f"p{i:03d}" for i in range(count)]
