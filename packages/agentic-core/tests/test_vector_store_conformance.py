"""Core's in-memory vector store passes the conformance suite; the hashing embedder works."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentic_core import Embedder, HashingEmbedder, InMemoryVectorStore, VectorStore
from agentic_core.stores import VectorCondition, parse_vector_filter
from agentic_core.testing.conformance import VectorStoreConformance


class TestInMemoryVectorStore(VectorStoreConformance):
    @pytest.fixture
    def vector_store(self) -> VectorStore:
        return InMemoryVectorStore()


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))  # both unit vectors


async def test_the_hashing_embedder_is_an_embedder_of_unit_vectors() -> None:
    embedder = HashingEmbedder(dimension=64)

    vectors = await embedder.embed(["I live in Paris", "", "!!!"])

    assert isinstance(embedder, Embedder)
    assert [len(v) for v in vectors] == [64, 64, 64]
    assert math.sqrt(sum(x * x for x in vectors[0])) == pytest.approx(1.0)
    assert vectors[1] == [0.0] * 64
    assert vectors[2] == [0.0] * 64
    assert await embedder.embed([]) == []


async def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    embedder = HashingEmbedder()
    base, similar, unrelated = await embedder.embed(
        ["Where do I live? In Paris.", "I live in Paris, France", "The stock market fell today"]
    )

    assert _cosine(base, similar) > _cosine(base, unrelated) + 0.2


def test_the_hashing_embedder_gives_the_same_vector_in_another_process() -> None:
    code = (
        "import asyncio, json; from agentic_core import HashingEmbedder; "
        "print(json.dumps(asyncio.run(HashingEmbedder(32).embed(['héllo wörld']))[0]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout

    assert json.loads(out) == HashingEmbedder(32).embed_one("héllo wörld")


@given(st.text(max_size=200))
def test_a_text_always_embeds_to_the_same_unit_or_zero_vector(text: str) -> None:
    embedder = HashingEmbedder(dimension=16)

    vector = embedder.embed_one(text)

    assert vector == embedder.embed_one(text)
    norm = math.sqrt(sum(x * x for x in vector))
    assert norm == pytest.approx(1.0) or norm == 0.0


def test_the_embedder_refuses_bad_settings() -> None:
    with pytest.raises(ValueError, match="dimension"):
        HashingEmbedder(dimension=1)
    with pytest.raises(ValueError, match="ngram"):
        HashingEmbedder(ngram=0)


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
