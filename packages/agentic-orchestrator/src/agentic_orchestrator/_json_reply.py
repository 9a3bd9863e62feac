"""Reading a JSON object out of a model's reply, whatever prose or fences surround it."""

from __future__ import annotations

import json
from typing import Any, cast

_DECODER = json.JSONDecoder()


def last_json_object(text: str) -> dict[str, Any] | None:
    """The last complete top-level JSON object in ``text`` (fenced or not), else None."""
    found: dict[str, Any] | None = None
    index = text.find("{")
    while index != -1:
        try:
            value, end = _DECODER.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            found = value  # pyright: ignore[reportUnknownVariableType]
        index = text.find("{", end)
    return found


def answer_of(value: Any) -> Any:
    """``{"answer": x, "reason": ...}`` -> x (the Magentic ledger shape); anything else as is."""
    if isinstance(value, dict) and "answer" in value:
        return cast("dict[str, Any]", value)["answer"]
    return cast("Any", value)


def as_bool(value: Any) -> bool | None:
    """A JSON answer read as a boolean ("true"/"yes" strings too); None when it is not one."""
    value = answer_of(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in {"true", "yes"}:
            return True
        if lowered in {"false", "no"}:
            return False
    return None
