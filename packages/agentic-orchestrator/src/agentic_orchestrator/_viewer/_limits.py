"""How much of a value the viewer keeps and sends: a run view goes to every open page after
every change, so one huge output or request would be re-sent again and again.

A value (an output's or a request's ``data``) whose JSON is over ``MAX_VALUE_BYTES`` is kept
and shown as a marker instead: ``{"$truncated": true, "bytes": <its JSON size>, "preview":
"<its JSON's first characters>…"}``. The run itself keeps the whole value.
"""

from __future__ import annotations

from typing import Any

from pydantic_core import to_json

__all__ = ["MAX_VALUE_BYTES", "bounded"]

MAX_VALUE_BYTES = 16 * 1024
"""The largest value (as JSON) a run view carries whole."""
PREVIEW_CHARS = 500
"""How much of a truncated value's JSON the marker shows."""


def bounded(data: Any) -> Any:
    """``data`` (JSON-able) itself when its JSON fits ``MAX_VALUE_BYTES``, else the marker."""
    encoded = to_json(data, fallback=str)
    if len(encoded) <= MAX_VALUE_BYTES:
        return data
    preview = encoded[: PREVIEW_CHARS * 4].decode("utf-8", errors="ignore")[:PREVIEW_CHARS]
    return {"$truncated": True, "bytes": len(encoded), "preview": preview + "…"}
