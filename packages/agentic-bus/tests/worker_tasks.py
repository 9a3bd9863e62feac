"""In-process workers for the runtime tests: asyncio tasks, each ``Worker`` on its own NATS
connection, stopped when the block ends."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from agentic_bus import PoolSettings, Worker
from agentic_core import Workflow

SETTINGS = PoolSettings(ack_wait_s=1.0, max_deliver=3)
"""Test delivery settings: redelivery after 1 s, three deliveries."""


@contextlib.asynccontextmanager
async def workers(workflow: Workflow, url: str, n: int = 2) -> AsyncIterator[list[Worker]]:
    """``n`` workers of ``workflow``, each pulling when the block starts."""
    started = [Worker(workflow, url, slots=4, settings=SETTINGS) for _ in range(n)]
    tasks = [asyncio.create_task(w.run()) for w in started]
    await asyncio.gather(*(w.wait_ready() for w in started))
    try:
        yield started
    finally:
        for w in started:
            w.stop()
        await asyncio.gather(*tasks)
