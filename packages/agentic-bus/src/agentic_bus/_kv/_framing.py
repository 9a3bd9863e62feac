"""How a value lies in its KV bucket: a tagged body or a manifest of parts, and its headers.

Pure rules, no I/O; ``_bucket`` and ``_parts`` do the reading and writing.

**Tags.** Every value we write is framed by core's ``frame_value``, so a value another program
left in the bucket is told from ours (``StoredValueError`` naming the key) instead of being
misread: kind ``J`` + the body (inline, ``\\x00J...``), or kind ``P`` + a JSON ``Manifest`` (a
value in parts, ``\\x00P{...}``).

**Parts.** A body over the inline limit is written as immutable part keys
``<key>.part.<write id>.<n>`` (parts of ``DEFAULT_PART_SIZE``), then the manifest (write id,
parts count, size, sha256) under the key itself. A fresh write id per write keeps the parts
immutable: an overwrite writes new parts beside the old ones.

**TTL.** A write with ``ttl_s`` carries the per-message TTL header ``Nats-TTL`` (nats-server
≥ 2.11). The server accepts a Go duration of at least one second (``"1s"``, ``"1500ms"``;
``"999ms"`` is refused with err_code 10165), so shorter TTLs are raised to one second. Parts of a
value with a TTL live a minute longer than its manifest, so a reader never finds the manifest
without its parts.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from typing import Final, cast

from nats.aio.msg import Msg
from nats.js import api
from pydantic import BaseModel, ConfigDict, ValidationError

from agentic_core.stores import ForeignValueError, frame_value, unframe_value

__all__ = [
    "DEFAULT_PART_SIZE",
    "EXPECTED_LAST_HEADER",
    "TTL_HEADER",
    "Manifest",
    "frame_inline",
    "frame_manifest",
    "is_tombstone",
    "manifest_in",
    "message_headers",
    "part_key",
    "part_ttl_header",
    "parts_of_write",
    "ttl_header",
    "unframe",
]

DEFAULT_PART_SIZE: Final = 512 * 1024
"""Bytes per part, and the default inline limit of a value."""
TTL_HEADER: Final = "Nats-TTL"
EXPECTED_LAST_HEADER: Final = "Nats-Expected-Last-Subject-Sequence"

_INLINE: Final = b"J"
_PARTS: Final = b"P"
_KINDS: Final = frozenset({_INLINE, _PARTS})
_KV_OPERATION: Final = "KV-Operation"
_MIN_TTL_MS: Final = 1000
_PART_TTL_GRACE_S: Final = 60.0


class Manifest(BaseModel):
    """Where a value in parts is: ``<key>.part.<id>.<0..parts-1>``, with its size and sha256."""

    model_config = ConfigDict(frozen=True)

    v: int = 1
    id: str
    parts: int
    size: int
    sha256: str


def frame_inline(body: bytes) -> bytes:
    """``body`` as a stored value of its own."""
    return frame_value(body, _INLINE)


def frame_manifest(manifest: Manifest) -> bytes:
    """The stored value that points at a value in parts."""
    return frame_value(manifest.model_dump_json().encode(), _PARTS)


def unframe(data: bytes) -> bytes | Manifest:
    """The body of an inline value, or the manifest of a value in parts.

    Raises:
        ForeignValueError: ``data`` is not a value we wrote (another program's), or a manifest
            that does not parse; the message says which.
    """
    kind, body = unframe_value(data, kinds=_KINDS)
    if kind == _INLINE:
        return body
    try:
        return Manifest.model_validate_json(body)
    except ValidationError:
        raise ForeignValueError("a parts manifest that does not parse") from None


def manifest_in(data: bytes) -> Manifest | None:
    """The manifest ``data`` holds, or None (an inline value, or anything else)."""
    with contextlib.suppress(ForeignValueError):
        found = unframe(data)
        return found if isinstance(found, Manifest) else None
    return None


def part_key(kv_key: str, write_id: str, n: int) -> str:
    """The key of part ``n`` of one write of ``kv_key``."""
    return f"{kv_key}.part.{write_id}.{n}"


def parts_of_write(kv_key: str, write_id: str) -> str:
    """Every part key of one write of ``kv_key`` (a KV wildcard)."""
    return f"{kv_key}.part.{write_id}.>"


def ttl_header(ttl_s: float) -> str:
    """The ``Nats-TTL`` value for ``ttl_s`` seconds (milliseconds, at least the server's 1 s)."""
    return f"{max(_MIN_TTL_MS, math.ceil(ttl_s * 1000))}ms"


def part_ttl_header(ttl_s: float) -> str:
    """The ``Nats-TTL`` of the parts of a value kept ``ttl_s``: a minute longer than it."""
    return ttl_header(ttl_s + _PART_TTL_GRACE_S)


def message_headers(msg: api.RawStreamMsg | Msg) -> dict[str, str]:
    """A message's headers as plain strings (empty when it has none)."""
    headers = cast("Mapping[str, object] | None", msg.headers)  # pyright: ignore[reportUnknownMemberType]
    return {str(k): str(v) for k, v in (headers or {}).items()}


def is_tombstone(headers: Mapping[str, str]) -> bool:
    """A KV delete or purge marker (``KV-Operation: DEL|PURGE``) or a server marker."""
    return headers.get(_KV_OPERATION) in ("DEL", "PURGE") or "Nats-Marker-Reason" in headers
