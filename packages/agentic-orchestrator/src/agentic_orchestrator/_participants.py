"""What every pattern does with its participants: name them, check them, give them the chat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Never, TypeVar, cast

from pydantic import BaseModel, Field

from agentic_core import (
    Agent,
    AgentExecutorResponse,
    AgentResponse,
    AgentRunUpdateEvent,
    AgentThread,
    ChatAgent,
    ChatMessage,
    Executor,
    ExecutorError,
    ExecutorKind,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
    ToolApprovalRequest,
    ToolApprovalResponse,
    WorkflowContext,
    handler,
    response_handler,
    to_messages,
)
from agentic_orchestrator._errors import OrchestrationConfigError, OrchestratorError

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


async def _agent_run(
    agent: Agent,
    new_input: list[ChatMessage],
    thread: AgentThread,
    ctx: WorkflowContext[Any, Any],
    answers: dict[str, Any] | None,
) -> AgentResponse:
    """One ``agent.run`` (``run_stream`` while the run is streamed) on ``thread``; with
    ``answers`` it resumes the turn waiting for tool approval (``run(responses=...)``)."""
    if not ctx.is_streaming:
        if answers is None:  # the common turn: no keyword dict to build and spread
            return await agent.run(new_input, thread=thread)
        return await agent.run(new_input, thread=thread, responses=answers)
    keywords: dict[str, Any] = {} if answers is None else {"responses": answers}
    before = len(await thread.list_messages()) + len(new_input)
    final: AgentResponse | None = None
    async for update in agent.run_stream(new_input, thread=thread, **keywords):
        await ctx.add_event(AgentRunUpdateEvent(executor_id=ctx.executor_id, update=update))
        if update.done and update.response is not None:
            final = update.response
    if final is None:  # an agent whose last update carries no response: rebuild it
        messages = (await thread.list_messages())[before:]
        text = next((m.text for m in reversed(messages) if m.role is Role.ASSISTANT), "")
        final = AgentResponse(messages=messages, text=text, agent_id=agent.id)
    return final


def no_approval_wait(response: AgentResponse, role: str) -> AgentResponse:
    """``response``, unless it waits for tool approval: a pattern's own agent (a manager, a
    selector) has no turn a person could resume, so its waiting calls fail the run, clearly."""
    if response.user_input_requests:
        tools = ", ".join(sorted({r.tool_name for r in response.user_input_requests}))
        raise OrchestratorError(
            f"{role} called tool(s) {tools} that wait for approval, but a manager's turn cannot "
            "pause for a person; give such tools to a participant agent (its calls become "
            "request_info) or mark them approval_mode='never_require' on the manager"
        )
    return response


class PausedTurn(BaseModel):
    """An agent's turn waiting for tool approval, kept per run as the executor's state."""

    thread_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])
    thread: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    """The agent's thread as the turn stopped: what it was shown, and the turn so far."""
    turn: AgentResponse
    """The turn so far (its messages end with the calls that wait)."""
    waiting: list[str] = Field(default_factory=list[str])
    """The call ids waiting for an answer."""
    answers: dict[str, ToolApprovalResponse] = Field(
        default_factory=dict[str, ToolApprovalResponse]
    )
    conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    """The pattern's conversation when the turn began (what it continues from)."""
    extra: dict[str, Any] = Field(default_factory=dict[str, Any])
    """Whatever else the pattern needs to continue (JSON)."""


class _PausedTurns(BaseModel):
    turns: list[PausedTurn]


class AgentTurnExecutor(Executor):
    """Base of the pattern executors that run an agent's turn on a fresh thread.

    A turn that stops on tool calls waiting for approval (``AgentResponse.user_input_requests``)
    is never lost: each waiting call becomes a ``request_info`` of this executor (data: the
    ``ToolApprovalRequest``; answer: a ``ToolApprovalResponse``), and the turn is kept as this
    executor's per-run state (so a checkpoint holds it and a new ``Workflow`` object resumes it).
    Once every waiting call is answered the agent resumes the turn (``run(responses=...)`` on
    the saved thread) and the pattern goes on with the whole turn as if it had not paused.
    Several turns of one run may wait at once (one per message the executor got).

    Keeping turns makes the executor stateful (a cost per superstep), so only the class
    ``turn_executor(cls, agent)`` gives for an agent whose turns may wait keeps them; the plain
    class refuses a waiting turn with an error instead of losing it.

    Subclasses call :meth:`run_turn` (None: the turn waits) and, from a ``@response_handler``
    for ``ToolApprovalRequest`` / ``ToolApprovalResponse``, :meth:`answer_approval` (None: calls
    still wait; else the finished turn and the ``PausedTurn`` it continues).
    """

    def __init__(
        self,
        id: str,  # noqa: A002
        agent: Agent,
        *,
        kind: ExecutorKind = ExecutorKind.WORKER,
    ) -> None:
        super().__init__(id, kind=kind)
        self.agent = agent
        self._paused: str | None = None

    def waiting_turn(self, call_id: str) -> PausedTurn | None:
        """The turn of this run whose call ``call_id`` waits for an answer."""
        return next((t for t in self._turns() if call_id in t.waiting), None)

    async def run_turn(
        self,
        shown: list[ChatMessage],
        ctx: WorkflowContext[Any, Any],
        *,
        conversation: list[ChatMessage] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> AgentResponse | None:
        """The agent's answer to ``shown`` (fresh thread), or None when the turn waits for
        approval (the requests are out; ``conversation`` and ``extra`` are kept with it)."""
        agent = self.agent
        thread = agent.get_new_thread()
        if ctx.is_streaming:
            response = await _agent_run(agent, shown, thread, ctx, None)
        else:  # the common turn, awaited here: a coroutine less per turn
            response = await agent.run(shown, thread=thread)
        if not response.user_input_requests:
            return response
        return await self._settle(
            response, thread, ctx, list(conversation or ()), dict(extra or {})
        )

    async def answer_approval(
        self,
        request: ToolApprovalRequest,
        answer: ToolApprovalResponse,
        ctx: WorkflowContext[Any, Any],
    ) -> tuple[AgentResponse, PausedTurn] | None:
        """Keep ``answer``; once every waiting call of its turn has one, resume the turn and
        return it whole (with the paused turn's data), unless it stops on approvals again."""
        turns = self._turns()
        index = next(
            (i for i, t in enumerate(turns) if request.call_id in t.waiting),
            None,
        )
        if index is None:
            raise ExecutorError(
                f"executor {self.id!r} got an answer to tool call {request.call_id!r}, but no "
                "turn of this run waits for it"
            )
        paused = turns[index]
        paused.answers[request.call_id] = answer
        if any(call_id not in paused.answers for call_id in paused.waiting):
            self._save(turns)
            return None
        self._save([t for i, t in enumerate(turns) if i != index])
        thread = self.agent.get_new_thread(**paused.metadata)
        if paused.thread_id is not None:
            thread.id = paused.thread_id
        await thread.add_messages(paused.thread)
        answers = {k: v.model_dump(mode="json") for k, v in paused.answers.items()}
        resumed = await _agent_run(self.agent, [], thread, ctx, answers)
        messages = [*paused.turn.messages, *resumed.messages]
        # The thread holds the turn as it ran (an edited call with its edited arguments).
        start = len(paused.thread) - len(paused.turn.messages)
        ran = (await thread.list_messages())[start:]
        if start >= 0 and len(ran) == len(messages):
            messages = ran
        whole = resumed.model_copy(
            update={"messages": messages, "usage": paused.turn.usage + resumed.usage}
        )
        settled = await self._settle(whole, thread, ctx, paused.conversation, paused.extra)
        return None if settled is None else (settled, paused)

    def _turns(self) -> list[PausedTurn]:
        if self._paused is None:
            return []
        return _PausedTurns.model_validate_json(self._paused).turns

    def _save(self, turns: list[PausedTurn]) -> None:
        self._paused = _PausedTurns(turns=turns).model_dump_json() if turns else None

    async def _settle(
        self,
        response: AgentResponse,
        thread: AgentThread,
        ctx: WorkflowContext[Any, Any],
        conversation: list[ChatMessage],
        extra: dict[str, Any],
    ) -> AgentResponse | None:
        if not response.user_input_requests:
            return response
        paused = PausedTurn(
            thread_id=thread.id,
            metadata=dict(thread.metadata),
            thread=await thread.list_messages(),
            turn=response,
            waiting=[r.call_id for r in response.user_input_requests],
            conversation=conversation,
            extra=extra,
        )
        if not self.is_stateful:
            tools = ", ".join(sorted({r.tool_name for r in response.user_input_requests}))
            raise ExecutorError(
                f"agent {self.agent.name!r} called tool(s) {tools} that wait for approval, but "
                "no tool of it needed approval when the workflow was built; give the agent its "
                "tools (approval_mode=...) before building the workflow"
            )
        turns = self._turns()
        clash = sorted({c for t in turns for c in t.waiting} & set(paused.waiting))
        if clash:
            raise ExecutorError(
                f"executor {self.id!r}: tool call id(s) {', '.join(map(repr, clash))} already "
                "wait for approval in another turn of this run; call ids must be unique"
            )
        self._save([*turns, paused])
        for request in response.user_input_requests:
            await ctx.request_info(request, ToolApprovalResponse)
        return None


class _KeepsPausedTurns(AgentTurnExecutor):
    """What makes an ``AgentTurnExecutor`` keep waiting turns as per-run state."""

    def snapshot_state(self) -> Any:
        """The turns waiting for approval, as one JSON string (None: no turn waits)."""
        return self._paused

    def restore_state(self, state: Any) -> None:
        """Take this run's waiting turns (None: none)."""
        self._paused = state


_TE = TypeVar("_TE", bound=AgentTurnExecutor)
_WITH_STATE: dict[type[AgentTurnExecutor], type[AgentTurnExecutor]] = {}


def may_wait_for_approval(agent: Agent) -> bool:
    """Whether a turn of ``agent`` may stop on tool calls waiting for approval: for a
    ``ChatAgent``, whether a tool of it requires approval (its own mode, else the agent's
    default); for any other agent, unknown, so yes."""
    if not isinstance(agent, ChatAgent):
        return True
    default = agent.tool_approval_mode
    for agent_tool in agent.tools:
        own: object = getattr(agent_tool, "approval_mode", None)
        if (own if own in ("always_require", "never_require") else default) == "always_require":
            return True
    return False


def turn_executor(cls: type[_TE], agent: Agent) -> type[_TE]:
    """``cls``, keeping turns that wait for approval as per-run state when ``agent``'s turns
    may wait (a stateful executor costs a little per superstep; others stay stateless)."""
    if not may_wait_for_approval(agent):
        return cls
    variant = _WITH_STATE.get(cls)
    if variant is None:
        variant = type(
            cls.__name__,
            (_KeepsPausedTurns, cls),
            {"__qualname__": cls.__qualname__, "__module__": cls.__module__},
        )
        _WITH_STATE[cls] = variant
    return cast("type[_TE]", variant)


class ConversationAgent(AgentTurnExecutor):
    """An agent that answers the whole conversation it is sent, on a fresh thread each time.

    The conversation travels in the messages; the only per-run state is a turn waiting for
    tool approval (see ``AgentTurnExecutor``). It sends an ``AgentExecutorResponse``, as
    ``AgentExecutor`` does. ``chain_only``: shown only the previous agent's reply (MAF's
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
        super().__init__(id, agent)
        self.chain_only = chain_only
        self.yield_response = yield_response

    # Two handlers, the previous agent's response first: a handler for one class is found by
    # the message's type once and cached, where a union with list[ChatMessage] is matched
    # (each element checked) at every message.
    @handler
    async def answer_previous(
        self,
        message: AgentExecutorResponse,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
        """Answer the conversation the previous agent passed on, and pass it on."""
        conversation = list(message.full_conversation)
        shown = list(message.agent_response.messages) if self.chain_only else conversation
        response = await self.run_turn(shown, ctx, conversation=conversation)
        if response is not None:
            await self._pass_on(conversation, response, ctx)

    @handler
    async def answer(
        self,
        message: str | ChatMessage | list[ChatMessage],
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
        """Answer the caller's input (or a custom executor's conversation), and pass it on."""
        conversation = to_conversation(message)
        response = await self.run_turn(conversation, ctx, conversation=conversation)
        if response is not None:
            await self._pass_on(conversation, response, ctx)

    @response_handler
    async def answer_tool_approval(
        self,
        request: ToolApprovalRequest,
        answer: ToolApprovalResponse,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
        """A person's answer to a waiting tool call; the whole turn answered, it goes on."""
        resumed = await self.answer_approval(request, answer, ctx)
        if resumed is not None:
            response, paused = resumed
            await self._pass_on(paused.conversation, response, ctx)

    async def _pass_on(
        self,
        conversation: list[ChatMessage],
        response: AgentResponse,
        ctx: WorkflowContext[AgentExecutorResponse, AgentResponse],
    ) -> None:
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
