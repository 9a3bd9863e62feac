"""``StateTaskStore``: the ``a2a-sdk``'s ``TaskStore`` over any core ``StateStore``.

Each task is its A2A JSON (``MessageToDict``) under ``{prefix}/task/{task_id}``, so tasks live
wherever the state store keeps them (in memory, Redis, NATS KV) and a restarted server finds
them. ``list`` reads every task and hands them to the SDK's own in-memory store to filter,
order and page them: the protocol's paging rules are the SDK's, not ours.

Tasks are not scoped by caller: the server's one token admits to all of them.
"""

from __future__ import annotations

from typing import Any, cast

from a2a.server.agent_execution import RequestContext, SimpleRequestContextBuilder
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, SendMessageRequest, Task
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError

from agentic_core import StateStore, StorageError

__all__ = ["StateTaskStore", "TaskContextBuilder"]


class StateTaskStore(TaskStore):
    """A2A tasks kept in a core ``StateStore`` under ``{prefix}/task/``."""

    def __init__(self, store: StateStore, *, prefix: str = "a2a") -> None:
        self.store = store
        self.prefix = prefix.rstrip("/")

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}/task/{task_id}"

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Save (or replace) ``task``."""
        del context
        await self.store.set(self._key(task.id), MessageToDict(task))

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The task ``task_id``, or None."""
        del context
        key = self._key(task_id)
        return _task(key, await self.store.get(key))

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The tasks ``params`` selects, paged as the SDK pages them."""
        keys = await self.store.keys(f"{self.prefix}/task/")
        page = InMemoryTaskStore(use_copying=False)
        for key in keys:
            task = _task(key, await self.store.get(key))
            if task is not None:
                await page.save(task, context)
        return await page.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Forget the task ``task_id`` (nothing when there is none)."""
        del context
        await self.store.delete(self._key(task_id))


class TaskContextBuilder(SimpleRequestContextBuilder):
    """The SDK's request contexts, with a message that names a task but no context given the
    task's context (A2A lets a client leave it out; the SDK would make a new one, which a
    task of a restarted server then refuses as a mismatch)."""

    def __init__(self, store: TaskStore) -> None:
        super().__init__(task_store=store)
        self._tasks = store

    async def build(
        self,
        context: ServerCallContext,
        params: SendMessageRequest | None = None,
        task_id: str | None = None,
        context_id: str | None = None,
        task: Task | None = None,
    ) -> RequestContext:
        """``SimpleRequestContextBuilder.build``, the context id read from the named task."""
        if task_id and not context_id:
            stored = await self._tasks.get(task_id, context)
            if stored is not None and stored.context_id:
                context_id = stored.context_id
        return await super().build(context, params, task_id, context_id, task)


def _task(key: str, value: Any) -> Task | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise StorageError(f"{key} holds a {type(value).__name__}, not an A2A task")
    try:
        return ParseDict(cast("dict[str, Any]", value), Task(), ignore_unknown_fields=True)
    except ParseError as exc:
        raise StorageError(f"{key} holds no valid A2A task: {exc}") from exc
