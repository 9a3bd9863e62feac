"""Scans of a KV bucket: the live keys matching a pattern, read by one ephemeral consumer.

The consumer (``deliver_policy=LAST_PER_SUBJECT``, no acks, in memory, headers only if asked)
reads only the matching subjects, in batches pulled with ``no_wait`` until the server says there
is no more (status 404) or the last message reports nothing pending. Tombstones are skipped.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import nats.errors
from nats.aio.msg import Msg
from nats.js import api

from agentic_bus._kv._connection import BoundBucket
from agentic_bus._kv._framing import is_tombstone, message_headers

__all__ = ["ScanEntry", "scan_subject"]

_SCAN_BATCH: Final = 5000


@dataclass(frozen=True, slots=True)
class ScanEntry:
    """One key a scan found: the KV key, its revision, headers and (unless headers only) data."""

    kv_key: str
    revision: int
    headers: Mapping[str, str]
    data: bytes


async def scan_subject(
    state: BoundBucket, subject: str, *, headers_only: bool, timeout_s: float
) -> list[ScanEntry]:
    """The live keys whose subjects match ``subject``, last revision each, in stream order."""
    name = f"agentic_scan_{secrets.token_hex(8)}"
    config = api.ConsumerConfig(
        name=name,
        deliver_policy=api.DeliverPolicy.LAST_PER_SUBJECT,
        ack_policy=api.AckPolicy.NONE,
        filter_subject=subject,
        headers_only=headers_only or None,
        mem_storage=True,
        num_replicas=1,
        inactive_threshold=max(30.0, 4 * timeout_s),
    )
    info = await state.js.add_consumer(state.stream, config)  # pyright: ignore[reportUnknownMemberType]
    found: list[ScanEntry] = []
    try:
        if info.num_pending:
            await _pull_all(state, name, found, timeout_s)
    finally:
        with contextlib.suppress(TimeoutError, nats.errors.Error):
            await state.js.delete_consumer(state.stream, name)  # pyright: ignore[reportUnknownMemberType]
    return found


async def _pull_all(
    state: BoundBucket, consumer: str, found: list[ScanEntry], timeout_s: float
) -> None:
    client = state.client
    inbox = client.new_inbox()
    sub = await client.subscribe(inbox)  # pyright: ignore[reportUnknownMemberType]
    request = json.dumps({"batch": _SCAN_BATCH, "no_wait": True}).encode()
    next_subject = f"$JS.API.CONSUMER.MSG.NEXT.{state.stream}.{consumer}"
    prefix_len = len(state.prefix)
    try:
        while True:
            await client.publish(next_subject, request, reply=inbox)
            for _ in range(_SCAN_BATCH):
                msg: Msg = await sub.next_msg(timeout=timeout_s)
                headers = message_headers(msg)
                if not msg.reply:  # a status message, not a stored one
                    status = headers.get("Status", "")
                    if status == "404":
                        return  # no more messages: the end
                    description = headers.get("Description", "")
                    raise nats.errors.Error(f"listing stopped: status {status} {description}")
                meta = msg.metadata
                if not is_tombstone(headers):
                    found.append(
                        ScanEntry(msg.subject[prefix_len:], meta.sequence.stream, headers, msg.data)
                    )
                if meta.num_pending == 0:
                    return
    finally:
        with contextlib.suppress(nats.errors.Error):
            await sub.unsubscribe()
