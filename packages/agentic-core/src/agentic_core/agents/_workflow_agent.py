"""WorkflowAgent: a whole workflow behind the Agent interface."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from agentic_core._errors import AgentError
from agentic_core.agents._agent_executor import AgentExecutorResponse
from agentic_core.graph._typing import can_accept
from agentic_core.protocols._agent import (
    AgentInput,
    AgentResponse,
    AgentResponseUpdate,
    to_messages,
)
from agentic_core.protocols._events import (
    AgentRunUpdateEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
)
from agentic_core.protocols._messages import ChatMessage, Role, UsageDetails
from agentic_core.protocols._thread import AgentThread

if TYPE_CHECKING:
    from agentic_core.graph._workflow import Workflow


class WorkflowAgent:
    """An agent whose answer is a workflow run: the conversation goes in, outputs come back.

    The start executor receives the thread's whole conversation as ``list[ChatMessage]``.
    Outputs become the response's messages: an ``AgentResponse`` or ``AgentExecutorResponse``
    gives its messages, a ``ChatMessage`` itself, a str an assistant message, anything else an
    assistant message holding its JSON.
    """

    def __init__(
        self,
        workflow: Workflow,
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - the API's name
    ) -> None:
        start = workflow.get_executor(workflow.start_executor_id)
        if not any(can_accept(s.message_type, list[ChatMessage]) for s in start.handlers):
            raise AgentError(
                f"workflow {workflow.name!r} cannot run as an agent: its start executor "
                f"'{start.id}' has no handler for list[ChatMessage]"
            )
        self.workflow = workflow
        self.name = name or workflow.name
        self.id = id or f"{self.name}-{uuid.uuid4().hex[:8]}"

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        """A fresh conversation."""
        return AgentThread(metadata=metadata)

    async def run(
        self, messages: AgentInput = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AgentResponse:
        """Run the workflow on the conversation and answer with its outputs."""
        del kwargs
        thread = thread or self.get_new_thread()
        conversation = await self._conversation(messages, thread)
        result = await self.workflow.run(conversation)
        produced, usage = _outputs_to_messages(result.outputs, self.name)
        await thread.add_messages(produced)
        return AgentResponse(
            messages=produced, text=_last_text(produced), usage=usage, agent_id=self.id
        )

    async def run_stream(
        self, messages: AgentInput = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AsyncIterator[AgentResponseUpdate]:
        """Stream the agents' updates inside the workflow, then the outputs; ``done`` last."""
        del kwargs
        thread = thread or self.get_new_thread()
        conversation = await self._conversation(messages, thread)
        outputs: list[Any] = []
        async for event in self.workflow.run_stream(conversation):
            if isinstance(event, AgentRunUpdateEvent) and isinstance(
                event.update, AgentResponseUpdate
            ):
                if not event.update.done:
                    yield event.update
            elif isinstance(event, WorkflowOutputEvent):
                outputs.append(event.data)
            elif isinstance(event, WorkflowFailedEvent):
                raise AgentError(f"workflow agent {self.name!r} failed: {event.error}")
        produced, _ = _outputs_to_messages(outputs, self.name)
        await thread.add_messages(produced)
        yield AgentResponseUpdate(author_name=self.name, done=True)

    async def _conversation(self, messages: AgentInput, thread: AgentThread) -> list[ChatMessage]:
        new = to_messages(messages)
        if new:
            await thread.add_messages(new)
        return await thread.list_messages()


def _outputs_to_messages(outputs: list[Any], name: str) -> tuple[list[ChatMessage], UsageDetails]:
    messages: list[ChatMessage] = []
    usage = UsageDetails()
    for raw in outputs:
        output = raw.agent_response if isinstance(raw, AgentExecutorResponse) else raw
        if isinstance(output, AgentResponse):
            messages.extend(output.messages)
            usage = usage + output.usage
        elif isinstance(output, ChatMessage):
            messages.append(output)
        elif isinstance(output, str):
            messages.append(ChatMessage.assistant(output, author_name=name))
        else:
            text = json.dumps(to_jsonable_python(output, fallback=str))
            messages.append(ChatMessage.assistant(text, author_name=name))
    return messages, usage


def _last_text(messages: list[ChatMessage]) -> str:
    return next((m.text for m in reversed(messages) if m.role is Role.ASSISTANT), "")
