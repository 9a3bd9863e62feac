"""OpenAIEmbedder: embeddings from OpenAI's ``/v1/embeddings``, or any server that speaks it."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import Any, Self, cast

from agentic_llm._errors import ProviderError
from agentic_llm._http import HTTPClient, RetryPolicy
from agentic_llm._openai._client import (
    API_KEY_VARIABLE,
    OPENAI_BASE_URL,
    _key_from_environment,  # pyright: ignore[reportPrivateUsage]
)
from agentic_llm._secret import Secret

__all__ = ["OpenAIEmbedder"]

_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_CONCURRENT_BATCHES = 4


class OpenAIEmbedder:
    """An ``Embedder`` behind ``POST {base_url}/embeddings`` (OpenAI, llama.cpp, vLLM, Ollama...).

    The key comes from ``api_key`` or, for OpenAI itself (no ``base_url``), from
    ``OPENAI_API_KEY``; with ``base_url`` the environment is not read. Texts go in batches of
    ``batch_size`` (a few at a time), with the chat clients' retries on 429, 5xx and connection
    errors and their error types. Vectors come back in the order of the texts (by each item's
    ``index``, whatever order the server lists them in).

    A server that answers one vector per token (llama.cpp's without pooling) gets its token
    vectors averaged (mean pooling), so every text still gives one vector.

    ``dimension`` is known for OpenAI's models, given by ``dimension=`` (also sent to OpenAI as
    ``dimensions``, to shorten text-embedding-3 vectors), or learned by ``await probe()`` or the
    first ``embed``. A reply that is not a list of vectors of that dimension raises
    ``ProviderError`` naming the model and what was wrong.

    Example:
        ```python
        embedder = OpenAIEmbedder("nomic-embed-text", base_url="http://127.0.0.1:8080/v1")
        await embedder.probe()
        vectors = await embedder.embed(["first text", "second text"])
        ```
    """

    provider = "openai"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        batch_size: int = 256,
        timeout_s: float = 60.0,
        max_retries: int = 3,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        if dimension is not None and dimension < 1:
            raise ValueError(f"dimension must be >= 1, got {dimension!r}")
        key = api_key if api_key is not None else _key_from_environment(base_url)
        url = (base_url or OPENAI_BASE_URL).rstrip("/")
        self.model = model
        self.batch_size = batch_size
        self._send_dimensions = dimension is not None and url == OPENAI_BASE_URL
        self._dimension = dimension or (
            _KNOWN_DIMENSIONS.get(model) if url == OPENAI_BASE_URL else None
        )
        self._http = HTTPClient(
            provider=self.provider,
            base_url=url,
            timeout_s=timeout_s,
            retry=RetryPolicy(max_retries=max_retries),
            secret_headers={"Authorization": Secret(f"Bearer {key}")} if key else {},
            auth_hint=(
                f"check the key in {API_KEY_VARIABLE} or the api_key argument"
                if key
                else "no API key was sent: pass api_key="
            ),
        )

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self._http.label!r})"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pools (idempotent)."""
        await self._http.aclose()

    @property
    def dimension(self) -> int:
        """The length of every vector.

        Raises:
            ValueError: not known yet: pass ``dimension=`` or ``await probe()`` first.
        """
        if self._dimension is None:
            raise ValueError(
                f"the dimension of embedding model {self.model!r} is not known yet: pass "
                "dimension= to OpenAIEmbedder or call `await embedder.probe()` first"
            )
        return self._dimension

    async def probe(self) -> int:
        """Embed one short text to learn (and return) the model's dimension."""
        await self.embed(["dimension probe"])
        return self.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (``[]`` for no texts, without a request).

        Raises:
            ProviderError: a malformed reply (the message names the model and the problem).
            LLMError: the request failed (rate limits and 5xx after retries, auth, timeouts).
        """
        if not texts:
            return []
        batches = [
            list(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)
        ]
        gate = asyncio.Semaphore(_CONCURRENT_BATCHES)

        async def one(batch: list[str]) -> list[list[float]]:
            async with gate:
                return await self._embed_batch(batch)

        results = await asyncio.gather(*(one(batch) for batch in batches))
        return [vector for result in results for vector in result]

    async def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        body: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._send_dimensions:
            body["dimensions"] = self._dimension
        payload = await self._http.request_json("POST", "embeddings", json_body=body)
        return self._parse(payload, len(texts))

    def _parse(self, payload: Any, expected: int) -> list[list[float]]:
        data = cast("dict[str, object]", payload).get("data") if isinstance(payload, dict) else None
        if not isinstance(data, list):
            raise self._malformed("it has no 'data' list")
        items = cast("list[object]", data)
        if len(items) != expected:
            raise self._malformed(f"{len(items)} embeddings for {expected} texts")
        vectors: list[list[float] | None] = [None] * expected
        for position, item in enumerate(items):
            index, embedding = _index_and_embedding(item, position)
            if not 0 <= index < expected or vectors[index] is not None:
                raise self._malformed(f"item {position} has a bad or repeated index {index!r}")
            vectors[index] = self._vector(embedding, index)
        return cast("list[list[float]]", vectors)

    def _vector(self, embedding: object, index: int) -> list[float]:
        if not isinstance(embedding, list):
            raise self._malformed(f"embedding {index} is not a list of numbers")
        values = cast("list[object]", embedding)
        if values and all(isinstance(token, list) for token in values):
            values = _mean_pool(cast("list[list[object]]", values))
        if not values or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in values
        ):
            raise self._malformed(f"embedding {index} is not a non-empty list of finite numbers")
        vector = [float(cast("float", v)) for v in values]
        if self._dimension is None:
            self._dimension = len(vector)
        elif len(vector) != self._dimension:
            raise self._malformed(
                f"embedding {index} has {len(vector)} dimensions, expected {self._dimension}"
            )
        return vector

    def _malformed(self, why: str) -> ProviderError:
        return ProviderError(
            f"{self._http.label} returned a malformed embeddings reply for model "
            f"{self.model!r}: {why}",
            provider=self.provider,
            status=200,
        )


def _index_and_embedding(item: object, position: int) -> tuple[int, object]:
    if not isinstance(item, dict):
        return -1, None
    fields = cast("dict[str, object]", item)
    index = fields.get("index", position)
    if isinstance(index, bool) or not isinstance(index, int):
        return -1, None
    return index, fields.get("embedding")


def _mean_pool(tokens: list[list[object]]) -> list[object]:
    """The mean of per-token vectors (anything malformed is left for ``_vector`` to refuse)."""
    width = len(tokens[0])
    if not width or any(len(token) != width for token in tokens):
        return []
    numbers = [[v if isinstance(v, int | float) else math.nan for v in token] for token in tokens]
    return [math.fsum(column) / len(tokens) for column in zip(*numbers, strict=True)]
