"""OpenAIEmbedder: embeddings from OpenAI's ``/v1/embeddings``, or any server that speaks it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Self

from agentic_llm._errors import ProviderError
from agentic_llm._http import HTTPClient, RetryPolicy, display_url
from agentic_llm._openai._client import (
    API_KEY_VARIABLE,
    OPENAI_BASE_URL,
    _is_openai,  # pyright: ignore[reportPrivateUsage] - the chat client's rule, shared
    _key_from_environment,  # pyright: ignore[reportPrivateUsage]
)
from agentic_llm._openai._embedding_mapping import (
    MalformedEmbeddingsError,
    build_embeddings_request,
    parse_embeddings,
)
from agentic_llm._secret import Secret

__all__ = ["OpenAIEmbedder"]

# The size of OpenAI's own models' vectors (used for api.openai.com only: elsewhere the same
# name may be another model, or a proxy may shorten it).
_OPENAI_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# OpenAI answers HTTP 400 to `dimensions` for these, even with their own size.
_OPENAI_FIXED_SIZE = frozenset({"text-embedding-ada-002"})
_CONCURRENT_BATCHES = 4
"""Requests of one ``embed`` call in flight at once (more mostly earns 429s)."""


class OpenAIEmbedder:
    """An ``Embedder`` behind ``POST {base_url}/embeddings`` (OpenAI, llama.cpp, vLLM, Ollama...).

    The key comes from ``api_key`` or, for OpenAI itself (no ``base_url``), from
    ``OPENAI_API_KEY``; with ``base_url`` the environment is not read, so an OpenAI key never
    reaches another server unasked. ``headers`` (for a proxy in front of the server) are sent
    with every request and, like the key, masked in every error and log line. Texts go
    ``batch_size`` to a request, a few requests at a time, with the chat clients' retries (429
    honouring ``Retry-After``, 5xx, connection failures), timeouts and error types. Vectors come
    back in the order of the texts, by each item's ``index`` whatever order the server lists
    them in.

    ``dimension`` (core's ``Embedder`` attribute, a plain ``int``) is known from the start for
    OpenAI's own models or when given as ``dimension=``; otherwise ``await probe()`` (or the first
    ``embed``) learns it. Reading it before then raises ``AttributeError`` naming that fix (and
    ``isinstance(embedder, Embedder)`` is False until then). Every reply is checked against it.

    The ``dimensions`` request field (shorter text-embedding-3 vectors) is sent when
    ``dimension`` is given and ``send_dimensions`` says so: by default only to api.openai.com, for
    models that accept it. Pass ``send_dimensions=True`` for another server that shortens vectors
    (vLLM or Ollama with a Matryoshka model, an OpenAI proxy); most others refuse or ignore it.

    A server that answers one vector per token (llama-cpp-python's, for a model without a
    pooling layer) gets its token vectors averaged, so every text still gives one vector.

    Example:
        ```python
        embedder = OpenAIEmbedder("nomic-embed-text", base_url="http://127.0.0.1:8080/v1")
        await embedder.probe()
        vectors = await embedder.embed(["first text", "second text"])
        ```
    """

    provider = "openai"
    dimension: int
    """The length of every vector (unset until known: see the class docstring)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        dimension: int | None = None,
        send_dimensions: bool | None = None,
        batch_size: int = 256,
        timeout_s: float = 60.0,
        max_retries: int = 3,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Set up the embedder; nothing is sent before the first ``embed`` or ``probe``.

        Raises:
            ValueError: ``batch_size`` or ``dimension`` below 1, ``timeout_s`` not above 0,
                ``max_retries`` below 0, or ``send_dimensions=True`` without ``dimension``.
            AuthenticationError: no ``api_key``, no ``base_url`` and no ``OPENAI_API_KEY``.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        if dimension is not None and dimension < 1:
            raise ValueError(f"dimension must be >= 1, got {dimension!r}")
        if send_dimensions and dimension is None:
            raise ValueError("send_dimensions=True needs the size to ask for: pass dimension=")
        key = api_key if api_key is not None else _key_from_environment(base_url)
        url = (base_url or OPENAI_BASE_URL).rstrip("/")
        on_openai = _is_openai(url)
        self.model = model
        self.batch_size = batch_size
        known = dimension or (_OPENAI_DIMENSIONS.get(model) if on_openai else None)
        if known is not None:
            self.dimension = known
        if send_dimensions is None:
            send_dimensions = on_openai and model not in _OPENAI_FIXED_SIZE
        self._dimensions_field = dimension if send_dimensions else None
        self._dimension_given = dimension is not None
        # Like OllamaChatClient's: a proxy's headers usually carry credentials.
        secret_headers = {name: Secret(value) for name, value in (headers or {}).items()}
        if key:
            secret_headers["Authorization"] = Secret(f"Bearer {key}")
        self._http = HTTPClient(
            provider=self.provider,
            base_url=url,
            timeout_s=timeout_s,
            retry=RetryPolicy(max_retries=max_retries),
            secret_headers=secret_headers,
            auth_hint=_auth_hint(key=bool(key), headers=bool(headers)),
        )

    if not TYPE_CHECKING:  # hidden from type checkers, which would then accept any name

        def __getattr__(self, name: str) -> NoReturn:
            # Only reached for attributes that are not set: `dimension` before it is known.
            if name == "dimension":
                model = vars(self).get("model")
                raise AttributeError(
                    f"the dimension of embedding model {model!r} is not known yet: pass "
                    "dimension= to OpenAIEmbedder or call `await embedder.probe()` first",
                    name=name,
                    obj=self,
                )
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self
            )

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={display_url(self.base_url)!r})"

    @property
    def base_url(self) -> str:
        """The API root the requests go to (``{base_url}/embeddings``)."""
        return self._http.base_url

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pools (idempotent); the embedder cannot be used afterwards."""
        await self._http.aclose()

    async def probe(self) -> int:
        """Embed one short text to learn the model's dimension, and return it.

        Raises:
            LLMError: as ``embed``.
        """
        await self.embed(["dimension probe"])
        return self.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order (``[]`` for no texts, without a request).

        Raises:
            TypeError: ``texts`` is one ``str`` (a sequence of characters): wrap it in a list.
            ProviderError: a malformed reply (the message names the model and the problem), or
                5xx after the retries; ``InvalidRequestError`` for 400, 404 and 422.
            RateLimitError: 429 after the retries.
            AuthenticationError: 401 or 403.
            LLMTimeoutError: no answer within ``timeout_s``.
            LLMConnectionError: the server cannot be reached.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str: pass [text]")
        if not texts:
            return []
        size = self.batch_size
        batches = [texts[start : start + size] for start in range(0, len(texts), size)]
        if len(batches) == 1:
            return await self._embed_batch(batches[0])
        gate = asyncio.Semaphore(_CONCURRENT_BATCHES)

        async def embed_batch(batch: Sequence[str]) -> list[list[float]]:
            async with gate:
                return await self._embed_batch(batch)

        tasks = [asyncio.create_task(embed_batch(batch)) for batch in batches]
        try:
            results = await asyncio.gather(*tasks)
        finally:
            # On a failure (or cancellation) the other batches are useless: stop and await them.
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return [vector for result in results for vector in result]

    async def _embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        body = build_embeddings_request(self.model, texts, dimensions=self._dimensions_field)
        payload = await self._http.request_json("POST", "embeddings", json_body=body)
        try:
            vectors = parse_embeddings(payload, len(texts))
        except MalformedEmbeddingsError as exc:
            raise self._malformed(str(exc), payload) from None
        known = self._known_dimension()
        if known is None:
            self.dimension = len(vectors[0])
        elif len(vectors[0]) != known:
            raise self._malformed(
                f"its vectors have {len(vectors[0])} dimensions, expected {known}"
                + self._mismatch_hint(),
                payload,
            )
        return vectors

    def _mismatch_hint(self) -> str:
        if not self._dimension_given or self._dimensions_field is not None:
            return ""
        return (
            " (the dimension= given, which was not sent: pass the model's own size, or "
            "send_dimensions=True if the server can shorten its vectors)"
        )

    def _known_dimension(self) -> int | None:
        known: object = vars(self).get("dimension")
        return known if isinstance(known, int) else None

    def _malformed(self, why: str, payload: Any) -> ProviderError:
        return ProviderError(
            self._http.redact(
                f"{self._http.label} returned a malformed embeddings reply for model "
                f"{self.model!r}: {why}"
            ),
            provider=self.provider,
            status=200,
            body=self._http.redact(json.dumps(payload)[:4000]),
        )


def _auth_hint(*, key: bool, headers: bool) -> str:
    """How to fix a 401/403, said in its message."""
    if key:
        return f"check the key in {API_KEY_VARIABLE} or the api_key argument"
    if headers:
        return "check the credentials passed with headers=, or pass api_key="
    return "no API key was sent: pass api_key="
