"""What every pattern does with its participants: name them, check them, give them the chat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Never, TypeVar, cast

from agentic_core import (
    Agent,
    AgentExecutorResponse,
    AgentResponse,
    AgentRunUpdateEvent,
    ChatMessage,
    Executor,
    ExecutorError,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
    WorkflowContext,
    handler,
    to_messages,
)
from agentic_orchestrator._errors import OrchestrationConfigError

_T = TypeVar("_T")

Participant = Agent | Executor
"""A pattern's participant: any core ``Agent`` (run in an ``AgentExecutor``) or an ``Executor``."""

ConversationInput = str | ChatMessage | list[ChatMessage]
"""What a pattern's workflow accepts: a prompt, one message or a conversation."""


def participant_name(participant: object) -> str:
    """An executor's id, an agent's name."""
    if isinstance(participant, Executor):
        return participant.id
    if isinstance(participant, Agent):
        return participant.name
    raise OrchestrationConfigError(
        f"a participant must be an Agent or an Executor, got {type(participant).__qualname__}"
    )


def named_participants(
    participants: Sequence[Participant], pattern: str, *, reserved: Sequence[str] = ()
) -> dict[str, Participant]:
    """``{name: participant}`` in order; empty lists, duplicate or reserved names are errors."""
    if isinstance(participants, (str, bytes)) or not participants:
        raise OrchestrationConfigError(f"{pattern}: participants must be a non-empty sequence")
    named: dict[str, Participant] = {}
    for participant in participants:
        name = participant_name(participant)
        if not name:
            raise OrchestrationConfigError(f"{pattern}: a participant has an empty name")
        if name in named:
            raise OrchestrationConfigError(
                f"{pattern}: two participants are named {name!r}; names must be unique "
                "(they are the executor ids and what selectors and handoffs name)"
            )
        if name in reserved:
            raise OrchestrationConfigError(
                f"{pattern}: the participant name {name!r} is reserved for the pattern's own "
                f"executors ({', '.join(reserved)})"
            )
        named[name] = participant
    return named


def require_participants(participants: dict[str, _T] | None, pattern: str) -> dict[str, _T]:
    """The participants given, or a clear error when none were."""
    if participants is None:
        raise OrchestrationConfigError(f"{pattern}: no participants; call .participants([...])")
    return participants


def description_of(participant: Participant) -> str:
    """A participant's description (an agent's ``description``, else its name)."""
    description = getattr(participant, "description", None)
    return (
        description
        if isinstance(description, str) and description
        else participant_name(participant)
    )


def to_conversation(message: object) -> list[ChatMessage]:
    """The conversation ``message`` stands for: a str is one user message."""
    if isinstance(message, AgentExecutorResponse):
        return list(message.full_conversation)
    try:
        return to_messages(cast("str | ChatMessage | list[ChatMessage] | None", message))
    except TypeError as exc:
        raise ExecutorError(f"a pattern's {exc}") from None


def accepts(executor: Executor, sample: object) -> bool:
    """Whether one of ``executor``'s handlers takes a message like ``sample``."""
    try:
        executor.find_handler(sample)
    except ExecutorError:
        return False
    return True


def spoken(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages without tool traffic: what one agent said, fit for another agent to read.

    Function calls and results stay with the agent that made them (another agent has none of
    those tools); messages left with no content are dropped.
    """
    kept: list[ChatMessage] = []
    for message in messages:
        if message.role is Role.TOOL:
            continue
        contents = [
            c
            for c in message.contents
            if not isinstance(c, (FunctionCallContent, FunctionResultContent))
        ]
        if not contents:
            continue
        if len(contents) != len(message.contents):
            kept.append(message.model_copy(update={"contents": contents}))
        else:
            kept.append(message)
    return kept


def said_by(messages: Sequence[ChatMessage], speaker: str | None) -> list[ChatMessage]:
    """``spoken(messages)``, each assistant message without an author stamped ``speaker``."""
    said = spoken(messages)
    if speaker is None:
        return said
    return [
        m.model_copy(update={"author_name": speaker})
        if m.role is Role.ASSISTANT and m.author_name is None
        else m
        for m in said
    ]


def kept_turn(
    messages: Sequence[ChatMessage], speaker: str | None, *, full_history: bool
) -> list[ChatMessage]:
    """What of one turn joins a shared conversation, assistant messages stamped ``speaker``.

    ``full_history``: every message with content, tool calls and results included (LangGraph's
    ``output_mode="full_history"``); otherwise ``said_by``: the spoken messages only.
    """
    if not full_history:
        return said_by(messages, speaker)
    return [
        m.model_copy(update={"author_name": speaker})
        if speaker is not None and m.role is Role.ASSISTANT and m.author_name is None
        else m
        for m in messages
        if any(not isinstance(c, TextContent) or c.text for c in m.contents)
    ]


def final_assistant_message(response: AgentResponse, author: str) -> ChatMessage:
    """The last assistant message of ``response`` with text (an empty one when there is none)."""
    for message in reversed(response.messages):
        if message.role is Role.ASSISTANT and message.text:
            if message.author_name is None:
                return message.model_copy(update={"author_name": author})
            return message
    return ChatMessage(
        role=Role.ASSISTANT, contents=[TextContent(text=response.text)], author_name=author
    )


async def answer_conversation(
    agent: Agent, conversation: list[ChatMessage], ctx: WorkflowContext[Any, Any]
) -> AgentResponse:
    """``agent``'s answer to ``conversation`` on a fresh thread; streamed as
    ``AgentRunUpdateEvent``s of ``ctx``'s executor while the run is streamed."""
    thread = agent.get_new_thread()
    if not ctx.is_streaming:
        return await agent.run(conversation, thread=thread)
    final: AgentResponse | None = None
    async for update in agent.run_stream(conversation, thread=thread):
        await ctx.add_event(AgentRunUpdateEvent(executor_id=ctx.executor_id, update=update))
        if update.done and update.response is not None:
            final = update.response
    if final is None:  # an agent whose last update carries no response: rebuild it
        messages = (await thread.list_messages())[len(conversation) :]
        text = next((m.text for m in reversed(messages) if m.role is Role.ASSISTANT), "")
        final = AgentResponse(messages=messages, text=text, agent_id=agent.id)
    return final


class ConversationAgent(Executor):
    """An agent that answers the whole conversation it is sent, on a fresh thread each time.

    Stateless (the conversation travels in the messages), so nothing is saved or restored per
    superstep; it sends an ``AgentExecutorResponse``, as ``AgentExecutor`` does.
    ``chain_only``: shown only the previous agent's reply (MAF's
    ``chain_only_agent_responses``); ``yield_response``: its response is also a run output.
    """

    def __init__(
        self,
        agent: Agent,
        id: str,  # noqa: A002
        *,
        chain_only: bool = False,
        yield_response: bool = False,
    ) -> None:
        super().__init__(id)
        self.agent = agent
        self.chain_only = chain_only
        self.yield_response = yield_response

    @handler
    async def answer(
        self,
        message: str | ChatMessage | list[ChatMessage] | AgentExecutorResponse,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
        """Answer, and send the conversation with the answer on."""
        conversation = to_conversation(message)
        shown = conversation
        if self.chain_only and isinstance(message, AgentExecutorResponse):
            shown = list(message.agent_response.messages)
        response = await answer_conversation(self.agent, shown, ctx)
        if self.yield_response:
            await ctx.yield_output(response)
        await ctx.send_message(
            AgentExecutorResponse(
                executor_id=self.id,
                agent_response=response,
                full_conversation=[*conversation, *response.messages],
            )
        )


class ConversationStart(Executor):
    """The first node of a pattern: whatever the caller sent, as a ``list[ChatMessage]``."""

    @handler
    async def start(
        self, message: ConversationInput, ctx: WorkflowContext[list[ChatMessage]]
    ) -> None:
        """Send the caller's input on as a conversation."""
        await ctx.send_message(to_conversation(message))


class ResponseToConversation(Executor):
    """Between an agent and a custom executor: the agent's response as the whole conversation."""

    @handler
    async def convert(
        self, message: AgentExecutorResponse, ctx: WorkflowContext[list[ChatMessage]]
    ) -> None:
        """Send ``full_conversation`` on."""
        await ctx.send_message(list(message.full_conversation))


class ConversationOutput(Executor):
    """The last node of a pattern: yields the conversation it receives as the run's output
    (unless ``yield_conversation`` is False: the participants chose the outputs)."""

    def __init__(self, id: str, *, yield_conversation: bool = True) -> None:  # noqa: A002
        super().__init__(id)
        self.yield_conversation = yield_conversation

    @handler
    async def finish(
        self,
        message: AgentExecutorResponse | list[ChatMessage],
        ctx: WorkflowContext[Never, list[ChatMessage]],
    ) -> None:
        """Yield the conversation."""
        if self.yield_conversation:
            await ctx.yield_output(to_conversation(message))
