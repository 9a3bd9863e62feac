"""MagenticBuilder: a Magentic-One manager plans, directs each turn, notices stalls, re-plans."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Self, cast

from pydantic import BaseModel, Field

from agentic_core import (
    Agent,
    AgentResponse,
    ChatClient,
    ChatMessage,
    CheckpointStore,
    Executor,
    ExecutorKind,
    ToolApprovalRequest,
    ToolApprovalResponse,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_orchestrator._builder_base import PatternBuilder
from agentic_orchestrator._errors import (
    OrchestrationConfigError,
    OrchestratorError,
    SpeakerSelectionError,
)
from agentic_orchestrator._json_reply import answer_of, as_bool, last_json_object
from agentic_orchestrator._magentic_prompts import (
    FACTS,
    FACTS_REVISION,
    FACTS_UPDATE,
    FINAL,
    LEDGER,
    PLAN,
    PLAN_REVISION,
    PLAN_UPDATE,
    PROGRESS,
    PROGRESS_CORRECTION,
)
from agentic_orchestrator._magentic_review import (
    MagenticPlanReviewRequest,
    MagenticPlanReviewResponse,
    MagenticProgressLedger,
)
from agentic_orchestrator._participants import (
    AgentTurnExecutor,
    ConversationInput,
    description_of,
    named_participants,
    no_approval_wait,
    require_participants,
    said_by,
    to_conversation,
    turn_executor,
)
from agentic_orchestrator._saved_state import ConversationJson, LastSaved, json_text
from agentic_orchestrator._speaker_choice import Transcript, transcript

_MANAGER = "magentic_manager"


class _LedgerState(BaseModel):
    """One run's Magentic state: the task, the ledgers, the team's conversation, counters."""

    task: str
    input: list[ChatMessage]
    """The caller's messages (a re-plan starts the conversation again from them)."""
    facts: str = ""
    plan: str = ""
    conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    feedback: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    """A plan reviewer's revision requests, in order: the team sees them after the task."""
    round: int = 0
    stalls: int = 0
    resets: int = 0

    def saved(self, derived: _Derived) -> tuple[str, _Derived]:
        """This state as ``model_dump_json()`` writes it, and the dumps of its message lists.

        Each list is dumped only beyond what ``derived`` already holds of it (a round adds two
        messages to the conversation; the input and the feedback rarely change).
        """
        now = _Derived(
            derived.input.extended(self.input),
            derived.conversation.extended(self.conversation),
            derived.feedback.extended(self.feedback),
            derived.transcript,
        )
        saved = (
            f'{{"task":{json_text(self.task)},"input":{now.input.json},'
            f'"facts":{json_text(self.facts)},"plan":{json_text(self.plan)},'
            f'"conversation":{now.conversation.json},"feedback":{now.feedback.json},'
            f'"round":{self.round},"stalls":{self.stalls},"resets":{self.resets}}}'
        )
        return saved, now

    def fresh_copy(self) -> _LedgerState:
        """A copy whose lists this run may change (the saved one is shared: never changed)."""
        return self.model_copy(
            update={
                "input": list(self.input),
                "conversation": list(self.conversation),
                "feedback": list(self.feedback),
            }
        )


class _Derived(NamedTuple):
    """What the manager made of a ``_LedgerState``'s message lists, kept from superstep to
    superstep so a round reads only its new messages: the JSON of each list as last saved, and
    the conversation's transcript as last written into a prompt."""

    input: ConversationJson
    conversation: ConversationJson
    feedback: ConversationJson
    transcript: Transcript


_NOTHING_DERIVED = _Derived(
    ConversationJson(), ConversationJson(), ConversationJson(), Transcript()
)
"""Nothing derived yet (shared: what ``_Derived`` holds is never changed, only replaced)."""

# The ledger states this process saved lately, by their string: the manager's next superstep
# restores the string the last one saved and gets the state back without parsing it (see
# ``_saved_state``), and its next snapshot dumps only the messages added since.
_LAST: LastSaved[tuple[_LedgerState, _Derived]] = LastSaved(64)


class MagenticTurn(BaseModel):
    """A participant's turn: the team's conversation, ending with the manager's instruction."""

    conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])


class MagenticReply(BaseModel):
    """What a participant said on its turn."""

    participant: str
    messages: list[ChatMessage] = Field(default_factory=list[ChatMessage])


class _Participant(AgentTurnExecutor):
    """Runs one agent on the team's conversation (a fresh thread each turn: the manager's
    conversation is the memory, so a re-plan can start the team afresh). A turn waiting for
    tool approval pauses the team until it is answered (see ``AgentTurnExecutor``)."""

    def __init__(self, name: str, agent: Agent) -> None:
        super().__init__(name, agent)

    @handler
    async def work(self, turn: MagenticTurn, ctx: WorkflowContext[MagenticReply]) -> None:
        """Do what the instruction asks."""
        response = await self.run_turn(turn.conversation, ctx)
        if response is not None:
            await self._reply(response, ctx)

    @response_handler
    async def on_tool_approval(
        self,
        request: ToolApprovalRequest,
        answer: ToolApprovalResponse,
        ctx: WorkflowContext[MagenticReply],
    ) -> None:
        """A person's answer to a waiting tool call; the whole turn answered, the reply."""
        resumed = await self.answer_approval(request, answer, ctx)
        if resumed is not None:
            await self._reply(resumed[0], ctx)

    async def _reply(self, response: AgentResponse, ctx: WorkflowContext[MagenticReply]) -> None:
        said = said_by(response.messages, self.id)
        await ctx.send_message(MagenticReply(participant=self.id, messages=said))


class _Manager(Executor):
    """Task ledger, progress ledger per round, stall counting, re-planning, final answer."""

    def __init__(
        self,
        manager: Agent | ChatClient,
        participants: dict[str, str],
        *,
        max_rounds: int,
        max_stalls: int,
        max_resets: int,
        max_retries: int,
        plan_review: bool = False,
    ) -> None:
        super().__init__(_MANAGER, kind=ExecutorKind.ORCHESTRATOR)
        self.manager = manager
        self.participants = participants
        self.max_rounds = max_rounds
        self.max_stalls = max_stalls
        self.max_resets = max_resets
        self.max_retries = max_retries
        self.plan_review = plan_review
        # Whether the manager is an Agent, decided once: an isinstance check against the Agent
        # protocol walks the protocol's members, on every model call otherwise.
        self._manager_agent = manager if isinstance(manager, Agent) else None
        agent = self._manager_agent
        self.manager_name = agent.name if agent is not None else _MANAGER
        self._team_lines = "\n".join(f"- {name}: {text}" for name, text in participants.items())
        self._state: _LedgerState | None = None
        self._derived = _NOTHING_DERIVED

    def snapshot_state(self) -> Any:
        """This run's task, ledgers, conversation and counters, as one JSON string."""
        if self._state is None:
            return None
        saved, self._derived = self._state.saved(self._derived)
        # This executor copy ends with the invocation: its state is never changed after this.
        _LAST.remember(saved, (self._state, self._derived))
        return saved

    def restore_state(self, state: Any) -> None:
        """Take this run's ledger state (None: the run has not started)."""
        if state is None:
            self._state, self._derived = None, _NOTHING_DERIVED
            return
        last = _LAST.get(state)
        if last is None:  # saved by another process, or long ago: parsed
            self._state = _LedgerState.model_validate_json(state)
            self._derived = _NOTHING_DERIVED
            return
        saved_state, self._derived = last
        self._state = saved_state.fresh_copy()

    # Two handlers, a reply first: a handler for one class is found by the message's type once
    # and cached, where a union with list[ChatMessage] is matched at every message.
    @handler
    async def on_reply(
        self, message: MagenticReply, ctx: WorkflowContext[MagenticTurn, ChatMessage]
    ) -> None:
        """A participant's reply; then the next round."""
        self._require_state().conversation.extend(message.messages)
        await self._next_round(ctx)

    @handler
    async def on_message(
        self, message: ConversationInput, ctx: WorkflowContext[MagenticTurn, ChatMessage]
    ) -> None:
        """The task (the first message of a run): the plan, then the first round."""
        conversation = to_conversation(message)
        self._state = _LedgerState(
            task="\n".join(m.text for m in conversation if m.text), input=conversation
        )
        ledger = await self._plan(first=True)
        if self.plan_review:
            await self._request_review(ledger, ctx)
            return
        await self._next_round(ctx)

    @response_handler
    async def on_plan_review(
        self,
        request: MagenticPlanReviewRequest,
        response: MagenticPlanReviewResponse,
        ctx: WorkflowContext[MagenticTurn, ChatMessage],
    ) -> None:
        """An approved plan goes to the team; a revised one is re-planned and asked about again."""
        if response.approved:
            await self._next_round(ctx)
            return
        ledger = await self._revise(response.review)
        await self._request_review(
            ledger, ctx, progress=request.current_progress, is_stalled=request.is_stalled
        )

    async def _request_review(
        self,
        ledger: ChatMessage,
        ctx: WorkflowContext[MagenticTurn, ChatMessage],
        *,
        progress: MagenticProgressLedger | None = None,
        is_stalled: bool = False,
    ) -> None:
        await ctx.request_info(
            MagenticPlanReviewRequest(
                plan=ledger, current_progress=progress, is_stalled=is_stalled
            ),
            MagenticPlanReviewResponse,
        )

    def _require_state(self) -> _LedgerState:
        if self._state is None:
            raise OrchestratorError("the Magentic manager got a reply before any task")
        return self._state

    def _transcript(self) -> str:
        """``transcript(state.conversation)``, reading only the messages added since the last."""
        derived = self._derived
        written = derived.transcript.extended(self._require_state().conversation)
        self._derived = derived._replace(transcript=written)
        return written.text

    def _team(self) -> str:
        return self._team_lines

    async def _plan(self, *, first: bool) -> ChatMessage:
        state = self._require_state()
        team = self._team()
        if first:
            facts = await self._ask([ChatMessage.user(FACTS.format(task=state.task))])
            plan = await self._ask([ChatMessage.user(PLAN.format(team=team, facts=facts))])
        else:
            seen = self._transcript()
            facts = await self._ask(
                [
                    ChatMessage.user(
                        FACTS_UPDATE.format(task=state.task, facts=state.facts, transcript=seen)
                    )
                ]
            )
            plan = await self._ask(
                [ChatMessage.user(PLAN_UPDATE.format(team=team, transcript=seen))]
            )
        return self._adopt(facts, plan)

    async def _revise(self, review: list[ChatMessage]) -> ChatMessage:
        """A new fact sheet and plan that follow a reviewer's feedback."""
        state = self._require_state()
        state.feedback.extend(review)
        feedback = transcript(review)
        facts = await self._ask(
            [
                ChatMessage.user(
                    FACTS_REVISION.format(task=state.task, feedback=feedback, facts=state.facts)
                )
            ]
        )
        plan = await self._ask(
            [
                ChatMessage.user(
                    PLAN_REVISION.format(plan=state.plan, feedback=feedback, team=self._team())
                )
            ]
        )
        return self._adopt(facts, plan)

    def _adopt(self, facts: str, plan: str) -> ChatMessage:
        state = self._require_state()
        state.facts, state.plan = facts, plan
        ledger = ChatMessage.assistant(
            LEDGER.format(task=state.task, team=self._team(), facts=facts, plan=plan),
            author_name=self.manager_name,
        )
        # A new plan starts the team's conversation afresh: the task, any reviewer's feedback,
        # then the ledger.
        state.conversation = [*state.input, *state.feedback, ledger]
        return ledger

    async def _next_round(self, ctx: WorkflowContext[MagenticTurn, ChatMessage]) -> None:
        state = self._require_state()
        while True:
            if state.round >= self.max_rounds:
                await self._finish(ctx, why=f"We stopped after {self.max_rounds} rounds. ")
                return
            ledger = await self._progress()
            if ledger.is_request_satisfied:
                await self._finish(ctx, why="")
                return
            if ledger.is_in_loop or not ledger.is_progress_being_made:
                state.stalls += 1
            else:
                state.stalls = max(0, state.stalls - 1)
            if state.stalls <= self.max_stalls:
                break
            if state.resets >= self.max_resets:
                await self._finish(
                    ctx,
                    why="We stalled and re-planned as often as allowed; answer as best you can. ",
                )
                return
            state.resets += 1
            state.stalls = 0
            ledger_message = await self._plan(first=False)
            if self.plan_review:
                await self._request_review(ledger_message, ctx, progress=ledger, is_stalled=True)
                return
        state.round += 1
        state.conversation.append(
            ChatMessage.assistant(ledger.instruction, author_name=self.manager_name)
        )
        await ctx.send_message(
            MagenticTurn(conversation=list(state.conversation)), target_id=ledger.next_speaker
        )

    async def _progress(self) -> MagenticProgressLedger:
        state = self._require_state()
        names = list(self.participants)
        prompt = [
            ChatMessage.user(
                PROGRESS.format(
                    task=state.task,
                    team=self._team(),
                    transcript=self._transcript(),
                    names=", ".join(names),
                )
            )
        ]
        problem = ""
        for _ in range(self.max_retries + 1):
            reply = await self._ask(prompt)
            ledger, problem = _parse_progress(reply, names)
            if ledger is not None:
                return ledger
            prompt = [
                *prompt,
                ChatMessage.assistant(reply),
                ChatMessage.user(
                    PROGRESS_CORRECTION.format(problem=problem, names=", ".join(names))
                ),
            ]
        raise SpeakerSelectionError(
            f"the Magentic manager gave no valid progress ledger after {self.max_retries + 1} "
            f"attempt(s): {problem}"
        )

    async def _finish(self, ctx: WorkflowContext[MagenticTurn, ChatMessage], *, why: str) -> None:
        state = self._require_state()
        text = await self._ask(
            [
                ChatMessage.user(
                    FINAL.format(task=state.task, transcript=self._transcript(), why=why)
                )
            ]
        )
        answer = ChatMessage.assistant(text, author_name=self.manager_name)
        state.conversation.append(answer)
        await ctx.yield_output(answer)

    async def _ask(self, prompt: list[ChatMessage]) -> str:
        agent = self._manager_agent
        if agent is not None:
            response: AgentResponse = await agent.run(prompt, thread=agent.get_new_thread())
            return no_approval_wait(response, "the Magentic manager").text
        return (await cast("ChatClient", self.manager).generate(prompt)).message.text


def _parse_progress(reply: str, names: Sequence[str]) -> tuple[MagenticProgressLedger | None, str]:
    data = last_json_object(reply)
    if data is None:
        return None, "no JSON object found"
    flags: dict[str, bool] = {}
    for key in ("is_request_satisfied", "is_in_loop", "is_progress_being_made"):
        value = as_bool(data.get(key))
        if value is None:
            return None, f"{key} is missing or not a boolean"
        flags[key] = value
    by_lower = {name.lower(): name for name in names}
    named = answer_of(data.get("next_speaker"))
    speaker = by_lower.get(named.strip().lower()) if isinstance(named, str) else None
    if speaker is None and not flags["is_request_satisfied"]:
        return None, f"next_speaker {named!r} is not a participant"
    instruction = answer_of(data.get("instruction_or_question"))
    return MagenticProgressLedger(
        is_request_satisfied=flags["is_request_satisfied"],
        is_in_loop=flags["is_in_loop"],
        is_progress_being_made=flags["is_progress_being_made"],
        next_speaker=speaker or "",
        instruction=instruction if isinstance(instruction, str) else "",
    ), ""


class MagenticBuilder(PatternBuilder):
    """A Magentic-One team: a manager model plans, then directs one participant per round.

    On the task the manager writes a task ledger (a fact sheet and a plan). Each round it
    writes a progress ledger (is the request satisfied? are we looping? making progress? who
    speaks next, with what instruction) and gives that participant the turn. Rounds without
    progress count as stalls; more than ``max_stalls`` in a row make it re-plan (new facts and
    plan, the team's conversation started afresh), at most ``max_resets`` times. When the
    request is satisfied, or after ``max_rounds`` rounds or the last allowed re-plan, the
    manager writes the final answer: the run's output, one ``ChatMessage``::

        workflow = MagenticBuilder(participants=[researcher, coder], manager=manager_agent).build()
        answer = (await workflow.run("Compare the energy use of two sorting algorithms")).outputs[0]

    ``manager`` is an Agent or a ChatClient. A progress ledger that is not valid JSON or names
    no participant is corrected and asked again up to ``max_retries`` times, then the run fails
    with ``SpeakerSelectionError``.

    With :meth:`with_plan_review` (or ``enable_plan_review=True``) a human reviews every plan
    before the team works on it: the run pauses with a :class:`MagenticPlanReviewRequest`
    (``request_info``), answered with ``request.approve()`` or ``request.revise("feedback")``.
    The pause is checkpointed like any other, so another process can answer it.
    """

    def __init__(
        self,
        *,
        participants: Sequence[Agent] | None = None,
        manager: Agent | ChatClient | None = None,
        max_rounds: int = 20,
        max_stalls: int = 3,
        max_resets: int = 2,
        max_retries: int = 2,
        enable_plan_review: bool = False,
        name: str | None = None,
        checkpoint_store: CheckpointStore | None = None,
    ) -> None:
        self._participants: dict[str, Agent] | None = None
        self._manager = manager
        self._plan_review = enable_plan_review
        self._limits = {"max_rounds": 20, "max_stalls": 3, "max_resets": 2, "max_retries": 2}
        self._name = name
        self._checkpoint_store = checkpoint_store
        self.with_limits(
            max_rounds=max_rounds,
            max_stalls=max_stalls,
            max_resets=max_resets,
            max_retries=max_retries,
        )
        if participants is not None:
            self.participants(participants)

    def participants(self, participants: Sequence[Agent]) -> Self:
        """The team: agents with unique names, whose descriptions tell the manager who does what."""
        named = named_participants(participants, "MagenticBuilder", reserved=(_MANAGER,))
        agents: dict[str, Agent] = {}
        for name, participant in named.items():
            if isinstance(participant, Executor):
                raise OrchestrationConfigError(
                    f"MagenticBuilder: participant {name!r} is an Executor; the team is agents"
                )
            agents[name] = participant
        self._participants = agents
        return self

    def with_manager(self, manager: Agent | ChatClient) -> Self:
        """The model that plans and directs (an Agent, or a ChatClient used directly)."""
        self._manager = manager
        return self

    def with_plan_review(self, enable: bool = True) -> Self:
        """Pause for a human's review of every plan: the first, and each re-plan.

        The run pauses with a :class:`MagenticPlanReviewRequest` holding the task ledger
        (facts and plan) and, after a stall, the progress ledger that caused the re-plan.
        ``request.approve()`` lets the team start; ``request.revise("feedback")`` makes the
        manager write a new fact sheet and plan that follow the feedback (which the team also
        sees, after the task) and ask again::

            workflow = MagenticBuilder(participants=[a, b], manager=lead).with_plan_review().build()
            result = await workflow.run("task")
            request = result.pending_requests[0]
            result = await workflow.send_responses({request.request_id: request.data.approve()})
        """
        self._plan_review = enable
        return self

    def with_limits(
        self,
        *,
        max_rounds: int | None = None,
        max_stalls: int | None = None,
        max_resets: int | None = None,
        max_retries: int | None = None,
    ) -> Self:
        """Rounds before a forced answer, stalls before a re-plan, re-plans, ledger retries."""
        given = {
            "max_rounds": max_rounds,
            "max_stalls": max_stalls,
            "max_resets": max_resets,
            "max_retries": max_retries,
        }
        for key, value in given.items():
            if value is None:
                continue
            low = 1 if key == "max_rounds" else 0
            if isinstance(value, bool) or value < low:
                raise OrchestrationConfigError(
                    f"MagenticBuilder: {key} must be an int >= {low}, got {value!r}"
                )
            self._limits[key] = value
        return self

    def build(self) -> Workflow:
        """The team as a core ``Workflow``."""
        named = require_participants(self._participants, "MagenticBuilder")
        if self._manager is None:
            raise OrchestrationConfigError(
                "MagenticBuilder: no manager; pass manager=... or call with_manager(agent)"
            )
        manager = _Manager(
            self._manager,
            {name: description_of(agent) for name, agent in named.items()},
            **self._limits,
            plan_review=self._plan_review,
        )
        rounds = self._limits["max_rounds"]
        builder = WorkflowBuilder(self._name or "magentic", max_supersteps=max(100, 2 * rounds + 4))
        builder.set_start_executor(manager)
        for name, agent in named.items():
            node = turn_executor(_Participant, agent)(name, agent)
            builder.add_edge(manager, node)
            builder.add_edge(node, manager)
        return self._finish(builder)
