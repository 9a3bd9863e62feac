"""The argument checks every ``VectorStore`` applies, so each back-end fails alike, and first."""

from __future__ import annotations

import math
from collections.abc import Sequence

from agentic_core._errors import SerializationError, VectorStoreError
from agentic_core.protocols._vector import DISTANCES, Distance, VectorPoint
from agentic_core.stores._json_value import encode_json_value

__all__ = ["check_distance", "check_vector", "check_vector_points"]


def check_distance(distance: str, dimension: int) -> Distance:
    """``distance`` as a ``Distance``; ``ValueError`` for an unknown one or a dimension below 1."""
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension < 1:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError(f"dimension must be an int >= 1, got {dimension!r}")
    if distance not in DISTANCES:
        raise ValueError(f"distance must be one of {', '.join(DISTANCES)}; got {distance!r}")
    return distance


def check_vector(
    collection: str, dimension: int, vector: Sequence[float], *, point_id: str | None = None
) -> list[float]:
    """``vector`` as a list of floats, or ``VectorStoreError`` naming the collection and point.

    Raises:
        VectorStoreError: the vector does not have ``dimension`` finite numbers.
    """
    what = "the query vector" if point_id is None else f"point {point_id!r}"
    if len(vector) != dimension:
        raise VectorStoreError(
            f"{what} has {len(vector)} dimensions but collection {collection!r} holds vectors "
            f"of {dimension}; nothing was written"
            if point_id is not None
            else f"{what} has {len(vector)} dimensions but collection {collection!r} holds "
            f"vectors of {dimension}"
        )
    values: list[float] = []
    for number in vector:
        if isinstance(number, bool) or not isinstance(number, int | float):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise VectorStoreError(
                f"{what} of collection {collection!r} holds {number!r}, not a number"
            )
        if not math.isfinite(number):
            raise VectorStoreError(
                f"{what} of collection {collection!r} holds {number!r}: numbers must be finite"
            )
        values.append(float(number))
    return values


def check_vector_points(
    collection: str, dimension: int, points: Sequence[VectorPoint]
) -> list[tuple[VectorPoint, list[float], str]]:
    """Every point checked before anything is written: ``(point, vector, payload JSON)`` each.

    Raises:
        VectorStoreError: a vector has the wrong dimension or a non-finite number.
        SerializationError: a payload is not JSON-able (the message names the point).
    """
    checked: list[tuple[VectorPoint, list[float], str]] = []
    for point in points:
        vector = check_vector(collection, dimension, point.vector, point_id=point.id)
        try:
            payload = encode_json_value(f"{collection}/{point.id}", point.payload)
        except SerializationError as exc:
            raise SerializationError(
                f"the payload of point {point.id!r} in collection {collection!r} is not "
                f"JSON-able: {exc}; nothing was written"
            ) from None
        checked.append((point, vector, payload))
    return checked
