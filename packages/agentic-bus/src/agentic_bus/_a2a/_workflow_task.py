"""A core ``Workflow`` behind A2A: each task is one run, checkpointed in the checkpoint store.

The task's first message becomes the start executor's input. Outputs become artifacts
(``output``) as they are yielded; agents' streaming text inside the run becomes ``working``
status messages. A run that pauses on ``request_info`` leaves the task ``input-required``
with each request as text and data; the next message on the task answers the first pending
request (or, as a data part ``{request_id: answer, ...}``, several) and the run resumes from
its latest checkpoint, in this process or in a restarted one. Cancelling the task stops the
run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, cast

from a2a.types import TaskState

from agentic_bus._a2a._answers import AnswerError, as_type, output_parts, request_parts
from agentic_bus._a2a._executor import RunSlots, TaskExecutor, TaskRun, closing
from agentic_bus._a2a._parts import data_of, text_part
from agentic_bus._a2a._served_state import Pending, ServedState
from agentic_core import (
    AgentRunUpdateEvent,
    CheckpointStore,
    RequestInfoEvent,
    Workflow,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowRequestError,
    WorkflowStartedEvent,
)

__all__ = ["WorkflowTaskExecutor"]


class WorkflowTaskExecutor(TaskExecutor):
    """Runs ``workflow`` for the tasks of an A2A server, checkpointed in ``checkpoints``."""

    def __init__(
        self,
        workflow: Workflow,
        checkpoints: CheckpointStore,
        state: ServedState,
        slots: RunSlots,
        timeout_s: float,
    ) -> None:
        super().__init__(workflow.name, state, slots, timeout_s)
        self.workflow = workflow
        self.checkpoints = checkpoints

    async def work(self, run: TaskRun) -> None:
        """Start the run, or resume it with the message's answers."""
        pending = await self.state.pending(run.task_id)
        if pending is not None and pending.run_id is not None:
            events = await self._resume(run, pending.run_id)
        else:
            start = self.workflow.get_executor(self.workflow.start_executor_id)
            accepted = [t for t in start.input_types if t is not Any]
            message = as_type(run.message, accepted, f"the input of workflow {self.name!r}")
            events = self.workflow.run_stream(message, checkpoint_store=self.checkpoints)
        await self._follow(run, events)

    async def _resume(self, run: TaskRun, run_id: str) -> AsyncIterator[WorkflowEvent]:
        state = await self.workflow.get_state(run_id, checkpoint_store=self.checkpoints)
        requests = {r.request_id: r for r in state.pending_requests}
        answers = _answers(run, requests)
        try:
            stream = self.workflow.run_stream(
                checkpoint_id=state.checkpoint_id,
                checkpoint_store=self.checkpoints,
                responses=answers,
            )
            first = await anext(stream)  # the answers are checked before the first event
        except WorkflowRequestError as exc:
            raise AnswerError(str(exc)) from None
        return _prepend(first, stream)

    async def _follow(self, run: TaskRun, events: AsyncIterator[WorkflowEvent]) -> None:
        run_id: str | None = None
        waiting: list[RequestInfoEvent] = []
        async with closing(events) as stream:
            async for event in stream:
                if isinstance(event, WorkflowStartedEvent):
                    run_id = event.run_id
                elif isinstance(event, WorkflowOutputEvent):
                    parts = output_parts(event.data)
                    if parts:
                        await run.updater.add_artifact(parts, name="output")
                elif isinstance(event, AgentRunUpdateEvent):
                    text = str(getattr(event.update, "text", "") or "")
                    if text:
                        await run.say(TaskState.TASK_STATE_WORKING, [text_part(text)])
                elif isinstance(event, RequestInfoEvent):
                    waiting.append(event)
                    run_id = event.run_id or run_id
                elif isinstance(event, WorkflowFailedEvent):
                    await self.forget(run.task_id)
                    failure = f"{self.name} failed: {event.error}"
                    await run.say(TaskState.TASK_STATE_FAILED, [text_part(failure)])
                    return
        if waiting and run_id is not None:
            await self.state.set_pending(run.task_id, Pending(run_id=run_id))
            await run.say(TaskState.TASK_STATE_INPUT_REQUIRED, request_parts(waiting))
            return
        await self.state.clear_pending(run.task_id)
        await run.updater.complete()


def _answers(run: TaskRun, requests: dict[str, RequestInfoEvent]) -> dict[str, Any]:
    """The answers of the message: ``{request_id: answer}`` in a data part, else the whole
    message as the answer to the first pending request."""
    if not requests:
        raise AnswerError("the run waits for no request any more")
    for value in data_of(run.message.parts):
        if isinstance(value, dict):
            mapping = cast("dict[str, Any]", value)
            if mapping and set(mapping) <= set(requests):
                return dict(mapping)
    request = next(iter(requests.values()))
    what = f"the answer to {request.source_executor_id}'s request {request.request_id!r}"
    return {request.request_id: as_type(run.message, [request.response_type], what)}


async def _prepend(
    first: WorkflowEvent, rest: AsyncIterator[WorkflowEvent]
) -> AsyncIterator[WorkflowEvent]:
    yield first
    async with closing(rest) as stream:
        async for event in stream:
            yield event
