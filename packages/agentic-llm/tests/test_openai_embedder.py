"""OpenAIEmbedder against a real llama.cpp server's ``/v1/embeddings``, and against respx-mocked
replies for the failures (rate limits, server errors, auth, malformed bodies)."""

from __future__ import annotations

import json
import math

import httpx
import pytest
import respx

from agentic_core import Embedder
from agentic_llm import AuthenticationError, OpenAIEmbedder, ProviderError

BASE = "http://embed.test/v1"
URL = f"{BASE}/embeddings"
KEY = "sk-embed-secret-123"


def reply(vectors: list[list[float]], order: list[int] | None = None) -> dict[str, object]:
    indexes = order or list(range(len(vectors)))
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": vectors[i]} for i in indexes],
        "model": "m",
        "usage": {"prompt_tokens": 3, "total_tokens": 3},
    }


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.mark.slow
async def test_a_real_llama_cpp_server_embeds_texts(llama_embedding_server: str) -> None:
    async with OpenAIEmbedder("smollm2", base_url=llama_embedding_server, batch_size=2) as embedder:
        dimension = await embedder.probe()
        texts = ["The cat sat on the mat.", "A cat is sitting on a mat.", "Stock prices fell."]
        vectors = await embedder.embed(texts)
        again = await embedder.embed(texts[:1])

    assert isinstance(embedder, Embedder)
    assert dimension == embedder.dimension > 0
    assert [len(v) for v in vectors] == [dimension] * 3
    assert again[0] == pytest.approx(vectors[0], rel=1e-4, abs=1e-5)
    # SmolLM2 is a chat model, not an embedding model: its mean-pooled token vectors are real
    # but carry little meaning, so only their shape and stability are checked here.
    assert cosine(vectors[0], vectors[1]) < 0.9999


async def test_batches_keep_the_order_of_the_texts(respx_mock: respx.MockRouter) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        vectors = [[float(len(t)), 1.0] for t in texts]
        return httpx.Response(200, json=reply(vectors, order=list(reversed(range(len(texts))))))

    route = respx_mock.post(URL).mock(side_effect=answer)
    embedder = OpenAIEmbedder("m", base_url=BASE, batch_size=2)

    vectors = await embedder.embed(["a", "bb", "ccc", "dddd", "eeeee"])

    assert [v[0] for v in vectors] == [1, 2, 3, 4, 5]
    assert route.call_count == 3
    body = json.loads(route.calls[0].request.content)
    assert body == {"model": "m", "input": ["a", "bb"], "encoding_format": "float"}
    assert embedder.dimension == 2
    assert await embedder.embed([]) == []
    assert route.call_count == 3
    await embedder.aclose()


async def test_429_and_500_are_retried(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "0"}, json={"error": {"message": "slow"}}),
            httpx.Response(500, json={"error": {"message": "oops"}}),
            httpx.Response(200, json=reply([[0.5, 0.5]])),
        ]
    )
    embedder = OpenAIEmbedder("m", base_url=BASE, api_key=KEY, max_retries=3)

    assert await embedder.embed(["x"]) == [[0.5, 0.5]]
    await embedder.aclose()


async def test_a_refused_key_is_an_authentication_error_without_the_key(
    respx_mock: respx.MockRouter,
) -> None:
    respx_mock.post(URL).respond(401, json={"error": {"message": f"bad key {KEY}"}})
    embedder = OpenAIEmbedder("m", base_url=BASE, api_key=KEY)

    with pytest.raises(AuthenticationError) as info:
        await embedder.embed(["x"])

    assert KEY not in str(info.value)
    assert KEY not in repr(embedder)
    await embedder.aclose()


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"nothing": []}, "no 'data' list"),
        (reply([[1.0, 2.0]]), "1 embeddings for 2 texts"),
        ({"data": [{"index": 0, "embedding": "abc"}, {"index": 1, "embedding": [1]}]},
         "embedding 0"),
        ({"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 2]}]},
         "repeated"),
        ({"data": [{"index": 0, "embedding": [1, 2]}, {"index": 1, "embedding": [1]}]},
         "1 dimensions"),
    ],
    ids=["no-data", "count", "not-numbers", "repeated-index", "dimension"],
)  # fmt: skip
async def test_a_malformed_reply_names_the_model_and_the_problem(
    respx_mock: respx.MockRouter, body: dict[str, object], problem: str
) -> None:
    respx_mock.post(URL).respond(200, json=body)
    embedder = OpenAIEmbedder("my-model", base_url=BASE)

    with pytest.raises(ProviderError, match=f"'my-model'.*{problem}"):
        await embedder.embed(["a", "b"])
    await embedder.aclose()


def test_the_dimension_is_known_for_openai_models_or_asked_for() -> None:
    assert OpenAIEmbedder("text-embedding-3-small", api_key=KEY).dimension == 1536
    assert OpenAIEmbedder("text-embedding-3-large", api_key=KEY, dimension=256).dimension == 256
    with pytest.raises(ValueError, match="probe"):
        _ = OpenAIEmbedder("local-model", base_url=BASE).dimension


async def test_openai_gets_the_dimensions_field_when_one_is_asked_for(
    respx_mock: respx.MockRouter,
) -> None:
    route = respx_mock.post("https://api.openai.com/v1/embeddings").respond(
        200, json=reply([[0.0] * 256])
    )
    embedder = OpenAIEmbedder("text-embedding-3-large", api_key=KEY, dimension=256)

    await embedder.embed(["x"])

    assert json.loads(route.calls[0].request.content)["dimensions"] == 256
    assert route.calls[0].request.headers["authorization"] == f"Bearer {KEY}"
    await embedder.aclose()
