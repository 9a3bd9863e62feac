"""OpenAIEmbedder against a real llama.cpp server's ``/v1/embeddings``, and against respx-mocked
replies (shaped like OpenAI's API reference) for batching, retries, errors and secrets."""

from __future__ import annotations

import asyncio
import json
import math
import pickle
import socket
from typing import Any

import httpx
import pytest
import respx
import structlog.testing

from agentic_core import Embedder
from agentic_llm import (
    AuthenticationError,
    InvalidRequestError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    OpenAIEmbedder,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
)
from agentic_llm._openai._embedding_mapping import (
    MalformedEmbeddingsError,
    build_embeddings_request,
    parse_embeddings,
)

BASE = "http://embed.test/v1"
URL = f"{BASE}/embeddings"
OPENAI_URL = "https://api.openai.com/v1/embeddings"
KEY = "sk-embed-SUPERSECRET-123"
PROXY_TOKEN = "proxy-SUPERSECRET-456"  # noqa: S105 - a test value
SMOLLM2_HIDDEN_SIZE = 576
"""The width of SmolLM2-135M's hidden states: its vectors' dimension."""


def reply(vectors: list[Any], order: list[int] | None = None) -> dict[str, Any]:
    """An OpenAI ``list`` of ``embedding`` objects, listed in ``order`` (default: as given)."""
    indexes = list(range(len(vectors))) if order is None else order
    return {
        "object": "list",
        "data": [{"object": "embedding", "index": i, "embedding": vectors[i]} for i in indexes],
        "model": "m",
        "usage": {"prompt_tokens": 3, "total_tokens": 3},
    }


def sent(route: respx.Route, index: int = -1) -> dict[str, Any]:
    return json.loads(route.calls[index].request.content)


def cosine(a: list[float], b: list[float]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    return dot / math.sqrt(math.fsum(x * x for x in a) * math.fsum(y * y for y in b))


def shown_by(embedder: OpenAIEmbedder) -> str:
    """All an embedder shows: str, repr and attributes, its and its HTTP layer's."""
    http = embedder._http
    return "\n".join([str(embedder), repr(embedder), repr(vars(embedder)), repr(vars(http))])


def everything_shown(error: BaseException) -> str:
    return "\n".join([str(error), repr(error), repr(vars(error)), repr(error.__cause__)])


# --- a real llama.cpp server -------------------------------------------------------------------
# SmolLM2 is a chat model served by llama.cpp's server in embedding mode with mean pooling: real
# vectors (mean-pooled hidden states, L2-normalised) from a real server, one per text, for every
# text of a request (see the fixture).


@pytest.mark.slow
async def test_a_real_server_gives_one_vector_of_its_dimension_per_text(
    llama_embedding_server: str,
) -> None:
    texts = ["The cat sat on the mat.", "Stock prices fell.", "Hi", "A", "Paris is in France."]
    async with OpenAIEmbedder("smollm2", base_url=llama_embedding_server, batch_size=2) as embedder:
        dimension = await embedder.probe()
        vectors = await embedder.embed(texts)  # three requests, in flight together

    assert dimension == embedder.dimension == SMOLLM2_HIDDEN_SIZE
    assert [len(vector) for vector in vectors] == [dimension] * len(texts)
    for vector in vectors:  # llama.cpp's server L2-normalises them
        assert math.fsum(x * x for x in vector) == pytest.approx(1.0, abs=1e-3)
    assert isinstance(embedder, Embedder)


@pytest.mark.slow
async def test_a_real_server_keeps_the_order_and_repeats_itself(
    llama_embedding_server: str,
) -> None:
    texts = ["The cat sat on the mat.", "Stock prices fell.", "Hello there!"]
    async with OpenAIEmbedder("smollm2", base_url=llama_embedding_server, batch_size=4) as embedder:
        together = await embedder.embed([*texts, texts[0]])  # one request
        one_by_one = [(await embedder.embed([text]))[0] for text in texts]

    for vector, alone in zip(together, one_by_one, strict=False):
        assert vector == pytest.approx(alone, rel=1e-4, abs=1e-4)
    assert together[3] == pytest.approx(together[0], rel=1e-4, abs=1e-4)
    assert cosine(together[0], together[1]) < 0.99  # different texts, different vectors


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "related", "unrelated"),
    [
        ("The cat sat on the mat.", "A cat is sitting on a mat.", "Stock prices fell sharply."),
        ("Paris is the capital of France.", "France's capital is Paris.", "Bananas are yellow."),
        ("I love eating pizza.", "Pizza is my favourite food.", "The train leaves at noon."),
    ],
)  # fmt: skip
async def test_a_real_server_puts_related_texts_closer_than_unrelated_ones(
    llama_embedding_server: str, text: str, related: str, unrelated: str
) -> None:
    # Measured on SmolLM2-135M: the related pair is ahead by 0.13 to 0.2 in cosine similarity
    # (a tiny chat model, so only clear-cut pairs like these are asked about).
    async with OpenAIEmbedder("smollm2", base_url=llama_embedding_server) as embedder:
        anchor, near, far = await embedder.embed([text, related, unrelated])

    assert cosine(anchor, near) > cosine(anchor, far)


# --- batching and order ------------------------------------------------------------------------


async def test_batches_keep_the_order_of_the_texts_whatever_order_items_come_in(
    respx_mock: respx.MockRouter,
) -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        vectors = [[float(len(text)), 1.0] for text in texts]
        return httpx.Response(200, json=reply(vectors, order=list(reversed(range(len(texts))))))

    route = respx_mock.post(URL).mock(side_effect=answer)
    async with OpenAIEmbedder("m", base_url=BASE, batch_size=2) as embedder:
        vectors = await embedder.embed(["a", "bb", "ccc", "dddd", "eeeee"])

    assert [vector[0] for vector in vectors] == [1, 2, 3, 4, 5]
    batches = sorted(sent(route, i)["input"] for i in range(3))
    assert batches == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    assert sent(route, 0) == {"model": "m", "input": ["a", "bb"], "encoding_format": "float"}


async def test_batches_are_sent_together_but_at_most_four_at_once(
    respx_mock: respx.MockRouter,
) -> None:
    in_flight = 0
    most = 0
    four_started = asyncio.Event()

    async def answer(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        if in_flight == 4:
            four_started.set()
        # Only a safety net: when batches went one at a time, four never start together.
        await asyncio.wait_for(four_started.wait(), 10)
        in_flight -= 1
        return httpx.Response(200, json=reply([[1.0]]))

    route = respx_mock.post(URL).mock(side_effect=answer)
    async with OpenAIEmbedder("m", base_url=BASE, batch_size=1) as embedder:
        vectors = await embedder.embed([str(i) for i in range(10)])

    assert vectors == [[1.0]] * 10
    assert route.call_count == 10
    assert most == 4


async def test_a_failed_batch_cancels_the_others(respx_mock: respx.MockRouter) -> None:
    cancelled = 0

    async def answer(request: httpx.Request) -> httpx.Response:
        nonlocal cancelled
        if json.loads(request.content)["input"] == ["bad"]:
            return httpx.Response(401, json={"error": {"message": "no"}})
        try:
            # Hangs until cancelled (the timeout is only a safety net, for a broken embedder).
            await asyncio.wait_for(asyncio.Event().wait(), 10)
        except asyncio.CancelledError:
            cancelled += 1
            raise
        raise AssertionError("unreachable")

    respx_mock.post(URL).mock(side_effect=answer)
    async with OpenAIEmbedder("m", base_url=BASE, batch_size=1) as embedder:
        with pytest.raises(AuthenticationError):
            await embedder.embed(["a", "b", "c", "bad"])

    assert cancelled == 3


async def test_no_texts_is_no_vectors_and_no_request(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL)
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        assert await embedder.embed([]) == []
    assert route.call_count == 0


async def test_one_str_instead_of_a_list_is_refused(respx_mock: respx.MockRouter) -> None:
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        with pytest.raises(TypeError, match=r"not one str: pass \[text\]"):
            await embedder.embed("hello")


async def test_token_vectors_are_averaged_into_one_vector(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).respond(200, json=reply([[[1.0, 0.0], [3.0, 4.0]], [[2.0, 2.0]]]))
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        assert await embedder.embed(["two tokens", "one"]) == [[2.0, 2.0], [2.0, 2.0]]


# --- retries and errors ------------------------------------------------------------------------


async def test_a_429_waits_what_retry_after_says_then_succeeds(
    respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(429, headers={"Retry-After": "2"}, json={"error": {"message": "slow"}}),
            httpx.Response(200, json=reply([[0.5, 0.5]])),
        ]
    )
    async with OpenAIEmbedder("m", base_url=BASE, api_key=KEY) as embedder:
        assert await embedder.embed(["x"]) == [[0.5, 0.5]]
    assert route.call_count == 2
    assert backoff_waits == [2.0]


async def test_a_429_after_the_retries_is_a_rate_limit_error(respx_mock: respx.MockRouter) -> None:
    slow = {"error": {"message": "slow"}}
    respx_mock.post(URL).respond(429, headers={"Retry-After": "7"}, json=slow)
    async with OpenAIEmbedder("m", base_url=BASE, max_retries=1) as embedder:
        with pytest.raises(RateLimitError, match="slow") as caught:
            await embedder.embed(["x"])
    assert caught.value.retry_after_s == 7.0


async def test_a_500_is_retried_then_succeeds(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(500, json={"error": {"message": "oops"}}),
            httpx.Response(200, json=reply([[0.25]])),
        ]
    )
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        assert await embedder.embed(["x"]) == [[0.25]]
    assert route.call_count == 2


async def test_a_500_after_the_retries_is_a_provider_error(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(503, json={"error": {"message": "overloaded"}})
    async with OpenAIEmbedder("m", base_url=BASE, max_retries=2) as embedder:
        with pytest.raises(ProviderError, match=r"HTTP 503.*overloaded") as caught:
            await embedder.embed(["x"])
    assert caught.value.status == 503
    assert route.call_count == 3


async def test_a_refused_key_is_an_authentication_error_tried_once(
    respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL).respond(401, json={"error": {"message": "bad key"}})
    async with OpenAIEmbedder("m", base_url=BASE, api_key=KEY) as embedder:
        with pytest.raises(AuthenticationError, match=r"HTTP 401.*bad key.*api_key"):
            await embedder.embed(["x"])
    assert route.call_count == 1
    assert backoff_waits == []


async def test_a_bad_request_is_an_invalid_request_error(respx_mock: respx.MockRouter) -> None:
    message = "This model does not support specifying dimensions."
    respx_mock.post(URL).respond(400, json={"error": {"message": message}})
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        with pytest.raises(InvalidRequestError, match="does not support specifying dimensions"):
            await embedder.embed(["x"])


async def test_a_read_timeout_is_an_llm_timeout_error_and_not_retried(
    respx_mock: respx.MockRouter,
) -> None:
    route = respx_mock.post(URL).mock(side_effect=httpx.ReadTimeout("timed out"))
    async with OpenAIEmbedder("m", base_url=BASE, timeout_s=5) as embedder:
        with pytest.raises(LLMTimeoutError, match="timed out after 5 s waiting for the answer"):
            await embedder.embed(["x"])
    assert route.call_count == 1


async def test_a_connect_timeout_is_retried_then_an_llm_timeout_error(
    respx_mock: respx.MockRouter, backoff_waits: list[float]
) -> None:
    route = respx_mock.post(URL).mock(side_effect=httpx.ConnectTimeout("timed out"))
    async with OpenAIEmbedder("m", base_url=BASE, max_retries=2) as embedder:
        with pytest.raises(LLMTimeoutError, match="connecting"):
            await embedder.embed(["x"])
    assert route.call_count == 3
    assert len(backoff_waits) == 2


async def test_a_real_server_that_never_answers_times_out() -> None:
    # No mock: a loopback socket that accepts and then says nothing, so httpx's own timeout works.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        base_url = f"http://127.0.0.1:{port}/v1"
        async with OpenAIEmbedder("m", base_url=base_url, timeout_s=0.2) as embedder:
            with pytest.raises(LLMTimeoutError, match=r"timed out after 0\.2 s"):
                await embedder.embed(["x"])


async def test_an_unreachable_server_is_a_connection_error(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).mock(side_effect=httpx.ConnectError("Connection refused"))
    async with OpenAIEmbedder("m", base_url=BASE, max_retries=1) as embedder:
        with pytest.raises(LLMConnectionError, match=r"cannot reach openai.*Connection refused"):
            await embedder.embed(["x"])


async def test_a_closed_embedder_says_so(respx_mock: respx.MockRouter) -> None:
    embedder = OpenAIEmbedder("m", base_url=BASE)
    await embedder.aclose()
    with pytest.raises(LLMError, match="closed"):
        await embedder.embed(["x"])


# --- malformed replies -------------------------------------------------------------------------


def pair(first: Any, second: Any, *, indexes: tuple[Any, Any] = (0, 1)) -> dict[str, Any]:
    """A ``data`` list of two items with these embeddings (and indexes)."""
    return {
        "data": [
            {"index": indexes[0], "embedding": first},
            {"index": indexes[1], "embedding": second},
        ]
    }


MALFORMED = {
    "no-data": ({"nothing": []}, "it has no 'data' list"),
    "error-object": (
        {"error": {"message": "model not loaded"}},
        "it has no 'data' list; it says: model not loaded",
    ),
    "not-an-object": ([1, 2], "it has no 'data' list"),
    "count": (reply([[1.0, 2.0]]), "1 embeddings for 2 texts"),
    "item-not-an-object": ({"data": ["a", "b"]}, "item 0 of 'data' is not an object"),
    "index-out-of-range": (
        pair([1], [1], indexes=(0, 2)),
        r"item 1 has index 2, not one of 0\.\.1",
    ),
    "index-not-an-int": (pair([1], [1], indexes=("0", 1)), "item 0 has index '0'"),
    "repeated-index": (pair([1], [1], indexes=(0, 0)), "index 0 appears twice"),
    "base64": (pair("AACAPw==", [1]), "embedding 0 is not a non-empty list"),
    "empty": (pair([], [1]), "embedding 0 is not a non-empty list"),
    "strings": (pair([1], ["1"]), "embedding 1 holds str values"),
    "booleans": (pair([True], [1]), "embedding 0 holds bool values"),
    # Python's json reads NaN (httpx refuses to write it: the reply is raw text).
    "nan": (
        '{"data": [{"index": 0, "embedding": [1]}, {"index": 1, "embedding": [NaN]}]}',
        "embedding 1 holds nan",
    ),
    "mixed-dimensions": (pair([1, 2], [1]), "embedding 1 has 1 dimensions, embedding 0 has 2"),
    "ragged-tokens": (pair([[1, 2], [1]], [1]), "embedding 0 has token vectors of different sizes"),
}


@pytest.mark.parametrize(("body", "problem"), MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_malformed_reply_is_a_provider_error_naming_the_model_and_the_problem(
    respx_mock: respx.MockRouter, body: Any, problem: str
) -> None:
    if isinstance(body, str):
        respx_mock.post(URL).respond(200, text=body)
    else:
        respx_mock.post(URL).respond(200, json=body)
    async with OpenAIEmbedder("my-model", base_url=BASE) as embedder:
        with pytest.raises(ProviderError, match=f"reply for model 'my-model': {problem}") as caught:
            await embedder.embed(["a", "b"])
    assert caught.value.status == 200
    assert caught.value.body  # the reply, for whoever debugs the server


async def test_a_body_that_is_not_json_is_a_provider_error(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).respond(200, text="<html>proxy login</html>")
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        with pytest.raises(ProviderError, match="not JSON"):
            await embedder.embed(["x"])


async def test_vectors_of_another_size_than_the_given_dimension_are_refused(
    respx_mock: respx.MockRouter,
) -> None:
    respx_mock.post(URL).respond(200, json=reply([[1.0, 2.0, 3.0]]))
    async with OpenAIEmbedder("m", base_url=BASE, dimension=2) as embedder:
        with pytest.raises(
            ProviderError, match=r"'m': its vectors have 3 dimensions, expected 2 .*send_dimensions"
        ):
            await embedder.embed(["x"])


async def test_a_later_reply_of_another_size_than_the_first_is_refused(
    respx_mock: respx.MockRouter,
) -> None:
    respx_mock.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=reply([[1.0, 2.0]])),
            httpx.Response(200, json=reply([[1.0, 2.0, 3.0]])),
        ]
    )
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        await embedder.embed(["x"])
        with pytest.raises(ProviderError, match=r"3 dimensions, expected 2$"):
            await embedder.embed(["y"])
        assert embedder.dimension == 2


# --- dimension and the `dimensions` field ------------------------------------------------------


def test_the_dimension_of_openais_models_is_known_from_the_start() -> None:
    assert OpenAIEmbedder("text-embedding-3-small", api_key=KEY).dimension == 1536
    assert OpenAIEmbedder("text-embedding-3-large", api_key=KEY).dimension == 3072
    assert OpenAIEmbedder("text-embedding-3-large", api_key=KEY, dimension=256).dimension == 256


def test_an_unknown_dimension_says_how_to_learn_it() -> None:
    embedder = OpenAIEmbedder("text-embedding-3-small", base_url=BASE)  # not OpenAI's server

    with pytest.raises(AttributeError, match=r"not known yet: pass dimension= .*probe\(\)"):
        _ = embedder.dimension
    assert not isinstance(embedder, Embedder)  # no `dimension` yet: not an Embedder yet
    typo = "dimensoin"
    with pytest.raises(AttributeError, match="no attribute 'dimensoin'"):
        getattr(embedder, typo)


async def test_probe_learns_the_dimension(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=reply([[0.0] * 7]))
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        assert await embedder.probe() == 7
    assert embedder.dimension == 7
    assert isinstance(embedder, Embedder)
    assert route.call_count == 1


def test_an_openai_embedder_is_an_embedder_for_the_type_checker() -> None:
    def dimension_of(embedder: Embedder) -> int:
        return embedder.dimension

    assert dimension_of(OpenAIEmbedder("m", base_url=BASE, dimension=3)) == 3


async def test_openai_is_asked_for_the_given_dimension(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(OPENAI_URL).respond(200, json=reply([[0.0] * 256]))
    async with OpenAIEmbedder("text-embedding-3-large", api_key=KEY, dimension=256) as embedder:
        await embedder.embed(["x"])
    assert sent(route)["dimensions"] == 256


@pytest.mark.parametrize(
    ("model", "base_url", "dimension", "send_dimensions", "expected"),
    [
        ("text-embedding-3-small", None, None, None, None),
        ("text-embedding-ada-002", None, 1536, None, None),  # OpenAI refuses it for ada-002
        ("nomic-embed-text", BASE, 768, None, None),  # other servers: only when asked
        ("nomic-embed-text", BASE, 256, True, 256),
        ("text-embedding-3-small", None, 1536, False, None),
    ],
    ids=["no-dimension", "ada-002", "other-server", "asked-for", "turned-off"],
)
async def test_the_dimensions_field_is_sent_only_where_it_is_understood(
    respx_mock: respx.MockRouter,
    model: str,
    base_url: str | None,
    dimension: int | None,
    send_dimensions: bool | None,
    expected: int | None,
) -> None:
    size = dimension or 1536
    route = respx_mock.post(f"{base_url or 'https://api.openai.com/v1'}/embeddings").respond(
        200, json=reply([[0.0] * size])
    )
    async with OpenAIEmbedder(
        model,
        api_key=KEY,
        base_url=base_url,
        dimension=dimension,
        send_dimensions=send_dimensions,
    ) as embedder:
        await embedder.embed(["x"])
    assert sent(route).get("dimensions") == expected


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"batch_size": 0}, "batch_size must be >= 1"),
        ({"dimension": 0}, "dimension must be >= 1"),
        ({"send_dimensions": True}, "send_dimensions=True needs .* dimension="),
        ({"timeout_s": 0}, "timeout_s must be > 0"),
        ({"max_retries": -1}, "max_retries must be >= 0"),
    ],
)
def test_bad_settings_are_refused(arguments: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        OpenAIEmbedder("m", base_url=BASE, **arguments)


# --- keys and headers --------------------------------------------------------------------------


async def test_openai_gets_the_key_from_the_environment(
    respx_mock: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    route = respx_mock.post(OPENAI_URL).respond(200, json=reply([[0.0] * 1536]))
    async with OpenAIEmbedder("text-embedding-3-small") as embedder:
        await embedder.embed(["x"])
    assert route.calls[0].request.headers["authorization"] == f"Bearer {KEY}"


async def test_another_server_never_gets_the_environments_key(
    respx_mock: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    route = respx_mock.post(URL).respond(200, json=reply([[1.0]]))
    async with OpenAIEmbedder("m", base_url=BASE) as embedder:
        await embedder.embed(["x"])
    assert "authorization" not in route.calls[0].request.headers


async def test_headers_go_with_every_request(respx_mock: respx.MockRouter) -> None:
    route = respx_mock.post(URL).respond(200, json=reply([[1.0]]))
    headers = {"X-Proxy-Auth": "proxy-token-1"}
    async with OpenAIEmbedder("m", base_url=BASE, api_key=KEY, headers=headers) as embedder:
        await embedder.embed(["x"])
    assert route.calls[0].request.headers["x-proxy-auth"] == "proxy-token-1"
    assert route.calls[0].request.headers["authorization"] == f"Bearer {KEY}"


def test_openai_without_a_key_is_an_authentication_error() -> None:
    with pytest.raises(AuthenticationError, match="OPENAI_API_KEY"):
        OpenAIEmbedder("text-embedding-3-small")


async def test_the_embedder_never_shows_its_key_or_headers() -> None:
    headers = {"X-Proxy-Auth": PROXY_TOKEN}
    embedder = OpenAIEmbedder("text-embedding-3-small", api_key=KEY, headers=headers)
    pool = await embedder._http._client()  # this loop's connection pool

    assert "SUPERSECRET" not in shown_by(embedder)
    assert repr(embedder) == (
        "OpenAIEmbedder(model='text-embedding-3-small', base_url='https://api.openai.com/v1')"
    )
    assert "SUPERSECRET" not in repr(pool.headers)
    with pytest.raises(TypeError):
        pickle.dumps(embedder)
    await embedder.aclose()


async def test_a_proxy_refusing_the_headers_says_to_check_them_and_hides_them(
    respx_mock: respx.MockRouter,
) -> None:
    respx_mock.post(URL).respond(403, json={"error": {"message": f"bad token {PROXY_TOKEN}"}})
    headers = {"X-Proxy-Auth": PROXY_TOKEN}
    async with OpenAIEmbedder("m", base_url=BASE, headers=headers) as embedder:
        with pytest.raises(
            PermissionDeniedError, match="credentials passed with headers="
        ) as caught:
            await embedder.embed(["x"])

    assert "SUPERSECRET" not in everything_shown(caught.value) + caught.value.body


@pytest.mark.parametrize("status", [400, 401, 429, 500])
async def test_errors_and_logs_never_show_the_key(
    respx_mock: respx.MockRouter, status: int
) -> None:
    message = f"Incorrect API key provided: {KEY}"
    respx_mock.post(URL).respond(status, json={"error": {"message": message}})
    async with OpenAIEmbedder("m", base_url=BASE, api_key=KEY, max_retries=1) as embedder:
        with structlog.testing.capture_logs() as logs, pytest.raises(LLMError) as caught:
            await embedder.embed(["x"])

    assert logs
    assert "SUPERSECRET" not in everything_shown(caught.value) + repr(logs)
    assert "Incorrect API key provided: **********" in str(caught.value)


async def test_a_malformed_reply_never_shows_the_key(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).respond(200, json={"error": {"message": f"bad key Bearer {KEY}"}})
    async with OpenAIEmbedder("m", base_url=BASE, api_key=KEY) as embedder:
        with pytest.raises(ProviderError, match="malformed") as caught:
            await embedder.embed(["x"])

    assert "SUPERSECRET" not in everything_shown(caught.value)
    assert "SUPERSECRET" not in caught.value.body


async def test_a_failed_connection_never_shows_the_key(respx_mock: respx.MockRouter) -> None:
    respx_mock.post(URL).mock(side_effect=httpx.ConnectError(f"refused for Bearer {KEY}"))
    async with OpenAIEmbedder("m", base_url=BASE, api_key=KEY, max_retries=1) as embedder:
        with structlog.testing.capture_logs() as logs, pytest.raises(LLMConnectionError) as caught:
            await embedder.embed(["x"])

    assert "SUPERSECRET" not in str(caught.value) + repr(logs)


# --- the wire format, pure ---------------------------------------------------------------------


def test_the_request_asks_for_floats_and_dimensions_only_when_given() -> None:
    assert build_embeddings_request("m", ("a", "b"), dimensions=None) == {
        "model": "m",
        "input": ["a", "b"],
        "encoding_format": "float",
    }
    assert build_embeddings_request("m", ["a"], dimensions=64)["dimensions"] == 64


def test_items_without_an_index_count_by_their_position() -> None:
    payload = {"data": [{"embedding": [1, 2]}, {"embedding": [3, 4]}]}
    assert parse_embeddings(payload, 2) == [[1.0, 2.0], [3.0, 4.0]]


def test_integers_in_a_vector_become_floats() -> None:
    [vector] = parse_embeddings(reply([[1, 0]]), 1)
    assert vector == [1.0, 0.0]
    assert all(type(value) is float for value in vector)


def test_infinity_is_refused() -> None:
    with pytest.raises(MalformedEmbeddingsError, match="embedding 0 holds inf"):
        parse_embeddings(reply([[math.inf]]), 1)
