"""GroupChatBuilder: a manager picks who speaks next until a termination condition holds."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, NamedTuple, Self

from pydantic import BaseModel

from agentic_core import (
    Agent,
    AgentExecutor,
    AgentExecutorResponse,
    ChatMessage,
    CheckpointStore,
    Executor,
    ExecutorKind,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_orchestrator._builder_base import PatternBuilder
from agentic_orchestrator._errors import OrchestrationConfigError, SpeakerSelectionError
from agentic_orchestrator._group_chat_state import GroupChatState, Selector, TerminationCondition
from agentic_orchestrator._participants import (
    Participant,
    accepts,
    description_of,
    kept_turn,
    named_participants,
    no_approval_wait,
    require_participants,
    to_conversation,
)
from agentic_orchestrator._saved_state import ConversationJson, LastSaved, json_text
from agentic_orchestrator._speaker_choice import ManagerDecision, choose_speaker

_MANAGER = "group_chat_manager"
_SAMPLE_CONVERSATION = [ChatMessage.user("sample")]

Choose = Callable[[GroupChatState], Awaitable[ManagerDecision]]


class _ChatState(BaseModel):
    """The manager's saved state as its JSON reads (what a checkpoint written elsewhere holds)."""

    conversation: list[ChatMessage]
    round: int
    history: list[str]


class _Saved(NamedTuple):
    """A state this process saved: the conversation with its JSON, the round, the speakers."""

    conversation: ConversationJson
    round: int
    history: tuple[str, ...]


# The chat states this process saved lately, by their string: the next superstep restores the
# string the last one saved and gets the chat back without parsing it, and its next snapshot
# dumps only the messages added since.
_LAST: LastSaved[_Saved] = LastSaved(64)


class _GroupChatManager(Executor):
    """The hub of the star: keeps the conversation, checks termination, picks the next speaker."""

    def __init__(
        self,
        participants: Mapping[str, str],
        choose: Choose,
        termination: TerminationCondition | None,
        max_rounds: int | None,
        manager_name: str,
        full_history: bool = False,
    ) -> None:
        super().__init__(_MANAGER, kind=ExecutorKind.ORCHESTRATOR)
        self.participants = dict(participants)
        self.choose = choose
        self.termination = termination
        self.max_rounds = max_rounds
        self.manager_name = manager_name
        self.full_history = full_history
        self._reset()

    def _reset(self) -> None:
        self._started = False
        self._conversation: list[ChatMessage] = []
        self._round = 0
        self._history: list[str] = []
        self._dumped = ConversationJson()  # the JSON of the conversation as last saved

    def snapshot_state(self) -> Any:
        """This run's conversation, round and speakers, as one JSON string (``_ChatState``'s).

        One string, not nested data: the engine copies executor state between supersteps,
        and a string is copied at no cost whatever the length of the chat. Only the messages
        added since the state was restored are dumped (see ``_saved_state``).
        """
        if not self._started:
            return None
        dumped = self._dumped.extended(self._conversation)
        saved = (
            f'{{"conversation":{dumped.json},"round":{self._round},'
            f'"history":{json_text(self._history)}}}'
        )
        _LAST.remember(saved, _Saved(dumped, self._round, tuple(self._history)))
        return saved

    def restore_state(self, state: Any) -> None:
        """Take this run's chat (None: it has not started)."""
        self._reset()
        if state is None:
            return
        self._started = True
        last = _LAST.get(state)
        if last is None:  # saved by another process, or long ago: parsed
            parsed = _ChatState.model_validate_json(state)
            self._conversation = parsed.conversation
            self._round = parsed.round
            self._history = parsed.history
            return
        self._dumped = last.conversation
        self._conversation = list(last.conversation.messages)  # appended to: this run's own list
        self._round = last.round
        self._history = list(last.history)

    # Two handlers, an agent's turn first: a handler for one class is found by the message's
    # type once and cached, where a union with list[ChatMessage] is matched at every message.
    @handler
    async def on_agent_turn(
        self,
        message: AgentExecutorResponse,
        ctx: WorkflowContext[list[ChatMessage], list[ChatMessage]],
    ) -> None:
        """An agent's turn (or, as the first message of a run, the task); then the next turn."""
        await self._next_turn(message, ctx)

    @handler
    async def on_message(
        self,
        message: str | ChatMessage | list[ChatMessage],
        ctx: WorkflowContext[list[ChatMessage], list[ChatMessage]],
    ) -> None:
        """The task (first message of a run) or an executor's turn; then the next turn."""
        await self._next_turn(message, ctx)

    async def _next_turn(
        self,
        message: str | ChatMessage | list[ChatMessage] | AgentExecutorResponse,
        ctx: WorkflowContext[list[ChatMessage], list[ChatMessage]],
    ) -> None:
        if not self._started:
            self._started = True
            self._conversation = to_conversation(message)
        else:
            self._conversation.extend(self._turn(message))
        state = self._view()
        if await self._should_end(state):
            await ctx.yield_output(list(self._conversation))
            return
        decision = await self.choose(state)
        if decision.terminate:
            if decision.final_message:
                self._conversation.append(
                    ChatMessage.assistant(decision.final_message, author_name=self.manager_name)
                )
            await ctx.yield_output(list(self._conversation))
            return
        speaker = decision.next_speaker
        if speaker not in self.participants:
            raise SpeakerSelectionError(
                f"the group chat's selector chose {speaker!r}, which is not a participant "
                f"(participants: {', '.join(self.participants)})"
            )
        self._round += 1
        self._history.append(speaker)
        await ctx.send_message(list(self._conversation), target_id=speaker)

    def _turn(self, message: Any) -> list[ChatMessage]:
        """What the last speaker added, stamped with its name (tool traffic: full history only)."""
        speaker = self._history[-1] if self._history else None
        if isinstance(message, AgentExecutorResponse):
            added = self._agent_turn(message)
        else:
            known = {m.message_id for m in self._conversation}
            added = [m for m in to_conversation(message) if m.message_id not in known]
        return kept_turn(added, speaker, full_history=self.full_history)

    def _agent_turn(self, message: AgentExecutorResponse) -> list[ChatMessage]:
        """The speaker's whole turn: what its conversation holds after the last message it was
        sent. A turn that waited for tool approval answers with only its resumed part, so the
        calls that waited are found there; else (no such message) the response's messages."""
        full = message.full_conversation
        if self._conversation:
            last = self._conversation[-1].message_id
            for index in range(len(full) - 1, -1, -1):
                if full[index].message_id == last:
                    return list(full[index + 1 :])
        return list(message.agent_response.messages)

    def _view(self) -> GroupChatState:
        return GroupChatState(
            conversation=tuple(self._conversation),
            participants=self.participants,
            current_round=self._round,
            history=tuple(self._history),
        )

    async def _should_end(self, state: GroupChatState) -> bool:
        if self.max_rounds is not None and state.current_round >= self.max_rounds:
            return True
        if self.termination is None:
            return False
        verdict = self.termination(state)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)


class GroupChatBuilder(PatternBuilder):
    """A star: a manager gives the turn to one participant at a time; all share one conversation.

    Each turn the manager picks the next speaker, with a selector function
    (:meth:`with_orchestrator_func`, e.g. :func:`round_robin_selector`) or a manager agent
    (:meth:`with_orchestrator_agent`, an LLM that reads the transcript). The speaker sees
    every message said since its last turn (everything is broadcast into its context) and
    answers; the chat ends when a termination condition holds or after ``max_iterations``
    turns, and the run's output is the whole conversation as a ``list[ChatMessage]``. The
    conversation keeps what the participants said; ``full_history=True`` (LangGraph's
    ``output_mode="full_history"``) keeps their tool calls and results too::

        workflow = (
            GroupChatBuilder()
            .participants([writer, critic])
            .with_orchestrator_func(round_robin_selector)
            .with_termination_condition(keyword_termination("APPROVED"))
            .with_max_iterations(10)
            .build()
        )

    A chat with neither a termination condition nor a maximum is refused at build time.
    """

    def __init__(
        self,
        *,
        participants: Sequence[Participant] | None = None,
        selection_func: Selector | None = None,
        orchestrator_agent: Agent | None = None,
        termination_condition: TerminationCondition | None = None,
        max_rounds: int | None = None,
        name: str | None = None,
        full_history: bool = False,
        checkpoint_store: CheckpointStore | None = None,
    ) -> None:
        self._participants: dict[str, Participant] | None = None
        self._full_history = full_history
        self._selector: Selector | None = None
        self._manager_agent: Agent | None = None
        self._manager_retries = 2
        self._termination: TerminationCondition | None = None
        self._max_rounds: int | None = None
        self._name = name
        self._checkpoint_store = checkpoint_store
        if participants is not None:
            self.participants(participants)
        if selection_func is not None:
            self.with_orchestrator_func(selection_func)
        if orchestrator_agent is not None:
            self.with_orchestrator_agent(orchestrator_agent)
        if termination_condition is not None:
            self.with_termination_condition(termination_condition)
        if max_rounds is not None:
            self.with_max_iterations(max_rounds)

    def participants(self, participants: Sequence[Participant]) -> Self:
        """Who may speak (agents, or executors taking a ``list[ChatMessage]``; unique names)."""
        self._participants = named_participants(
            participants, "GroupChatBuilder", reserved=(_MANAGER,)
        )
        return self

    def with_orchestrator_func(self, selector: Selector) -> Self:
        """``selector(state) -> name`` (sync or async) picks each next speaker."""
        if not callable(selector):
            raise OrchestrationConfigError(
                f"GroupChatBuilder: the selector must be callable, got {selector!r}"
            )
        self._selector = selector
        return self

    def with_orchestrator_agent(self, agent: Agent, *, max_retries: int = 2) -> Self:
        """An agent manages the chat: it reads the transcript and names the next speaker.

        It answers with JSON ``{"next_speaker": name}`` (or ``{"terminate": true,
        "final_message": ...}`` to end the chat) or a bare name. A name that is not a
        participant is corrected and asked again up to ``max_retries`` times, then the run fails
        with ``SpeakerSelectionError`` naming it.
        """
        if max_retries < 0:
            raise OrchestrationConfigError("GroupChatBuilder: max_retries must be >= 0")
        self._manager_agent = agent
        self._manager_retries = max_retries
        return self

    def with_termination_condition(self, condition: TerminationCondition) -> Self:
        """``condition(state) -> True`` (sync or async) ends the chat; checked before each turn."""
        if not callable(condition):
            raise OrchestrationConfigError(
                f"GroupChatBuilder: the termination condition must be callable, got {condition!r}"
            )
        self._termination = condition
        return self

    def with_max_iterations(self, n: int) -> Self:
        """End the chat after ``n`` turns at most."""
        if isinstance(n, bool) or n < 1:
            raise OrchestrationConfigError(
                f"GroupChatBuilder: max iterations must be a positive int, got {n!r}"
            )
        self._max_rounds = n
        return self

    with_max_rounds = with_max_iterations

    def with_full_history(self, enabled: bool = True) -> Self:
        """Keep every message of every turn, tool calls and results too.

        By default the shared conversation (what each speaker is shown, what selectors and
        termination conditions see, the output) keeps only what the participants said.
        LangGraph-supervisor calls this ``output_mode="full_history"``.
        """
        self._full_history = enabled
        return self

    def build(self) -> Workflow:
        """The group chat as a core ``Workflow``."""
        named = require_participants(self._participants, "GroupChatBuilder")
        if self._selector is not None and self._manager_agent is not None:
            raise OrchestrationConfigError(
                "GroupChatBuilder: give either with_orchestrator_func or with_orchestrator_agent, "
                "not both"
            )
        if self._selector is None and self._manager_agent is None:
            raise OrchestrationConfigError(
                "GroupChatBuilder: no manager; call with_orchestrator_func(selector) or "
                "with_orchestrator_agent(agent)"
            )
        if self._termination is None and self._max_rounds is None:
            raise OrchestrationConfigError(
                "GroupChatBuilder: the chat could never end; set with_termination_condition(...) "
                "or with_max_iterations(n)"
            )
        nodes: list[Executor] = []
        for name, participant in named.items():
            if isinstance(participant, Executor):
                if not accepts(participant, _SAMPLE_CONVERSATION):
                    raise OrchestrationConfigError(
                        f"GroupChatBuilder: executor {name!r} has no handler for a "
                        "list[ChatMessage], the conversation it is given on its turn"
                    )
                nodes.append(participant)
            else:
                nodes.append(AgentExecutor(participant, id=name))
        manager = _GroupChatManager(
            {name: description_of(p) for name, p in named.items()},
            self._choose(),
            self._termination,
            self._max_rounds,
            self._manager_agent.name if self._manager_agent is not None else _MANAGER,
            self._full_history,
        )
        supersteps = 100 if self._max_rounds is None else max(100, 2 * self._max_rounds + 4)
        builder = WorkflowBuilder(self._name or "group_chat", max_supersteps=supersteps)
        builder.set_start_executor(manager)
        for node in nodes:
            builder.add_edge(manager, node)
            builder.add_edge(node, manager)
        return self._finish(builder)

    def _choose(self) -> Choose:
        selector, agent, retries = self._selector, self._manager_agent, self._manager_retries
        if selector is not None:

            async def by_selector(state: GroupChatState) -> ManagerDecision:
                chosen = selector(state)
                if inspect.isawaitable(chosen):
                    chosen = await chosen
                return ManagerDecision(next_speaker=chosen)

            return by_selector
        assert agent is not None  # noqa: S101 - build() checked it

        async def ask(prompt: list[ChatMessage]) -> str:
            response = await agent.run(prompt, thread=agent.get_new_thread())
            return no_approval_wait(response, f"the manager agent {agent.name!r}").text

        async def by_agent(state: GroupChatState) -> ManagerDecision:
            return await choose_speaker(
                ask,
                state,
                max_retries=retries,
                allow_terminate=True,
                who=f"the manager agent {agent.name!r}",
            )

        return by_agent
