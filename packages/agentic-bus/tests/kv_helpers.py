"""KV bucket helpers shared by the store tests: fresh names, cleanup, a bucket's subjects."""

from __future__ import annotations

import contextlib
import uuid

import nats
from nats.aio.client import Client as NatsClient
from nats.js.errors import NotFoundError


def new_bucket() -> str:
    """A fresh bucket name (tests share one server)."""
    return f"t{uuid.uuid4().hex[:12]}"


async def delete_bucket(url: str, bucket: str) -> None:
    client = await nats.connect(url)
    try:
        with contextlib.suppress(NotFoundError):  # a test that never wrote made no bucket
            await client.jetstream().delete_key_value(bucket)
    finally:
        await client.close()


async def bucket_subjects(client: NatsClient, bucket: str) -> dict[str, int]:
    """Every subject of the bucket's stream (values, parts, markers) and its message count."""
    info = await client.jetstream().stream_info(f"KV_{bucket}", subjects_filter=">")
    prefix = f"$KV.{bucket}."
    return {s[len(prefix) :]: n for s, n in (info.state.subjects or {}).items()}
