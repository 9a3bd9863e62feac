"""The threads ``serve_agent`` serves: where they are kept, and one writer at a time.

Where, when the caller does not say: over NATS the default is the KV bucket
``agentic_threads`` on the bus's own connection: a served agent that is killed and started again
(or another member of its queue group) continues every conversation. Threads in the serving
process's memory are an explicit choice (``thread_store="memory"``), logged as a warning,
because a restart forgets them all.

How: ``ServedThreads`` keeps each thread's history and metadata in that store, and lets one run
or change of a thread go on at a time in the serving process.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, cast

import structlog

from agentic_bus._agent_wire import AgentRunRequest, ThreadRequest
from agentic_bus._bus import NatsBus
from agentic_bus._subjects import subject_token
from agentic_core import (
    AgentThread,
    ChatMessage,
    InMemoryBus,
    InMemoryStateStore,
    MessageBus,
    StateStore,
    StateStoreMessageStore,
    StorageError,
)

__all__ = ["THREADS_BUCKET", "ServedThreads", "ThreadStoreChoice", "served_thread_store"]

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
    from agentic_bus._kv._state import NatsKVStateStore

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


@dataclass(slots=True)
class _ThreadLock:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class ServedThreads:
    """The histories and metadata of served threads, in a StateStore, one writer at a time.

    Keys: ``agent-threads/{agent}/{thread}`` (the messages, through ``StateStoreMessageStore``)
    and ``agent-thread-metadata/{agent}/{thread}``, ids escaped by ``subject_token`` so any id
    makes a valid key for every back-end (NATS KV included).
    """

    def __init__(self, store: StateStore, agent_id: str, ttl_s: float | None) -> None:
        self._store = store
        agent = subject_token(agent_id)
        self._messages_prefix = f"agent-threads/{agent}"
        self._metadata_prefix = f"agent-thread-metadata/{agent}"
        self._ttl_s = ttl_s
        self._locks: dict[str, _ThreadLock] = {}

    def message_store(self, thread_id: str) -> StateStoreMessageStore:
        """The history of ``thread_id``."""
        return StateStoreMessageStore(
            self._store, subject_token(thread_id), prefix=self._messages_prefix, ttl_s=self._ttl_s
        )

    @contextlib.asynccontextmanager
    async def locked(self, thread_id: str) -> AsyncGenerator[None, None]:
        """One run or change of ``thread_id`` at a time in this process."""
        entry = self._locks.setdefault(thread_id, _ThreadLock())
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._locks[thread_id]

    @contextlib.asynccontextmanager
    async def open(self, request: AgentRunRequest) -> AsyncGenerator[AgentThread | None, None]:
        """The thread ``request`` runs in (None: a one-off run), its metadata saved after."""
        thread_id = request.thread_id
        if thread_id is None:
            yield None
            return
        async with self.locked(thread_id):
            store = self.message_store(thread_id)
            if request.history is not None:
                await store.replace_messages(request.history)
            metadata_key = f"{self._metadata_prefix}/{subject_token(thread_id)}"
            saved = await self._store.get(metadata_key)
            stored = cast("dict[str, Any]", saved) if isinstance(saved, dict) else {}
            metadata = {**stored, **request.thread_metadata}
            thread = AgentThread(id=thread_id, message_store=store, metadata=metadata)
            yield thread
            if thread.metadata != stored:
                await self._store.set(metadata_key, thread.metadata, ttl_s=self._ttl_s)

    async def apply(self, request: ThreadRequest) -> list[ChatMessage]:
        """Carry out a ``thread`` request; the history for ``list``, else ``[]``.

        ``add`` skips messages already in the history (same ``message_id``), so adding a
        conversation back (a workflow restoring its checkpoint) never duplicates it.
        """
        async with self.locked(request.thread_id):
            store = self.message_store(request.thread_id)
            if request.op == "list":
                return await store.list_messages()
            if request.op == "replace":
                await store.replace_messages(request.messages)
                return []
            current = await store.list_messages()
            known = {m.message_id for m in current}
            new = [m for m in request.messages if m.message_id not in known]
            if new:
                await store.replace_messages([*current, *new])
            return []
