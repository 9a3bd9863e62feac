"""``VectorMemoryProvider``: long-term semantic memory for agents on any ``VectorStore``."""

from __future__ import annotations

import asyncio
import builtins
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog
from pydantic import ValidationError

from agentic_core import (
    AgentResponse,
    AgentThread,
    ChatClient,
    ChatMessage,
    Embedder,
    Memory,
    MemoryContext,
    Role,
    StorageError,
    VectorPoint,
    VectorSearchResult,
    VectorStore,
)
from agentic_storage._memory_facts import LLMFactExtractor, extract_user_facts

__all__ = ["FactExtractor", "VectorMemoryProvider"]

FactExtractor = Callable[[Sequence[ChatMessage]], Sequence[Memory] | Awaitable[Sequence[Memory]]]
"""Turns the user messages of a turn into memories to keep (sync or async)."""

_log = structlog.get_logger("agentic_storage.memory")
_HEADER = "Relevant memories:"
_SCOPE = "scope"


class VectorMemoryProvider:
    """Long-term semantic memory: facts kept as vectors, the relevant ones recalled each turn.

    Memories are scoped per agent and user (``thread.user_id``; a thread without one is a scope
    of its own). After each turn, ``after_invoke`` extracts what is worth keeping from the
    user's messages of that turn: by default simple rules pick the user's statements about
    themselves ("my name is …", "I live in …", "I prefer …"); with ``chat_client`` a model picks
    them (``LLMFactExtractor``); ``extractor`` replaces both. Each memory becomes one point of
    ``collection``, its vector the ``embedder``'s, its id stable per scope and content (a fact
    said twice is kept once). Before each model call, ``before_invoke`` embeds the latest user
    message and puts the ``top_k`` closest memories of the scope (at least ``min_score`` cosine
    similarity, when given) into ``ctx.retrieved_memories`` and one system message.

    The collection is created on first use (the embedder's dimension, cosine). The
    ``VectorStore`` protocol lists points only by searching, so ``get_memories`` searches the
    scope with a fixed probe vector and returns at most ``max_listed`` memories;
    ``clear_memories`` deletes ``max_listed`` at a time until the scope is empty. A failing
    extractor is logged and skipped: memory never fails a turn. Give the agent a stable ``id``
    (``ChatAgent(..., id="helper")``): memories are kept per agent id, and a generated id
    differs in every process.

    Args:
        vector_store: where the memories live (any ``VectorStore``).
        embedder: turns a memory, and the user's latest message, into a vector.
        collection: the collection holding every scope's memories.
        top_k: at most this many memories are recalled before a model call.
        min_score: the least cosine similarity a recalled memory has (None: any).
        extractor: picks the memories of a turn's user messages (sync or async callable).
        chat_client: a model to pick them (``LLMFactExtractor``) when no ``extractor`` is given.
        max_listed: the most memories ``get_memories`` returns.

    Example:
        ```python
        memory = VectorMemoryProvider(QdrantVectorStore("./memories"), HashingEmbedder())
        agent = ChatAgent(client, "You are helpful.", memory_provider=memory)
        await agent.run("I live in Paris.", thread=agent.get_new_thread(user_id="ada"))
        ```
    """

    def __init__(
        self,
        vector_store: VectorStore,
        embedder: Embedder,
        *,
        collection: str = "agentic_memories",
        top_k: int = 5,
        min_score: float | None = None,
        extractor: FactExtractor | None = None,
        chat_client: ChatClient | None = None,
        max_listed: int = 10_000,
    ) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {top_k!r}")
        if max_listed < 1:
            raise ValueError(f"max_listed must be >= 1, got {max_listed!r}")
        self._store = vector_store
        self._embedder = embedder
        self.collection = collection
        self.top_k = top_k
        self.min_score = min_score
        self.max_listed = max_listed
        if extractor is not None:
            self._extractor: FactExtractor = extractor
        elif chat_client is not None:
            self._extractor = LLMFactExtractor(chat_client)
        else:
            self._extractor = extract_user_facts
        self._ready = False
        self._ready_lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"VectorMemoryProvider({self._store!r}, collection={self.collection!r})"

    # --- MemoryProvider ---------------------------------------------------------------------

    async def before_invoke(self, agent_id: str, thread: AgentThread, ctx: MemoryContext) -> None:
        """Recall the scope's memories closest to the latest user message into ``ctx``."""
        messages = await thread.list_messages()
        query = next(
            (m.text for m in reversed(messages) if m.role == Role.USER and m.text.strip()), None
        )
        if query is None:
            return
        await self._ensure_collection()
        [vector] = await self._embedder.embed([query])
        hits = await self._store.search(
            self.collection,
            vector,
            limit=self.top_k,
            score_threshold=self.min_score,
            filter={_SCOPE: _scope(agent_id, thread.user_id)},
        )
        memories = [_memory_of(self.collection, hit.id, hit.payload) for hit in hits]
        if not memories:
            return
        ctx.retrieved_memories.extend(memories)
        lines = ["- " + memory.content.strip().replace("\n", "\n  ") for memory in memories]
        ctx.system_messages.append(ChatMessage.system("\n".join([_HEADER, *lines])))

    async def after_invoke(
        self, agent_id: str, thread: AgentThread, response: AgentResponse
    ) -> None:
        """Store what the extractor finds in the user messages of this turn."""
        messages = await thread.list_messages()
        turn = _user_turn(messages, len(response.messages))
        if not turn:
            return
        try:
            found = self._extractor(turn)
            memories = list(await found if inspect.isawaitable(found) else found)
        except Exception as exc:  # noqa: BLE001 - memory must never fail the agent's turn
            _log.warning("memory_extraction_failed", agent_id=agent_id, error=repr(exc))
            return
        if memories:
            await self._store_many(agent_id, thread.user_id, memories)

    async def get_memories(self, agent_id: str, user_id: str | None) -> builtins.list[Memory]:
        """Every memory of the scope (up to ``max_listed``), oldest first."""
        hits = await self._list_scope(agent_id, user_id)
        memories = [_memory_of(self.collection, hit.id, hit.payload) for hit in hits]
        return sorted(memories, key=lambda m: (_utc(m.created_at), m.id))

    async def store_memory(self, agent_id: str, user_id: str | None, memory: Memory) -> None:
        """Embed and store ``memory`` in the scope (one with the same id is replaced)."""
        await self._store_many(agent_id, user_id, [memory])

    async def clear_memories(self, agent_id: str, user_id: str | None) -> None:
        """Forget every memory of the scope (``max_listed`` at a time, until none is left)."""
        while True:
            hits = await self._list_scope(agent_id, user_id)
            if hits:
                await self._store.delete(self.collection, [hit.id for hit in hits])
            if len(hits) < self.max_listed:
                return

    # --- internals --------------------------------------------------------------------------

    async def _store_many(
        self, agent_id: str, user_id: str | None, memories: Sequence[Memory]
    ) -> None:
        await self._ensure_collection()
        vectors = await self._embedder.embed([m.content for m in memories])
        scope = _scope(agent_id, user_id)
        points = [
            VectorPoint(
                id=_point_id(scope, memory.id),
                vector=vector,
                payload={
                    "memory": memory.model_dump(mode="json"),
                    _SCOPE: scope,
                    "agent_id": agent_id,
                    "user_id": user_id,
                },
            )
            for memory, vector in zip(memories, vectors, strict=True)
        ]
        await self._store.upsert(self.collection, points)

    async def _list_scope(
        self, agent_id: str, user_id: str | None
    ) -> builtins.list[VectorSearchResult]:
        """Up to ``max_listed`` points of the scope: the protocol lists only by searching."""
        await self._ensure_collection()
        return await self._store.search(
            self.collection,
            _probe(self._embedder.dimension),
            limit=self.max_listed,
            filter={_SCOPE: _scope(agent_id, user_id)},
        )

    async def _ensure_collection(self) -> None:
        if self._ready:
            return
        async with self._ready_lock:
            if not self._ready:
                await self._store.create_collection(
                    self.collection, self._embedder.dimension, distance="cosine"
                )
                self._ready = True


def _scope(agent_id: str, user_id: str | None) -> str:
    """One string per (agent, user) pair; JSON keeps ``None`` apart from any user id."""
    return json.dumps([agent_id, user_id], separators=(",", ":"))


def _point_id(scope: str, memory_id: str) -> str:
    return f"{scope}/{memory_id}"


def _probe(dimension: int) -> builtins.list[float]:
    """Any non-zero vector: listing a scope ranks by it, but takes every match up to the limit."""
    return [1.0] + [0.0] * (dimension - 1)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _user_turn(messages: Sequence[ChatMessage], produced: int) -> builtins.list[ChatMessage]:
    """The user messages of this turn: those just before the response's ``produced`` messages."""
    end = max(0, len(messages) - produced)
    start = end
    while start > 0 and messages[start - 1].role == Role.USER:
        start -= 1
    return list(messages[start:end])


def _memory_of(collection: str, hit_id: str, payload: dict[str, Any]) -> Memory:
    try:
        return Memory.model_validate(payload.get("memory"))
    except ValidationError as exc:
        raise StorageError(
            f"point {hit_id!r} of collection {collection!r} does not hold a memory "
            f"({exc.errors(include_url=False)[0]['msg']}); is another program using it?"
        ) from None
