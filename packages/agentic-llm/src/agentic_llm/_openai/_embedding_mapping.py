"""The ``/embeddings`` wire format (pure: no I/O): the request body and reading the reply.

The reply is ``{"data": [{"index": i, "embedding": [...]}, ...], "usage": ...}``: one item per
input text, each saying by ``index`` which text it belongs to (servers may list them in any
order). Anything else is refused with a ``MalformedEmbeddingsError`` that says what was wrong.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, cast

from agentic_llm._http import provider_error_message
from agentic_llm._json import JSONObject, as_object

__all__ = ["MalformedEmbeddingsError", "build_embeddings_request", "parse_embeddings"]


class MalformedEmbeddingsError(ValueError):
    """A reply that is not one vector of numbers per text; the message says what was wrong."""


def build_embeddings_request(
    model: str, texts: Sequence[str], *, dimensions: int | None
) -> JSONObject:
    """The body of ``POST /embeddings``: floats (not base64), ``dimensions`` only when given."""
    body: JSONObject = {"model": model, "input": list(texts), "encoding_format": "float"}
    if dimensions is not None:
        body["dimensions"] = dimensions
    return body


def parse_embeddings(payload: Any, expected: int) -> list[list[float]]:
    """One vector per text, in the texts' order (by each item's ``index``; an item without
    one counts by its position), all of one dimension.

    An item holding one vector per token (llama-cpp-python's server, for a model without a
    pooling layer) becomes the mean of those vectors, as a server's mean pooling would.

    Raises:
        MalformedEmbeddingsError: no ``data`` list, not ``expected`` items, a bad or repeated
            index, an embedding that is not a non-empty list of finite numbers, or vectors of
            different dimensions.
    """
    data = as_object(payload).get("data")
    if not isinstance(data, list):
        raise MalformedEmbeddingsError(f"it has no 'data' list{_said(payload)}")
    items = cast("list[object]", data)
    if len(items) != expected:
        raise MalformedEmbeddingsError(f"{len(items)} embeddings for {expected} texts")
    vectors: list[list[float] | None] = [None] * expected
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            raise MalformedEmbeddingsError(f"item {position} of 'data' is not an object")
        fields = cast("JSONObject", item)
        index = fields.get("index", position)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < expected:
            raise MalformedEmbeddingsError(
                f"item {position} has index {index!r}, not one of 0..{expected - 1}"
            )
        if vectors[index] is not None:
            raise MalformedEmbeddingsError(f"index {index} appears twice")
        vectors[index] = _vector(fields.get("embedding"), index)
    complete = cast("list[list[float]]", vectors)  # `expected` distinct indexes: all filled
    width = len(complete[0])
    for index, vector in enumerate(complete):
        if len(vector) != width:
            raise MalformedEmbeddingsError(
                f"embedding {index} has {len(vector)} dimensions, embedding 0 has {width}"
            )
    return complete


def _vector(embedding: object, index: int) -> list[float]:
    if not isinstance(embedding, list) or not embedding:
        raise MalformedEmbeddingsError(f"embedding {index} is not a non-empty list of numbers")
    values = cast("list[object]", embedding)
    if all(isinstance(token, list) for token in values):
        return _mean_of_token_vectors(cast("list[list[object]]", values), index)
    return _numbers(values, f"embedding {index}")


def _mean_of_token_vectors(tokens: list[list[object]], index: int) -> list[float]:
    rows = [_numbers(token, f"token {t} of embedding {index}") for t, token in enumerate(tokens)]
    width = len(rows[0])
    if any(len(row) != width for row in rows):
        raise MalformedEmbeddingsError(f"embedding {index} has token vectors of different sizes")
    return [math.fsum(column) / len(rows) for column in zip(*rows, strict=True)]


def _numbers(values: list[object], what: str) -> list[float]:
    numbers: list[float] = []
    for value in values:
        # bool is an int subclass: `true` in a vector is a broken reply, not 1.0.
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise MalformedEmbeddingsError(f"{what} holds {type(value).__name__} values")
        if not math.isfinite(value):
            raise MalformedEmbeddingsError(f"{what} holds {value!r}")
        numbers.append(float(value))
    if not numbers:
        raise MalformedEmbeddingsError(f"{what} is empty")
    return numbers


def _said(payload: Any) -> str:
    """What an error object in a 200 reply says (some proxies answer errors that way)."""
    if not as_object(payload).get("error"):
        return ""
    return f"; it says: {provider_error_message(json.dumps(payload)).message[:300]}"
