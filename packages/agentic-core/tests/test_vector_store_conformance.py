"""Core's in-memory vector store passes the conformance suite, plus what only it promises."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentic_core import InMemoryVectorStore, VectorPoint, VectorStore
from agentic_core.stores import VectorCondition, parse_vector_filter
from agentic_core.testing.conformance import VectorStoreConformance


class TestInMemoryVectorStore(VectorStoreConformance):
    @pytest.fixture
    def vector_store(self) -> VectorStore:
        return InMemoryVectorStore()


async def _store_of(distance: str, points: dict[str, list[float]]) -> InMemoryVectorStore:
    store = InMemoryVectorStore()
    await store.create_collection("docs", 2, distance=distance)
    # Inserted out of id order, so a tie broken by insertion order would show.
    await store.upsert("docs", [VectorPoint(id=i, vector=v) for i, v in reversed(points.items())])
    return store


@pytest.mark.parametrize("distance", ["cosine", "dot", "euclid"])
async def test_equal_scores_come_in_id_order(distance: str) -> None:
    store = await _store_of(
        distance, {"a": [1.0, 0.0], "b": [1.0, 0.0], "c": [1.0, 0.0], "far": [-1.0, 0.0]}
    )

    hits = await store.search("docs", [1.0, 0.0], limit=3)

    assert [h.id for h in hits] == ["a", "b", "c"]


async def test_a_zero_vector_has_cosine_similarity_zero() -> None:
    store = await _store_of("cosine", {"zero": [0.0, 0.0], "x": [1.0, 0.0]})

    by_query = await store.search("docs", [0.0, 0.0], limit=2)
    by_point = await store.search("docs", [1.0, 0.0], limit=2)

    assert [(h.id, h.score) for h in by_query] == [("x", 0.0), ("zero", 0.0)]
    assert [(h.id, h.score) for h in by_point] == [("x", 1.0), ("zero", 0.0)]


async def test_a_bool_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="dimension"):
        await InMemoryVectorStore().create_collection("docs", True)


async def test_the_repr_names_the_collections() -> None:
    store = InMemoryVectorStore()
    await store.create_collection("b", 2)
    await store.create_collection("a", 2)

    assert repr(store) == "InMemoryVectorStore(collections=['a', 'b'])"


def test_a_parsed_filter_is_typed_conditions() -> None:
    conditions = parse_vector_filter("c", {"a": "x", "b": [1, 2], "n": {"gte": 1, "lt": 5}})

    assert conditions == [
        VectorCondition("a", values=("x",)),
        VectorCondition("b", values=(1, 2)),
        VectorCondition("n", gte=1.0, lt=5.0),
    ]
    assert conditions[2].is_range
    assert conditions[2].matches({"n": 4.5})
    assert not conditions[2].matches({"n": True})
    assert not VectorCondition("v", values=(1,)).matches({"v": True})
    assert parse_vector_filter("c", None) == []


def test_the_suite_runs_in_pytest_asyncio_strict_mode(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"
    )
    (tmp_path / "test_strict.py").write_text(
        textwrap.dedent(
            """
            import pytest
            import pytest_asyncio

            from agentic_core import InMemoryVectorStore
            from agentic_core.testing.conformance import VectorStoreConformance


            class TestSyncFixture(VectorStoreConformance):
                large_collection_size = 50

                @pytest.fixture
                def vector_store(self):
                    return InMemoryVectorStore()


            class TestAsyncFixture(VectorStoreConformance):
                large_collection_size = 50

                @pytest_asyncio.fixture
                async def vector_store(self):
                    yield InMemoryVectorStore()
            """
        )
    )

    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed" in result.stdout
    assert "skipped" not in result.stdout
