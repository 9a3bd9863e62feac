"""Create-or-bind for JetStream streams and KV buckets, the same from every process.

Several processes (coordinators, workers, stores) declare the same objects at start; the first
creates them, the others bind. A stream that exists keeps its settings (an operator's limits
and replicas win); only missing subjects are added.
"""

from __future__ import annotations

import dataclasses

from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError
from nats.js.kv import KeyValue

from agentic_core import BusError

__all__ = ["ensure_key_value", "ensure_stream"]

_STREAM_NAME_IN_USE = 10058


async def ensure_stream(js: JetStreamContext, config: api.StreamConfig) -> api.StreamInfo:
    """The stream ``config.name``: created with ``config``, or bound as it is.

    An existing stream keeps the limits, replicas and storage an operator gave it; only
    subjects it lacks are added (another deployment prefix sharing the stream). A stream of
    another retention policy is a clear error: the protocol depends on it.
    """
    name = config.name or ""
    try:
        return await js.add_stream(config)  # pyright: ignore[reportUnknownMemberType]
    except BadRequestError as exc:
        if exc.err_code != _STREAM_NAME_IN_USE:
            raise BusError(f"JetStream refused stream {name!r}: {exc.description or exc}") from exc
    info = await js.stream_info(name)
    existing = info.config
    if config.retention is not None and existing.retention != config.retention:
        raise BusError(
            f"JetStream stream {name!r} exists with retention {existing.retention}, agentic "
            f"needs {config.retention}; delete it or use another subject prefix"
        )
    missing = [s for s in config.subjects or [] if s not in (existing.subjects or [])]
    if not missing:
        return info
    try:
        updated = dataclasses.replace(existing, subjects=[*(existing.subjects or []), *missing])
        return await js.update_stream(updated)  # pyright: ignore[reportUnknownMemberType]
    except BadRequestError as exc:
        raise BusError(
            f"JetStream stream {name!r} cannot take the subjects {missing} "
            f"({exc.description or exc})"
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
