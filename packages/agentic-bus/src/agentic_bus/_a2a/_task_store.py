"""``StateTaskStore``: the ``a2a-sdk``'s ``TaskStore`` over any core ``StateStore``.

Each task is its A2A JSON (``MessageToDict``) under ``{prefix}/task/{task_id}``, so tasks live
wherever the state store keeps them (in memory, Redis, NATS KV) and a restarted server finds
them. ``list`` reads every task and hands them to the SDK's own in-memory store to filter,
order and page them: the protocol's paging rules are the SDK's, not ours.

The SDK saves a task at every event (created, working, each artifact chunk, each status
message, the end). The store is written when a task is created or starts running here, and
whenever it stops running (completed, failed, canceled, rejected, waiting for input): what a
restarted server needs. Saves in between, while the task stays ``submitted`` or ``working``,
are kept in this process only, and this store's ``get`` and ``list`` answer them; another
process on the same state store sees such a task as it was when it started running.

Tasks are not scoped by caller: the server's one token admits to all of them.
"""

from __future__ import annotations

from typing import Any, cast

from a2a.server.agent_execution import RequestContext, SimpleRequestContextBuilder
from a2a.server.context import ServerCallContext
from a2a.server.tasks import InMemoryTaskStore, TaskStore
from a2a.types import ListTasksRequest, ListTasksResponse, SendMessageRequest, Task, TaskState
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError

from agentic_core import StateStore, StorageError

__all__ = ["StateTaskStore", "TaskContextBuilder"]


class StateTaskStore(TaskStore):
    """A2A tasks kept in a core ``StateStore`` under ``{prefix}/task/``."""

    def __init__(self, store: StateStore, *, prefix: str = "a2a") -> None:
        self.store = store
        self.prefix = prefix.rstrip("/")
        self._running: dict[str, Task] = {}
        """The latest save of each task running here since its last write to the store."""
        self._new: dict[str, None] = {}
        """Ids this server made for new tasks not saved yet: no use asking the store."""

    def expect_new(self, task_id: str) -> None:
        """``task_id`` was just made here for a new task: until it is saved, it is not found
        without a read (the SDK asks a few times before the first save)."""
        self._new[task_id] = None
        if len(self._new) > _NEW_KEPT:  # ids of requests that failed before any save
            del self._new[next(iter(self._new))]

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}/task/{task_id}"

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Save (or replace) ``task``: in the state store when it is new here or its run
        stops, else in this process until then (see the module's doc)."""
        del context
        self._new.pop(task.id, None)
        running = task.status.state in _RUNNING
        if running and task.id in self._running:
            self._running[task.id] = _copy(task)  # the SDK goes on changing its own
            return
        await self.store.set(self._key(task.id), MessageToDict(task))
        if task.status.state == TaskState.TASK_STATE_CANCELED:
            # A task parked by an earlier server process is canceled by the SDK alone (no
            # run of it here for the executor to stop): what it waited for goes with it.
            await self.store.delete(f"{self.prefix}/pending/{task.id}")
        if running:
            self._running[task.id] = _copy(task)
        else:
            self._running.pop(task.id, None)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The task ``task_id``, or None."""
        del context
        running = self._running.get(task_id)
        if running is not None:
            return _copy(running)
        if task_id in self._new:
            return None
        key = self._key(task_id)
        return _task(key, await self.store.get(key))

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The tasks ``params`` selects, paged as the SDK pages them."""
        keys = await self.store.keys(f"{self.prefix}/task/")
        page = InMemoryTaskStore(use_copying=False)
        running = dict(self._running)
        for key in keys:
            task_id = key.removeprefix(f"{self.prefix}/task/")
            task = _copy(running.pop(task_id)) if task_id in running else None
            if task is None:
                task = _task(key, await self.store.get(key))
            if task is not None:
                await page.save(task, context)
        for task in running.values():  # running here, its first write still on its way
            await page.save(_copy(task), context)
        return await page.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Forget the task ``task_id`` (nothing when there is none)."""
        del context
        self._running.pop(task_id, None)
        self._new.pop(task_id, None)
        await self.store.delete(self._key(task_id))


class TaskContextBuilder(SimpleRequestContextBuilder):
    """The SDK's request contexts, with a message that names a task but no context given the
    task's context (A2A lets a client leave it out; the SDK would make a new one, which a
    task of a restarted server then refuses as a mismatch)."""

    def __init__(self, store: StateTaskStore) -> None:
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
        built = await super().build(context, params, task_id, context_id, task)
        if not task_id and built.task_id:  # a message starting a task: its id made just now
            self._tasks.expect_new(built.task_id)
        return built


_NEW_KEPT = 10_000

_RUNNING = frozenset({TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING})
"""States a task passes through while it runs; any other ends (or pauses) its run."""


def _copy(task: Task) -> Task:
    copied = Task()
    copied.CopyFrom(task)
    return copied


def _task(key: str, value: Any) -> Task | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise StorageError(f"{key} holds a {type(value).__name__}, not an A2A task")
    try:
        return ParseDict(cast("dict[str, Any]", value), Task(), ignore_unknown_fields=True)
    except ParseError as exc:
        raise StorageError(f"{key} holds no valid A2A task: {exc}") from exc
