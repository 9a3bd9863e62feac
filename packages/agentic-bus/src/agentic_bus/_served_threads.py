"""Where ``serve_agent`` keeps the threads it serves, when the caller does not say.

Over NATS the default is the KV bucket ``agentic_threads`` on the bus's own connection: a served
agent that is killed and started again (or another member of its queue group) continues every
conversation. Threads in the serving process's memory are an explicit choice
(``thread_store="memory"``), logged as a warning, because a restart forgets them all.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

import structlog

from agentic_bus._bus import NatsBus
from agentic_core import InMemoryBus, InMemoryStateStore, MessageBus, StateStore, StorageError

__all__ = ["THREADS_BUCKET", "ThreadStoreChoice", "served_thread_store"]

_log = structlog.get_logger("agentic_bus")

THREADS_BUCKET = "agentic_threads"
"""The NATS KV bucket of served threads by default (history 1, file storage, 1 replica)."""

ThreadStoreChoice: TypeAlias = StateStore | Literal["memory"] | None
"""``serve_agent``'s ``thread_store``: a store, ``"memory"`` (this process only), or None."""


async def served_thread_store(
    bus: MessageBus, choice: ThreadStoreChoice, agent_id: str
) -> StateStore:
    """The store for ``choice``: the one given; ``"memory"`` (with a warning); by default a
    ``NatsKVStateStore`` in ``agentic_threads`` on a ``NatsBus`` (opened now, so a server
    without JetStream fails at start-up), memory on core's ``InMemoryBus``."""
    if isinstance(choice, str):
        if choice != "memory":
            raise ValueError(
                f"thread_store={choice!r}: pass a StateStore, or 'memory' for threads kept in "
                "this process only"
            )
        _warn_memory(agent_id, "thread_store='memory'")
        return InMemoryStateStore()
    if choice is not None:
        return choice
    if isinstance(bus, NatsBus):
        return await _nats_threads(bus, agent_id)
    if not isinstance(bus, InMemoryBus):  # an unknown transport: say where threads are
        _warn_memory(agent_id, f"no thread_store for a {type(bus).__name__}")
    return InMemoryStateStore()


async def _nats_threads(bus: NatsBus, agent_id: str) -> StateStore:
    from agentic_bus._kv_state import NatsKVStateStore

    store = NatsKVStateStore(bus, bucket=THREADS_BUCKET)
    try:
        await store.exists("agent-threads")  # creates or binds the bucket now
    except StorageError as exc:
        raise StorageError(
            f"serve_agent keeps agent {agent_id!r}'s threads in the NATS KV bucket "
            f"{THREADS_BUCKET!r} by default, which it cannot open: {exc}; enable JetStream, or "
            "pass thread_store= (a StateStore, or 'memory' to keep them in this process only)"
        ) from exc
    return store


def _warn_memory(agent_id: str, why: str) -> None:
    _log.warning(
        "agent_threads_in_memory",
        agent_id=agent_id,
        reason=why,
        consequence="a restart of this process forgets every conversation it served",
    )
