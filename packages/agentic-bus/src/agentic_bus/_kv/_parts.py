"""Values in parts: a body over the inline limit written as immutable part keys, read back checked.

The parts of one write are ``<key>.part.<write id>.<n>`` (``_framing.part_key``), published in
parallel, each create-only; the manifest that names them (write id, parts count, size, sha256)
is written under the key afterwards by ``KVBucket.write``. A reader joins them and checks size
and sha256. Parts are removed by purging the write's subjects once their manifest is replaced
or deleted (best effort: a failure is logged, and the parts are only wasted space).
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets

import nats.errors
import structlog

from agentic_bus._kv._connection import BoundBucket
from agentic_bus._kv._framing import (
    EXPECTED_LAST_HEADER,
    TTL_HEADER,
    Manifest,
    is_tombstone,
    message_headers,
    part_key,
    part_ttl_header,
    parts_of_write,
)

__all__ = ["join_parts", "purge_parts", "write_parts"]

_log = structlog.get_logger("agentic_bus")


async def write_parts(
    state: BoundBucket, bucket: str, kv_key: str, body: bytes, ttl_s: float | None
) -> Manifest:
    """Write ``body`` as the parts of a new write of ``kv_key``; the manifest naming them.

    Parts written before a failure are purged again before the error goes up.
    """
    write_id = secrets.token_hex(6)
    size = state.part_size
    chunks = [body[i : i + size] for i in range(0, len(body), size)]
    headers = {EXPECTED_LAST_HEADER: "0"}  # parts are immutable: create-only
    if ttl_s is not None:
        headers[TTL_HEADER] = part_ttl_header(ttl_s)
    try:
        await asyncio.gather(
            *(
                state.js.publish(  # pyright: ignore[reportUnknownMemberType]
                    state.subject(part_key(kv_key, write_id, n)), chunk, headers=headers
                )
                for n, chunk in enumerate(chunks)
            )
        )
    except BaseException:
        await purge_parts(state, bucket, kv_key, write_id)
        raise
    return Manifest(
        id=write_id, parts=len(chunks), size=len(body), sha256=hashlib.sha256(body).hexdigest()
    )


async def join_parts(
    state: BoundBucket, kv_key: str, manifest: Manifest
) -> tuple[bytes, str | None]:
    """The body ``manifest`` describes, or a description of what is wrong with its parts."""
    subjects = [state.subject(part_key(kv_key, manifest.id, n)) for n in range(manifest.parts)]
    messages = await asyncio.gather(*(state.get(s) for s in subjects))
    for n, msg in enumerate(messages):
        if msg is None or is_tombstone(message_headers(msg)):
            return b"", f"part {n} is missing (expired or deleted)"
    body = b"".join(msg.data or b"" for msg in messages if msg is not None)
    if len(body) != manifest.size or hashlib.sha256(body).hexdigest() != manifest.sha256:
        return b"", "its parts do not match its size and sha256 (corrupt)"
    return body, None


async def purge_parts(state: BoundBucket, bucket: str, kv_key: str, write_id: str) -> None:
    """Remove the parts of one write (best effort: a failure is logged, never raised)."""
    try:
        await state.js.purge_stream(  # pyright: ignore[reportUnknownMemberType]
            state.stream, subject=state.subject(parts_of_write(kv_key, write_id))
        )
    except (TimeoutError, nats.errors.Error) as exc:
        _log.warning(
            "kv_parts_cleanup_failed",
            bucket=bucket,
            key=kv_key,
            write_id=write_id,
            error=f"{type(exc).__name__}: {exc}",
        )
