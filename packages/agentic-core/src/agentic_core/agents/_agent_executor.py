"""AgentExecutor: an agent as a node of a workflow graph."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._executor import Executor, ExecutorKind, handler
from agentic_core.protocols._agent import Agent, AgentResponse
from agentic_core.protocols._events import AgentRunUpdateEvent
from agentic_core.protocols._messages import ChatMessage, Role


class AgentExecutorResponse(BaseModel):
    """What an AgentExecutor sends on: its agent's response and the conversation so far."""

    executor_id: str
    agent_response: AgentResponse
    full_conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])


AgentExecutorInput = str | ChatMessage | list[ChatMessage] | AgentExecutorResponse


class AgentExecutor(Executor):
    """Runs ``agent`` on each message it receives and sends an ``AgentExecutorResponse`` on.

    A str becomes a user message; an ``AgentExecutorResponse`` from a previous agent passes its
    whole conversation along, so a chain of AgentExecutors is a conversation. While the run is
    streamed (``run_stream``), the agent streams too and each update surfaces at once as an
    ``AgentRunUpdateEvent``. ``output_response=True`` also yields the ``AgentResponse`` as a
    workflow output.
    """

    streams_live = True

    def __init__(
        self,
        agent: Agent,
        *,
        id: str | None = None,  # noqa: A002
        output_response: bool = False,
    ) -> None:
        super().__init__(id or agent.name, kind=ExecutorKind.WORKER)
        self.agent = agent
        self.output_response = output_response

    @handler
    async def run_agent(
        self,
        message: AgentExecutorInput,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
        """Run the agent on the conversation ``message`` carries."""
        conversation = _conversation(message)
        thread = self.agent.get_new_thread()
        if ctx.is_streaming:
            async for update in self.agent.run_stream(conversation, thread=thread):
                await ctx.add_event(AgentRunUpdateEvent(executor_id=self.id, update=update))
            produced = (await thread.list_messages())[len(conversation) :]
            response = AgentResponse(
                messages=produced,
                text=next((m.text for m in reversed(produced) if m.role is Role.ASSISTANT), ""),
                agent_id=self.agent.id,
            )
        else:
            response = await self.agent.run(conversation, thread=thread)
        await ctx.send_message(
            AgentExecutorResponse(
                executor_id=self.id,
                agent_response=response,
                full_conversation=[*conversation, *response.messages],
            )
        )
        if self.output_response:
            await ctx.yield_output(response)


def _conversation(message: Any) -> list[ChatMessage]:
    if isinstance(message, AgentExecutorResponse):
        return list(message.full_conversation)
    if isinstance(message, str):
        return [ChatMessage.user(message)]
    if isinstance(message, ChatMessage):
        return [message]
    return list(message)  # pyright: ignore[reportUnknownArgumentType]
