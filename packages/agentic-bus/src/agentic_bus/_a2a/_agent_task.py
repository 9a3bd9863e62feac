"""A core ``Agent`` behind A2A: each task is one turn of the conversation of its context.

The A2A ``contextId`` names an ``AgentThread`` kept in the state store. For a client that may
follow the task (a streamed message, a send returning at once) the agent streams
(``run_stream``): each text chunk becomes an ``append`` chunk of the task's ``response``
artifact as it comes. A plain blocking ``SendMessage`` waits for the whole answer anyway: the
agent ``run``s and the answer is the artifact. A turn that waits for tool approvals
(``user_input_requests``) leaves the task ``input-required`` with the requests as data; the next
message on the task answers them (``responses=...``) and the turn goes on.
"""

from __future__ import annotations

import uuid
from typing import Any

from a2a.types import TaskState

from agentic_bus._a2a._answers import approval_answers, approval_question, output_parts
from agentic_bus._a2a._executor import RunSlots, TaskExecutor, TaskRun, closing
from agentic_bus._a2a._parts import chat_message, text_part
from agentic_bus._a2a._served_state import Pending, ServedState
from agentic_core import Agent, AgentResponse, ChatMessage

__all__ = ["AgentTaskExecutor"]

ARTIFACT_NAME = "response"


class AgentTaskExecutor(TaskExecutor):
    """Runs ``agent`` for the tasks of an A2A server."""

    def __init__(self, agent: Agent, state: ServedState, slots: RunSlots, timeout_s: float) -> None:
        super().__init__(agent.name, state, slots, timeout_s)
        self.agent = agent

    async def work(self, run: TaskRun) -> None:
        """One turn (or the rest of a turn that waited for approvals)."""
        async with self.state.context_lock(run.context_id):
            pending = None if run.new else await self.state.pending(run.task_id)
            thread = await self.state.thread(run.context_id, self.agent)
            messages: ChatMessage | None = None
            answers: dict[str, Any] = {}
            if pending is not None and pending.approvals:
                answers["responses"] = approval_answers(run.message, pending.approvals)
            else:
                messages = chat_message(run.message)
            artifact_id = uuid.uuid4().hex
            streamed = False
            final: AgentResponse | None = None
            if not run.watched:
                final = await self.agent.run(messages, thread=thread, **answers)
            else:
                stream = self.agent.run_stream(messages, thread=thread, **answers)
                async with closing(stream) as updates:
                    async for update in updates:
                        if update.done:
                            final = update.response
                        elif update.text:
                            await run.updater.add_artifact(
                                [text_part(update.text)],
                                artifact_id=artifact_id,
                                name=ARTIFACT_NAME,
                                append=streamed,
                            )
                            streamed = True
            await self.state.save_thread(run.context_id, thread)
        await self._finish(run, final, artifact_id, streamed, waited=pending is not None)

    async def _finish(
        self,
        run: TaskRun,
        final: AgentResponse | None,
        artifact_id: str,
        streamed: bool,
        *,
        waited: bool,
    ) -> None:
        if final is not None and final.user_input_requests:
            await self.state.set_pending(run.task_id, Pending(approvals=final.user_input_requests))
            await run.say(
                TaskState.TASK_STATE_INPUT_REQUIRED, approval_question(final.user_input_requests)
            )
            return
        if waited:  # (the task's runs take turns: nothing else set it meanwhile)
            await self.state.clear_pending(run.task_id)
        if not streamed and final is not None and final.text:
            # An agent that does not stream (or a reply of data only): the whole answer at once.
            await run.updater.add_artifact(
                output_parts(final), artifact_id=artifact_id, name=ARTIFACT_NAME
            )
        await run.updater.complete()
