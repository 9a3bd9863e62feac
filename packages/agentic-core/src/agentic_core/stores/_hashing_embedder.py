"""``HashingEmbedder``: deterministic feature-hashing embeddings, no model: tests, offline use."""

from __future__ import annotations

import builtins
import hashlib
import math
import re
from collections.abc import Sequence

__all__ = ["HashingEmbedder"]

_WORD = re.compile(r"\w+")


class HashingEmbedder:
    """An ``Embedder`` that hashes words and character n-grams into a fixed-size vector.

    No model, no network, no randomness: the same text gives the same vector in every process
    and on every machine (BLAKE2b, never Python's salted ``hash``). Texts sharing words or word
    fragments get a higher cosine similarity than unrelated ones, which is enough for tests,
    demos and offline semantic memory; it knows nothing of synonyms or meaning. Use a real
    embedding model (e.g. ``agentic_llm.OpenAIEmbedder``) for real retrieval.

    Each lowercased word counts once as a whole and once per character ``ngram`` of the word
    padded with ``<`` and ``>``; each feature lands on one of ``dimension`` slots with a sign
    from its hash, and the vector is L2-normalized (a text without any word gives zeros).

    Example:
        ```python
        embedder = HashingEmbedder(dimension=256)
        [vector] = await embedder.embed(["I live in Paris"])
        assert len(vector) == 256
        ```
    """

    def __init__(self, dimension: int = 256, *, ngram: int = 3) -> None:
        """Raises ``ValueError`` for a ``dimension`` below 2 or an ``ngram`` below 1."""
        if dimension < 2:
            raise ValueError(f"dimension must be >= 2, got {dimension!r}")
        if ngram < 1:
            raise ValueError(f"ngram must be >= 1, got {ngram!r}")
        self.dimension = dimension
        self.ngram = ngram

    def __repr__(self) -> str:
        return f"HashingEmbedder(dimension={self.dimension}, ngram={self.ngram})"

    async def embed(self, texts: Sequence[str]) -> builtins.list[builtins.list[float]]:
        """One vector of ``dimension`` floats per text, in order."""
        return [self.embed_one(text) for text in texts]

    def embed_one(self, text: str) -> builtins.list[float]:
        """The vector of one text (the synchronous core of ``embed``)."""
        vector = [0.0] * self.dimension
        for word in _WORD.findall(text.lower()):
            self._add(vector, "w:" + word)
            padded = f"<{word}>"
            for start in range(max(1, len(padded) - self.ngram + 1)):
                self._add(vector, "g:" + padded[start : start + self.ngram])
        norm = math.sqrt(math.fsum(v * v for v in vector))
        return vector if norm == 0.0 else [v / norm for v in vector]

    def _add(self, vector: builtins.list[float], feature: str) -> None:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        vector[(value >> 1) % self.dimension] += 1.0 if value & 1 else -1.0
