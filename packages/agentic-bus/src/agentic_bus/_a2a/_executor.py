"""What every served task goes through, agent or workflow: the ``a2a-sdk`` ``AgentExecutor``
that makes the task, takes a run slot, bounds the run by the timeout, and turns failures into
the task's ``failed`` state (with a message that names no secret).

``RunSlots`` bounds the runs at once; ``serve_a2a`` also refuses a new message with a 429
before it reaches the SDK when none is free.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Generator
from contextlib import asynccontextmanager, contextmanager
from typing import TypeVar

import structlog
from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import Message, Part, Task, TaskState
from a2a.utils.errors import InvalidParamsError

from agentic_bus._a2a._answers import AnswerError
from agentic_bus._a2a._parts import text_part
from agentic_bus._a2a._served_state import ServedState
from agentic_core import redact_secrets

__all__ = ["RunSlots", "TaskExecutor", "TaskRun", "closing"]

T = TypeVar("T")

_log = structlog.get_logger("agentic_bus.a2a")


class RunSlots:
    """At most ``limit`` runs at once; past it a run is refused, never queued."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.active = 0

    @property
    def full(self) -> bool:
        """Whether no slot is free."""
        return self.active >= self.limit

    @contextmanager
    def slot(self) -> Generator[bool]:
        """Hold a slot while the block runs; yields False (holding none) when all are taken."""
        if self.full:
            yield False
            return
        self.active += 1
        try:
            yield True
        finally:
            self.active -= 1


class TaskRun:
    """One ``execute`` call: its task, the incoming message, and the updater of the task.

    ``watched`` is whether a client may follow the run as it goes (a streamed message, a send
    that returns at once, anything but a plain blocking ``SendMessage``): then the target's
    output is worth streaming into the task; otherwise only the finished answer is read.
    ``new`` is whether the message starts the task (it waits for nothing yet).
    """

    def __init__(
        self,
        task: Task,
        message: Message,
        updater: TaskUpdater,
        *,
        watched: bool = True,
        new: bool = False,
    ) -> None:
        self.task = task
        self.message = message
        self.updater = updater
        self.watched = watched
        self.new = new

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.task.id

    @property
    def context_id(self) -> str:
        """The task's context id."""
        return self.task.context_id

    async def say(self, state: TaskState, parts: list[Part]) -> None:
        """Move the task to ``state`` with an agent message of ``parts``."""
        await self.updater.update_status(state, message=self.updater.new_agent_message(parts))


class TaskExecutor(AgentExecutor):
    """The ``AgentExecutor`` of a served target: ``work`` is what the target does."""

    def __init__(self, name: str, state: ServedState, slots: RunSlots, timeout_s: float) -> None:
        self.name = name
        self.state = state
        self.slots = slots
        self.timeout_s = timeout_s

    @abstractmethod
    async def work(self, run: TaskRun) -> None:
        """Run the target for ``run`` and leave its task in a final or waiting state."""

    async def forget(self, task_id: str) -> None:
        """Drop what a cancelled task waited for."""
        await self.state.clear_pending(task_id)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Run one message of a task (see ``AgentExecutor.execute``)."""
        message = context.message
        if message is None:
            raise InvalidParamsError(message="a message is needed to run a task")
        task = context.current_task
        new = task is None
        if task is None:
            task = new_task_from_user_message(message)
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        run = TaskRun(task, message, updater, watched=_watched(context), new=new)
        with self.slots.slot() as free:
            if not free:
                await run.say(
                    TaskState.TASK_STATE_REJECTED,
                    [text_part(f"this server runs at most {self.slots.limit} tasks at once")],
                )
                return
            await self._bounded(run)

    async def _bounded(self, run: TaskRun) -> None:
        try:
            async with asyncio.timeout(self.timeout_s):
                if run.watched or not run.new:  # a new task's blocking send sees its end only
                    await run.updater.start_work()
                await self.work(run)
        except TimeoutError:
            _log.warning("a2a.run_timed_out", target=self.name, task_id=run.task_id)
            await self.forget(run.task_id)
            await run.say(
                TaskState.TASK_STATE_FAILED,
                [text_part(f"{self.name} did not finish within {self.timeout_s:g} s")],
            )
        except AnswerError as exc:
            await run.say(TaskState.TASK_STATE_INPUT_REQUIRED, [text_part(f"{exc}; answer again")])
        except asyncio.CancelledError:
            raise  # a tasks/cancel: the SDK writes the canceled state
        except Exception as exc:  # noqa: BLE001 - any failure of the target fails its task
            shown = _shown(exc)
            _log.warning("a2a.run_failed", target=self.name, task_id=run.task_id, error=shown)
            await self.forget(run.task_id)
            await run.say(TaskState.TASK_STATE_FAILED, [text_part(f"{self.name} failed: {shown}")])

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Cancel the task's run: the SDK cancels ``execute`` next; what the task waited for
        is forgotten and the task ends ``canceled``."""
        task_id = context.task_id or ""
        await self.forget(task_id)
        updater = TaskUpdater(event_queue, task_id, context.context_id or "")
        await updater.cancel()
        _log.info("a2a.task_canceled", target=self.name, task_id=task_id)


@asynccontextmanager
async def closing(stream: AsyncIterator[T]) -> AsyncGenerator[AsyncIterator[T]]:
    """``stream``, closed when the block ends (a cancelled task closes the run it drives)."""
    try:
        yield stream
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


_BLOCKING_SENDS = frozenset({"SendMessage", "message/send"})
"""The JSON-RPC methods of a message answered once its task stops (A2A 1.0, 0.3)."""


def _watched(context: RequestContext) -> bool:
    """Whether a client may follow the run of ``context`` as it goes (see ``TaskRun``)."""
    if context.call_context.state.get("method") not in _BLOCKING_SENDS:
        return True
    configuration = context.configuration
    return configuration is not None and configuration.return_immediately


def _shown(exc: BaseException) -> str:
    """``exc`` as a client may read it: type and text, URLs and secrets redacted."""
    text = f"{type(exc).__name__}: {exc}"
    return str(redact_secrets(None, "", {"text": text})["text"])[:500]
