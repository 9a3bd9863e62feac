"""How stores frame the bytes they write: a two-byte tag, then the body.

The tag tells our values from anyone else's under the same key prefix (a foreign value fails with
an error naming what it starts with instead of being misread) and says what the body is. Kinds in
use: ``J`` JSON text, ``S`` zstd-compressed JSON text (agentic-storage), ``P`` a manifest of a
value stored in parts (agentic-bus).
"""

from __future__ import annotations

from collections.abc import Container

__all__ = ["FRAME_KINDS", "ForeignValueError", "frame_value", "unframe_value"]

_MARK = b"\x00"
FRAME_KINDS: frozenset[bytes] = frozenset({b"J", b"S", b"P"})
"""Every kind a store of this project writes."""


class ForeignValueError(ValueError):
    """Bytes that were not written by an agentic store (no tag, an unknown kind, or a body that
    does not decode)."""


def frame_value(body: bytes, kind: bytes = b"J") -> bytes:
    """``body`` behind the tag of ``kind`` (one of :data:`FRAME_KINDS`)."""
    if kind not in FRAME_KINDS:
        raise ValueError(f"unknown frame kind {kind!r}; expected one of {sorted(FRAME_KINDS)}")
    return _MARK + kind + body


def unframe_value(data: bytes, *, kinds: Container[bytes] = FRAME_KINDS) -> tuple[bytes, bytes]:
    """``(kind, body)`` of framed bytes.

    Raises:
        ForeignValueError: ``data`` has no tag of ours, or one whose kind is not in ``kinds``.
    """
    if data[:1] == _MARK:
        kind = data[1:2]
        if kind in kinds and kind in FRAME_KINDS:
            return kind, data[2:]
    raise ForeignValueError(f"not a value written by agentic (it starts with {data[:24]!r})")
