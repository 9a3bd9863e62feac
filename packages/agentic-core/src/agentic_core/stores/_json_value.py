"""Checking and encoding the JSON-able values a ``StateStore`` holds."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, cast

from agentic_core._errors import SerializationError

_SCALARS = (str, int, bool, type(None))


def encode_json_value(key: str, value: Any) -> str:
    """``value`` as compact JSON text, or ``SerializationError`` naming ``key`` and the bad part.

    JSON-able means: ``None``, ``bool``, ``int``, finite ``float``, ``str``, lists (tuples are
    accepted and come back as lists) and dicts with ``str`` keys, nested to any depth. Anything
    else (sets, bytes, datetimes, models, ``nan``, dicts with non-``str`` keys, cycles) is refused
    rather than silently changed, so a value always reads back equal to what was written.
    """
    problem = _find_non_json_part(value, "value", depth=0)
    if problem is not None:
        raise SerializationError(
            f"cannot store key {key!r}: {problem} is not JSON-able; store only None, bool, int, "
            f"finite float, str, list and dict with str keys (encode other types first)"
        )
    try:
        return json.dumps(value, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:  # pragma: no cover - checked above
        raise SerializationError(f"cannot store key {key!r}: {exc}") from exc


_MAX_DEPTH = 500


def _find_non_json_part(value: object, where: str, *, depth: int) -> str | None:
    """A description of the first part of ``value`` that is not JSON-able, or None."""
    if depth > _MAX_DEPTH:
        return f"{where} (nested deeper than {_MAX_DEPTH} levels, or a cycle)"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} ({value!r})"
    if isinstance(value, _SCALARS):
        return None
    if isinstance(value, list | tuple):
        items = cast("Sequence[object]", value)
        for index, item in enumerate(items):
            problem = _find_non_json_part(item, f"{where}[{index}]", depth=depth + 1)
            if problem is not None:
                return problem
        return None
    if isinstance(value, dict):
        mapping = cast("dict[object, object]", value)
        for item_key, item in mapping.items():
            if not isinstance(item_key, str):
                return f"{where} key {item_key!r} (a {type(item_key).__name__}, not str)"
            problem = _find_non_json_part(item, f"{where}[{item_key!r}]", depth=depth + 1)
            if problem is not None:
                return problem
        return None
    return f"{where} (a {type(value).__name__})"
