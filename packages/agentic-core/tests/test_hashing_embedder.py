"""HashingEmbedder: deterministic, model-free embeddings where similar texts score closer."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentic_core import Embedder, HashingEmbedder


def _norm(vector: list[float]) -> float:
    return math.sqrt(sum(x * x for x in vector))


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))  # both unit vectors


def test_the_hashing_embedder_is_an_embedder() -> None:
    assert isinstance(HashingEmbedder(), Embedder)


@pytest.mark.parametrize("dimension", [2, 16, 256, 1000])
async def test_every_vector_has_the_dimension(dimension: int) -> None:
    embedder = HashingEmbedder(dimension)

    vectors = await embedder.embed(["I live in Paris", "a", "Grüße aus Köln"])

    assert embedder.dimension == dimension
    assert [len(v) for v in vectors] == [dimension] * 3


async def test_vectors_are_unit_length() -> None:
    vectors = await HashingEmbedder(64).embed(["I live in Paris", "x", "the the the"])

    assert [_norm(v) for v in vectors] == pytest.approx([1.0, 1.0, 1.0])


@pytest.mark.parametrize("text", ["", "   ", "!!! ... ?"])
async def test_a_text_without_words_is_the_zero_vector(text: str) -> None:
    assert await HashingEmbedder(32).embed([text]) == [[0.0] * 32]


async def test_nothing_to_embed_gives_no_vectors() -> None:
    assert await HashingEmbedder().embed([]) == []


async def test_vectors_come_in_the_order_of_the_texts() -> None:
    embedder = HashingEmbedder(32)

    vectors = await embedder.embed(["one", "two", "one"])

    assert vectors == [embedder.embed_one("one"), embedder.embed_one("two"), vectors[0]]
    assert vectors[0] != vectors[1]


async def test_case_and_punctuation_do_not_matter() -> None:
    embedder = HashingEmbedder()

    plain, shouted = await embedder.embed(["hello world", "HELLO, World!"])

    assert plain == shouted


async def test_similar_texts_are_closer_than_unrelated_ones() -> None:
    base, similar, unrelated = await HashingEmbedder().embed(
        ["Where do I live? In Paris.", "I live in Paris, France", "The stock market fell today"]
    )

    assert _cosine(base, similar) > _cosine(base, unrelated) + 0.2


async def test_character_ngrams_bring_word_forms_together() -> None:
    base, inflected, unrelated = await HashingEmbedder().embed(
        ["programming", "programmer", "volcano"]
    )

    assert _cosine(base, inflected) > _cosine(base, unrelated) + 0.2


def test_the_ngram_size_changes_the_features() -> None:
    assert HashingEmbedder(ngram=2).embed_one("paris") != HashingEmbedder(ngram=4).embed_one(
        "paris"
    )


def test_the_same_text_gives_the_same_vector_in_another_process() -> None:
    code = (
        "import asyncio, json; from agentic_core import HashingEmbedder; "
        "print(json.dumps(asyncio.run(HashingEmbedder(32).embed(['héllo wörld, hi']))[0]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        # Another string-hash salt: a vector built on Python's hash() would differ.
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    ).stdout

    assert json.loads(out) == HashingEmbedder(32).embed_one("héllo wörld, hi")


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="dimension"):
        HashingEmbedder(dimension=1)
    with pytest.raises(ValueError, match="ngram"):
        HashingEmbedder(ngram=0)


def test_the_repr_shows_the_settings() -> None:
    assert repr(HashingEmbedder(64, ngram=4)) == "HashingEmbedder(dimension=64, ngram=4)"


@given(st.text(max_size=200), st.integers(min_value=2, max_value=64))
def test_a_text_always_embeds_to_the_same_unit_or_zero_vector(text: str, dimension: int) -> None:
    embedder = HashingEmbedder(dimension)

    vector = embedder.embed_one(text)

    assert vector == HashingEmbedder(dimension).embed_one(text)
    assert len(vector) == dimension
    norm = _norm(vector)
    assert norm == pytest.approx(1.0) or norm == 0.0
