"""Create-or-bind for JetStream streams and KV buckets, the same from every process.

Several processes (coordinators, workers, stores) declare the same objects at start; the first
creates them, the others bind. A stream that exists with other settings is updated to ours when
the server allows it, and otherwise named in a clear error.
"""

from __future__ import annotations

from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError
from nats.js.kv import KeyValue

from agentic_core import BusError

__all__ = ["ensure_key_value", "ensure_stream"]

_STREAM_NAME_IN_USE = 10058


async def ensure_stream(js: JetStreamContext, config: api.StreamConfig) -> api.StreamInfo:
    """The stream ``config.name``, created with ``config`` or updated to it."""
    name = config.name or ""
    try:
        return await js.add_stream(config)  # pyright: ignore[reportUnknownMemberType]
    except BadRequestError as exc:
        if exc.err_code != _STREAM_NAME_IN_USE:
            raise BusError(f"JetStream refused stream {name!r}: {exc.description or exc}") from exc
    try:
        return await js.update_stream(config)  # pyright: ignore[reportUnknownMemberType]
    except BadRequestError as exc:
        raise BusError(
            f"JetStream stream {name!r} exists with settings that cannot be changed to ours "
            f"({exc.description or exc}); delete it or use another name"
        ) from exc


async def ensure_key_value(js: JetStreamContext, config: api.KeyValueConfig) -> KeyValue:
    """The KV bucket ``config.bucket``, bound if it exists, else created with ``config``."""
    try:
        return await js.key_value(config.bucket)
    except (BucketNotFoundError, NotFoundError):
        pass
    try:
        return await js.create_key_value(config)  # pyright: ignore[reportUnknownMemberType]
    except BadRequestError as exc:
        if exc.err_code == _STREAM_NAME_IN_USE:  # created by another process meanwhile
            return await js.key_value(config.bucket)
        raise BusError(
            f"JetStream refused KV bucket {config.bucket!r}: {exc.description or exc}"
        ) from exc
