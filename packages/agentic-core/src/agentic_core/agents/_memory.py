"""Memory providers: keep memories per agent and user, inject the best ones before a model call.

Memories live in a *scope*: an ``(agent_id, user_id)`` pair, where ``user_id`` comes from
``thread.user_id`` and ``None`` (a thread without a user) is a scope of its own. Retrieval ranks a
scope's memories with ``memory_score`` (importance and recency) in ``rank_memories``, a pure
function both providers share.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

from pydantic import ValidationError

from agentic_core._errors import AgentError
from agentic_core.protocols._agent import AgentResponse
from agentic_core.protocols._memory import Memory, MemoryContext
from agentic_core.protocols._messages import ChatMessage

if TYPE_CHECKING:
    from agentic_core.protocols._state import StateStore
    from agentic_core.protocols._thread import AgentThread

__all__ = [
    "InMemoryMemoryProvider",
    "MemoryExtractor",
    "NoOpMemoryProvider",
    "StateStoreMemoryProvider",
    "memory_score",
    "rank_memories",
    "render_memories",
]

MemoryExtractor = Callable[[AgentResponse], Sequence[Memory]]
"""Turns an agent's response into memories to store (called by ``after_invoke``)."""

DEFAULT_HALF_LIFE_S = 7 * 24 * 3600.0
MEMORIES_HEADER = "Relevant memories:"


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _as_utc(moment: datetime) -> datetime:
    """Naive datetimes are taken as UTC, so naive and aware ones compare."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


# --------------------------------------------------------------------------------------------
# Ranking (pure)


def memory_score(
    memory: Memory,
    now: datetime,
    *,
    half_life_s: float = DEFAULT_HALF_LIFE_S,
    importance_weight: float = 0.5,
) -> float:
    """How relevant ``memory`` is at ``now``, between 0 and 1.

    ``score = w * importance + (1 - w) * 0.5 ** (age_s / half_life_s)`` with ``w`` the
    ``importance_weight``: recency is 1 for a memory created now and halves every ``half_life_s``
    seconds (a memory dated in the future counts as new). With the default ``w = 0.5`` a fresh
    memory of importance 0 ties with a very old one of importance 1.
    """
    age_s = max(0.0, (_as_utc(now) - _as_utc(memory.created_at)).total_seconds())
    recency = 0.5 ** (age_s / half_life_s)
    return importance_weight * memory.importance + (1.0 - importance_weight) * recency


def rank_memories(
    memories: Iterable[Memory],
    now: datetime,
    *,
    limit: int | None = None,
    min_importance: float = 0.0,
    half_life_s: float = DEFAULT_HALF_LIFE_S,
    importance_weight: float = 0.5,
) -> list[Memory]:
    """The memories with ``importance >= min_importance``, best ``memory_score`` first.

    Ties go to the newer memory, then to the smaller id, so the order is deterministic.
    """
    eligible = [m for m in memories if m.importance >= min_importance]
    eligible.sort(key=lambda m: (-_as_utc(m.created_at).timestamp(), m.id))
    eligible.sort(
        key=lambda m: memory_score(
            m, now, half_life_s=half_life_s, importance_weight=importance_weight
        ),
        reverse=True,
    )
    return eligible if limit is None else eligible[:limit]


def render_memories(memories: Sequence[Memory]) -> ChatMessage:
    """The system message listing ``memories``: ``"Relevant memories:\\n- ..."``."""
    # Continuation lines are indented so a multi-line memory stays one list item.
    lines = ["- " + memory.content.strip().replace("\n", "\n  ") for memory in memories]
    return ChatMessage.system("\n".join([MEMORIES_HEADER, *lines]))


def _oldest_first(memories: Iterable[Memory]) -> list[Memory]:
    return sorted(memories, key=lambda m: (_as_utc(m.created_at), m.id))


# --------------------------------------------------------------------------------------------
# Providers


class _RankingMemoryProvider(ABC):
    """What both ranking providers share: settings, ``before_invoke`` and ``after_invoke``.

    Subclasses store the memories (``get_memories``, ``store_memory``, ``clear_memories``).
    """

    def __init__(
        self,
        *,
        max_memories: int = 10,
        min_importance: float = 0.0,
        recency_half_life_s: float = DEFAULT_HALF_LIFE_S,
        importance_weight: float = 0.5,
        extractor: MemoryExtractor | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        if max_memories < 1:
            raise ValueError(f"max_memories must be at least 1, got {max_memories!r}")
        if not 0.0 <= min_importance <= 1.0:
            raise ValueError(f"min_importance must be within [0, 1], got {min_importance!r}")
        if not recency_half_life_s > 0:
            raise ValueError(
                f"recency_half_life_s must be a positive number of seconds, "
                f"got {recency_half_life_s!r}"
            )
        if not 0.0 <= importance_weight <= 1.0:
            raise ValueError(f"importance_weight must be within [0, 1], got {importance_weight!r}")
        self.max_memories = max_memories
        self.min_importance = min_importance
        self.recency_half_life_s = recency_half_life_s
        self.importance_weight = importance_weight
        self._extractor = extractor
        self._clock = clock

    @abstractmethod
    async def get_memories(self, agent_id: str, user_id: str | None) -> list[Memory]:
        """Every memory of the scope, oldest first."""

    @abstractmethod
    async def store_memory(self, agent_id: str, user_id: str | None, memory: Memory) -> None:
        """Store ``memory`` in the scope (a memory with the same id is replaced)."""

    @abstractmethod
    async def clear_memories(self, agent_id: str, user_id: str | None) -> None:
        """Forget every memory of the scope."""

    async def relevant_memories(self, agent_id: str, user_id: str | None) -> list[Memory]:
        """The memories ``before_invoke`` injects: the best ``max_memories``, best first."""
        return rank_memories(
            await self.get_memories(agent_id, user_id),
            self._clock(),
            limit=self.max_memories,
            min_importance=self.min_importance,
            half_life_s=self.recency_half_life_s,
            importance_weight=self.importance_weight,
        )

    async def before_invoke(self, agent_id: str, thread: AgentThread, ctx: MemoryContext) -> None:
        """Add the relevant memories of ``(agent_id, thread.user_id)`` to ``ctx``.

        They go to ``ctx.retrieved_memories`` and, as one system message listing them, to
        ``ctx.system_messages``; nothing is added when the scope has none.
        """
        memories = await self.relevant_memories(agent_id, thread.user_id)
        if not memories:
            return
        ctx.retrieved_memories.extend(memories)
        ctx.system_messages.append(render_memories(memories))

    async def after_invoke(
        self, agent_id: str, thread: AgentThread, response: AgentResponse
    ) -> None:
        """Store what the ``extractor`` finds in ``response``; nothing without an extractor."""
        if self._extractor is None:
            return
        for memory in self._extractor(response):
            await self.store_memory(agent_id, thread.user_id, memory)


class InMemoryMemoryProvider(_RankingMemoryProvider):
    """Memories in a dict of this process, per ``(agent_id, user_id)``.

    Before each model call the best ``max_memories`` memories with importance at least
    ``min_importance`` are injected, ranked by ``memory_score``: half importance, half recency
    (recency halves every ``recency_half_life_s``; ``importance_weight`` changes the split).
    ``extractor``, when given, turns each response into memories to store. ``clock`` returns an
    aware ``datetime`` and can be faked in tests. Every method runs without awaiting between reads
    and writes, so concurrent tasks never see a half-done change. Stored and returned memories
    are copies.

    Example:
        ```python
        memory = InMemoryMemoryProvider(max_memories=5)
        fact = Memory(content="Prefers email", importance=0.9)
        await memory.store_memory("support-bot", "ada", fact)
        agent = ChatAgent(client, memory_provider=memory)
        ```
    """

    def __init__(
        self,
        *,
        max_memories: int = 10,
        min_importance: float = 0.0,
        recency_half_life_s: float = DEFAULT_HALF_LIFE_S,
        importance_weight: float = 0.5,
        extractor: MemoryExtractor | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        super().__init__(
            max_memories=max_memories,
            min_importance=min_importance,
            recency_half_life_s=recency_half_life_s,
            importance_weight=importance_weight,
            extractor=extractor,
            clock=clock,
        )
        self._scopes: dict[tuple[str, str | None], dict[str, Memory]] = {}

    def __repr__(self) -> str:
        return f"InMemoryMemoryProvider(max_memories={self.max_memories})"

    async def get_memories(self, agent_id: str, user_id: str | None) -> list[Memory]:
        """Every memory of the scope, oldest first (copies)."""
        scope = self._scopes.get((agent_id, user_id), {})
        return [m.model_copy(deep=True) for m in _oldest_first(scope.values())]

    async def store_memory(self, agent_id: str, user_id: str | None, memory: Memory) -> None:
        """Store a copy of ``memory`` in the scope (a memory with the same id is replaced)."""
        scope = self._scopes.setdefault((agent_id, user_id), {})
        scope[memory.id] = memory.model_copy(deep=True)

    async def clear_memories(self, agent_id: str, user_id: str | None) -> None:
        """Forget every memory of the scope."""
        self._scopes.pop((agent_id, user_id), None)


class StateStoreMemoryProvider(_RankingMemoryProvider):
    """Memories as JSON in any ``StateStore`` (memory, Redis, NATS KV), ranked like
    ``InMemoryMemoryProvider``.

    Each memory is one key, ``{prefix}/{agent_id}/{user_id or '_'}/{memory_id}``, holding
    ``memory.model_dump(mode="json")``; the parts are percent-encoded (a user id of ``"_"`` is
    written ``%5F``), so no id can reach into another scope. One key per memory means concurrent
    ``store_memory`` calls never overwrite each other. With ``ttl_s`` every memory expires after
    that many seconds. A value under these keys that is not a memory raises ``AgentError``.

    Example:
        ```python
        memory = StateStoreMemoryProvider(redis_state_store, prefix="memories", max_memories=5)
        ```
    """

    def __init__(
        self,
        store: StateStore,
        *,
        prefix: str = "memories",
        ttl_s: float | None = None,
        max_memories: int = 10,
        min_importance: float = 0.0,
        recency_half_life_s: float = DEFAULT_HALF_LIFE_S,
        importance_weight: float = 0.5,
        extractor: MemoryExtractor | None = None,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        super().__init__(
            max_memories=max_memories,
            min_importance=min_importance,
            recency_half_life_s=recency_half_life_s,
            importance_weight=importance_weight,
            extractor=extractor,
            clock=clock,
        )
        if ttl_s is not None and not ttl_s > 0:
            raise ValueError(f"ttl_s must be a positive number of seconds, got {ttl_s!r}")
        self._store = store
        self._prefix = prefix.rstrip("/")
        self._ttl_s = ttl_s

    @property
    def store(self) -> StateStore:
        """The state store holding the memories."""
        return self._store

    def __repr__(self) -> str:
        return f"StateStoreMemoryProvider({self._store!r}, prefix={self._prefix!r})"

    def scope_prefix(self, agent_id: str, user_id: str | None) -> str:
        """The key prefix of a scope's memories (ends with ``/``)."""
        return f"{self._prefix}/{_key_part(agent_id)}/{_user_key_part(user_id)}/"

    async def get_memories(self, agent_id: str, user_id: str | None) -> list[Memory]:
        """Every memory of the scope, oldest first."""
        keys = await self._store.keys(self.scope_prefix(agent_id, user_id))
        values = await asyncio.gather(*(self._store.get(key) for key in keys))
        # A key deleted between ``keys`` and ``get`` reads as None: it is simply gone.
        found = zip(keys, values, strict=True)
        return _oldest_first(_parse_memory(key, value) for key, value in found if value is not None)

    async def store_memory(self, agent_id: str, user_id: str | None, memory: Memory) -> None:
        """Write ``memory`` under its own key (a memory with the same id is replaced).

        Raises:
            SerializationError: the memory's metadata is not JSON-able.
        """
        key = self.scope_prefix(agent_id, user_id) + _key_part(memory.id)
        await self._store.set(key, memory.model_dump(mode="json"), ttl_s=self._ttl_s)

    async def clear_memories(self, agent_id: str, user_id: str | None) -> None:
        """Delete every memory key of the scope."""
        keys = await self._store.keys(self.scope_prefix(agent_id, user_id))
        await asyncio.gather(*(self._store.delete(key) for key in keys))


def _key_part(value: str) -> str:
    return quote(value, safe="")


def _user_key_part(user_id: str | None) -> str:
    """``_`` for no user; a real user id of ``"_"`` is escaped so the two scopes differ."""
    if user_id is None:
        return "_"
    return "%5F" if user_id == "_" else _key_part(user_id)


def _parse_memory(key: str, value: object) -> Memory:
    try:
        return Memory.model_validate(value)
    except ValidationError as exc:
        raise AgentError(
            f"the value under {key!r} is not a memory ({exc.error_count()} problems: "
            f"{exc.errors()[0]['msg']}); delete the key or fix the data"
        ) from exc


class NoOpMemoryProvider:
    """Remembers nothing and injects nothing: the explicit "no memory" choice."""

    def __repr__(self) -> str:
        return "NoOpMemoryProvider()"

    async def before_invoke(self, agent_id: str, thread: AgentThread, ctx: MemoryContext) -> None:
        """Leave ``ctx`` unchanged."""

    async def after_invoke(
        self, agent_id: str, thread: AgentThread, response: AgentResponse
    ) -> None:
        """Do nothing."""

    async def get_memories(self, agent_id: str, user_id: str | None) -> list[Memory]:
        """Always empty."""
        return []

    async def store_memory(self, agent_id: str, user_id: str | None, memory: Memory) -> None:
        """Discard ``memory``."""

    async def clear_memories(self, agent_id: str, user_id: str | None) -> None:
        """Do nothing."""
