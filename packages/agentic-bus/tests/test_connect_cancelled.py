"""A connect that its caller cancels part-way (a viewer or a program shutting down) closes the
socket it opened: nothing is left for the garbage collector to warn about (``filterwarnings =
error`` turns such a ResourceWarning into a failure), and no connection stays up."""

from __future__ import annotations

import asyncio
import gc

import pytest
from nats.aio.client import Client as NatsClient

from agentic_bus import connect_nats

pytestmark = pytest.mark.slow


def connected_clients() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, NatsClient) and o.is_connected)


async def test_a_connect_cancelled_part_way_leaves_no_socket(nats_server: str) -> None:
    # Delays that land the cancellation before, during and after the TCP connect and the
    # handshake (each a fraction of a millisecond on loopback).
    for step in range(25):
        await cancel_after(nats_server, step * 0.0002)


async def cancel_after(nats_server: str, delay_s: float) -> None:
    before = connected_clients()
    connecting = asyncio.ensure_future(connect_nats(nats_server, name="cancelled connect"))
    await asyncio.sleep(delay_s)
    connecting.cancel()
    try:
        client = await connecting
    except asyncio.CancelledError:
        pass
    else:  # connected before the cancellation landed: an ordinary client, closed here
        await client.close()
    gc.collect()  # a leaked transport would warn (an error here) when collected
    await asyncio.sleep(0)
    assert connected_clients() == before
