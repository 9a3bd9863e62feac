"""HandoffBuilder: agents pass the conversation to each other until one answers for good."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Self

from pydantic import BaseModel, Field

from agentic_core import (
    Agent,
    AgentResponse,
    ChatAgent,
    ChatMessage,
    CheckpointStore,
    Executor,
    FunctionCallContent,
    Role,
    TextContent,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_orchestrator._builder_base import PatternBuilder
from agentic_orchestrator._errors import OrchestrationConfigError, OrchestratorError
from agentic_orchestrator._group_chat_state import GroupChatState, TerminationCondition
from agentic_orchestrator._handoff_tools import (
    requested_transfer,
    transfer_back_tool_name,
    transfer_tool_name,
    transfer_tools,
    with_transfer_tools,
)
from agentic_orchestrator._participants import (
    ConversationInput,
    answer_conversation,
    description_of,
    kept_turn,
    named_participants,
    require_participants,
    to_conversation,
)

_START = "handoff_input"

AUTONOMOUS_MODE_PROMPT = "User did not respond. Continue assisting autonomously."
"""What an agent in autonomous mode is told when it answered without handing off (MAF's)."""
AUTONOMOUS_TURN_LIMIT = 50
"""Autonomous turns an agent may take in a row when ``turn_limits`` names no limit (MAF's)."""

HistoryMode = Literal["spoken", "full_history", "last_message"]
"""What of an agent's turn joins the shared conversation: its spoken messages, all of it
(tool calls and results too), or only its last message (LangGraph-supervisor's workers)."""

DecideHandoff = Callable[[str, AgentResponse], str | Awaitable[str | None] | None]
"""``decide(agent_name, response) -> target name | None`` (sync or async)."""


class HandoffTurn(BaseModel):
    """The conversation as it passes from one agent to the next."""

    conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    path: list[str] = Field(default_factory=list[str])
    """The agents that have held the conversation, in order."""


class HandoffUserRequest(BaseModel):
    """What a handoff workflow asks the user (``request_info``) when an agent answered.

    Answer with a str: the user's next message, back to the same agent; an empty str ends the
    run (its output is then the conversation).
    """

    agent: str
    """The agent that answered and waits for the user."""
    text: str
    """Its answer."""
    conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    path: list[str] = Field(default_factory=list[str])


class _Start(Executor):
    def __init__(self, first: str) -> None:
        super().__init__(_START)
        self.first = first

    @handler
    async def start(self, message: ConversationInput, ctx: WorkflowContext[HandoffTurn]) -> None:
        """Give the caller's conversation to the start agent."""
        await ctx.send_message(
            HandoffTurn(conversation=to_conversation(message), path=[self.first]),
            target_id=self.first,
        )


@dataclass(frozen=True)
class _TurnRules:
    """How one agent of the mesh ends its turns (fixed at build time)."""

    interactive: bool
    termination: TerminationCondition | None
    max_handoffs: int
    history: HistoryMode = "spoken"
    autonomous_turns: int = 0
    autonomous_prompt: str = AUTONOMOUS_MODE_PROMPT
    return_to: str | None = None
    """The agent that gets the turn back whenever this one answers without handing off."""


@dataclass(frozen=True)
class _Autonomy:
    """``with_autonomous_mode``'s settings; ``agents`` None: every agent."""

    agents: tuple[str, ...] | None
    prompts: dict[str, str]
    turn_limits: dict[str, int]

    def turns_and_prompt(self, name: str) -> tuple[int, str]:
        if self.agents is not None and name not in self.agents:
            return 0, AUTONOMOUS_MODE_PROMPT
        return (
            self.turn_limits.get(name, AUTONOMOUS_TURN_LIMIT),
            self.prompts.get(name, AUTONOMOUS_MODE_PROMPT),
        )


class _HandoffAgent(Executor):
    """One agent of the mesh: answers, then hands off, asks the user, or ends the run."""

    def __init__(
        self,
        name: str,
        agent: Agent,
        tools_to_targets: dict[str, str],
        targets: Sequence[str],
        decide: DecideHandoff | None,
        rules: _TurnRules,
        participants: dict[str, str],
    ) -> None:
        super().__init__(name)
        self.agent = agent
        self.tools_to_targets = tools_to_targets
        self.targets = tuple(targets)
        self.decide = decide
        self.rules = rules
        self.participants = participants

    @handler
    async def take_turn(
        self, turn: HandoffTurn, ctx: WorkflowContext[HandoffTurn, list[ChatMessage]]
    ) -> None:
        """Answer the conversation; then pass it on or finish."""
        await self._answer(turn.conversation, turn.path, ctx)

    @response_handler
    async def on_user_reply(
        self,
        request: HandoffUserRequest,
        reply: str,
        ctx: WorkflowContext[HandoffTurn, list[ChatMessage]],
    ) -> None:
        """The user's next message goes back to this agent; an empty reply ends the run.

        A reply that meets the termination condition ends the run before the agent is called.
        """
        if not reply.strip():
            await ctx.yield_output(list(request.conversation))
            return
        conversation = [*request.conversation, ChatMessage.user(reply)]
        await self._answer(conversation, request.path, ctx)

    async def _answer(
        self,
        conversation: list[ChatMessage],
        path: list[str],
        ctx: WorkflowContext[HandoffTurn, list[ChatMessage]],
    ) -> None:
        """Answer (again, in autonomous mode) until a handoff, the user's turn or the end.

        The termination condition is checked before every model call and after every answer.
        """
        rules = self.rules
        autonomous = 0
        while not await self._terminated(conversation, path):
            response = await answer_conversation(self.agent, conversation, ctx)
            conversation = [*conversation, *self._kept(response.messages)]
            target = await self._target(response)
            if target is not None:
                if target == rules.return_to and rules.history != "spoken":
                    conversation = [*conversation, *_handoff_back_messages(self.id, target)]
                await self._hand_off(target, conversation, path, ctx)
                return
            if await self._terminated(conversation, path):
                break
            if autonomous < rules.autonomous_turns:
                autonomous += 1
                conversation = [*conversation, ChatMessage.user(rules.autonomous_prompt)]
                continue
            if rules.interactive:
                await ctx.request_info(
                    HandoffUserRequest(
                        agent=self.id, text=response.text, conversation=conversation, path=path
                    ),
                    str,
                )
                return
            break
        await ctx.yield_output(conversation)

    def _kept(self, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
        """What of this agent's turn joins the shared conversation."""
        history = self.rules.history
        if history == "last_message":
            kept = kept_turn(messages, self.id, full_history=True)
            return kept[-1:]
        return kept_turn(messages, self.id, full_history=history == "full_history")

    async def _hand_off(
        self,
        target: str,
        conversation: list[ChatMessage],
        path: list[str],
        ctx: WorkflowContext[HandoffTurn, list[ChatMessage]],
    ) -> None:
        max_handoffs = self.rules.max_handoffs
        if len(path) - 1 >= max_handoffs:
            raise OrchestratorError(
                f"handoff limit of {max_handoffs} reached: "
                f"{' -> '.join([*path, target])}; raise it with with_max_handoffs(n) or "
                "make the agents answer"
            )
        await ctx.send_message(
            HandoffTurn(conversation=conversation, path=[*path, target]), target_id=target
        )

    async def _target(self, response: AgentResponse) -> str | None:
        target = requested_transfer(response, self.tools_to_targets)
        if target is None and self.decide is not None:
            decided = self.decide(self.id, response)
            if inspect.isawaitable(decided):
                decided = await decided
            target = decided
        if target is None:
            target = self.rules.return_to
        if target is not None and target not in self.targets:
            raise OrchestratorError(
                f"agent {self.id!r} may not hand off to {target!r} (its targets: "
                f"{', '.join(self.targets) or 'none'})"
            )
        return target

    async def _terminated(self, conversation: list[ChatMessage], path: list[str]) -> bool:
        termination = self.rules.termination
        if termination is None:
            return False
        state = GroupChatState(
            conversation=tuple(conversation),
            participants=self.participants,
            current_round=len(path) - 1,
            history=tuple(path),
        )
        verdict = termination(state)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        return bool(verdict)


def _handoff_back_messages(agent: str, target: str) -> list[ChatMessage]:
    """LangGraph-supervisor's record of a worker giving the turn back: a call and its result."""
    call_id = f"back_{uuid.uuid4().hex[:12]}"
    return [
        ChatMessage(
            role=Role.ASSISTANT,
            contents=[
                TextContent(text=f"Transferring back to {target}"),
                FunctionCallContent(
                    call_id=call_id, name=transfer_back_tool_name(target), arguments={}
                ),
            ],
            author_name=agent,
        ),
        ChatMessage.tool(call_id, f"Successfully transferred back to {target}"),
    ]


class HandoffBuilder(PatternBuilder):
    """A mesh of agents that hand the conversation to each other; the run ends with an answer.

    The start agent (the first participant unless :meth:`with_start_agent` says otherwise) gets
    the caller's input. Each ChatAgent gets a ``transfer_to_<name>`` tool per agent it may hand
    off to (every other agent, unless :meth:`add_handoff` narrows it); calling one passes the
    conversation, and the turn, to that agent at once. Agents of other kinds (and ChatAgents,
    when given) can be routed by a ``decide_handoff(agent_name, response) -> name | None``
    callable instead. A run ends when an agent answers without handing off: the output is the
    conversation as a ``list[ChatMessage]``. With :meth:`with_request_info` the workflow asks the
    user instead (a ``HandoffUserRequest``; the reply goes back to the agent that answered)
    until the termination condition holds or the user replies with an empty string.
    :meth:`with_autonomous_mode` lets agents go on alone for a number of turns before that.
    The conversation keeps what the agents said (tool traffic left out) unless
    ``full_history=True`` keeps everything, handoff calls and tool results included.
    At most ``max_handoffs`` handoffs per run (default 20): a loop beyond it fails the run with
    an ``OrchestratorError`` naming the path::

        workflow = HandoffBuilder(participants=[triage, refunds, orders]).build()
        conversation = (await workflow.run("My order 1234 arrived broken")).outputs[0]
    """

    def __init__(
        self,
        *,
        participants: Sequence[Agent] | None = None,
        name: str | None = None,
        decide_handoff: DecideHandoff | None = None,
        termination_condition: TerminationCondition | None = None,
        max_handoffs: int = 20,
        full_history: bool = False,
        checkpoint_store: CheckpointStore | None = None,
    ) -> None:
        self._participants: dict[str, Agent] | None = None
        self._name = name
        self._start: str | None = None
        self._routes: dict[str, list[tuple[str, str | None]]] = {}
        self._decide = decide_handoff
        self._interactive = False
        self._termination = termination_condition
        self._max_handoffs = 20
        self._history: HistoryMode = "full_history" if full_history else "spoken"
        self._history_of: dict[str, HistoryMode] = {}  # per agent, over _history
        self._autonomous: _Autonomy | None = None
        # source -> agent that gets the turn back when source answers (a route with no tool)
        self._returns: dict[str, str] = {}
        self._checkpoint_store = checkpoint_store
        self.with_max_handoffs(max_handoffs)
        if participants is not None:
            self.participants(participants)

    def participants(self, participants: Sequence[Agent]) -> Self:
        """The agents of the mesh (unique names)."""
        named = named_participants(participants, "HandoffBuilder", reserved=(_START,))
        for name, participant in named.items():
            if isinstance(participant, Executor):
                raise OrchestrationConfigError(
                    f"HandoffBuilder: participant {name!r} is an Executor; handoff participants "
                    "are agents"
                )
        self._participants = {name: p for name, p in named.items() if isinstance(p, Agent)}
        return self

    def with_start_agent(self, agent: Agent | str) -> Self:
        """The agent that gets the caller's input (default: the first participant)."""
        self._start = agent if isinstance(agent, str) else agent.name
        return self

    def add_handoff(
        self,
        source: Agent | str,
        targets: Sequence[Agent | str] | Agent | str,
        *,
        description: str | None = None,
    ) -> Self:
        """Let ``source`` hand off to ``targets`` (once any route is added, only added routes
        exist). ``description`` says when to hand off, in the transfer tool's description."""
        source_name = source if isinstance(source, str) else source.name
        if isinstance(targets, (str, Agent)):
            targets = [targets]
        routes = self._routes.setdefault(source_name, [])
        for target in targets:
            target_name = target if isinstance(target, str) else target.name
            if target_name == source_name:
                raise OrchestrationConfigError(
                    f"HandoffBuilder: {source_name!r} cannot hand off to itself"
                )
            routes.append((target_name, description))
        return self

    def with_decide_handoff(self, decide: DecideHandoff) -> Self:
        """``decide(agent_name, response) -> target | None`` routes after each answer."""
        self._decide = decide
        return self

    def with_request_info(self, enabled: bool = True) -> Self:
        """Ask the user (``request_info``) after an answer instead of ending the run."""
        self._interactive = enabled
        return self

    def with_termination_condition(self, condition: TerminationCondition) -> Self:
        """End the run once ``condition(state)`` holds (sync or async).

        Checked before every model call (so a user's reply that meets it ends the run without
        another turn) and after every answer (so no user request or autonomous turn follows).
        """
        self._termination = condition
        return self

    def with_autonomous_mode(
        self,
        *,
        agents: Sequence[Agent | str] | None = None,
        prompts: Mapping[str, str] | None = None,
        turn_limits: Mapping[str, int] | None = None,
    ) -> Self:
        """Let ``agents`` (default: all) go on alone instead of stopping after an answer.

        An agent that answers without handing off is told ``prompts[name]`` (default: MAF's
        "User did not respond. Continue assisting autonomously.") and answers again, at most
        ``turn_limits[name]`` times in a row (default 50); then the user is asked
        (:meth:`with_request_info`) or the run ends. A handoff or the termination condition
        stops it earlier. As MAF's ``with_autonomous_mode``.
        """
        prompts = dict(prompts or {})
        limits = dict(turn_limits or {})
        for name, limit in limits.items():
            if isinstance(limit, bool) or limit < 0:
                raise OrchestrationConfigError(
                    f"HandoffBuilder: the autonomous turn limit of {name!r} must be >= 0, "
                    f"got {limit!r}"
                )
        self._autonomous = _Autonomy(
            agents=tuple(a if isinstance(a, str) else a.name for a in agents) if agents else None,
            prompts=prompts,
            turn_limits=limits,
        )
        return self

    def with_full_history(self, enabled: bool = True) -> Self:
        """Keep every message in the conversation: handoff calls, tool calls and results too.

        By default the conversation (what the next agent sees, and the output) keeps only what
        the agents said. LangGraph-supervisor calls this ``output_mode="full_history"``.
        """
        self._history = "full_history" if enabled else "spoken"
        return self

    def with_max_handoffs(self, n: int) -> Self:
        """At most ``n`` handoffs per run (a loop beyond fails the run, naming the path)."""
        if isinstance(n, bool) or n < 0:
            raise OrchestrationConfigError(f"HandoffBuilder: max_handoffs must be >= 0, got {n!r}")
        self._max_handoffs = n
        return self

    def build(self) -> Workflow:
        """The mesh as a core ``Workflow``."""
        named = require_participants(self._participants, "HandoffBuilder")
        start = self._start or next(iter(named))
        self._check_known(start, named, "the start agent")
        descriptions = {name: description_of(agent) for name, agent in named.items()}
        routes = self._resolved_routes(named)
        unreachable = _unreachable(start, routes)
        if unreachable:
            raise OrchestrationConfigError(
                f"HandoffBuilder: no handoff route leads from {start!r} to "
                f"{', '.join(map(repr, unreachable))}; add_handoff(...) a route or drop them"
            )
        if (autonomy := self._autonomous) is not None:
            for name in sorted(
                {*(autonomy.agents or ()), *autonomy.prompts, *autonomy.turn_limits}
            ):
                self._check_known(name, named, "an agent of with_autonomous_mode")
        builder = WorkflowBuilder(self._name or "handoff")
        first = _Start(start)
        builder.set_start_executor(first)
        nodes: dict[str, _HandoffAgent] = {}
        for name, agent in named.items():
            targets = {t: d or descriptions[t] for t, d in routes[name]}
            tool_targets = {t: d for t, d in targets.items() if t != self._returns.get(name)}
            tools_to_targets: dict[str, str] = {}
            if isinstance(agent, ChatAgent) and tool_targets:
                tools = transfer_tools(tool_targets)
                clash = sorted(set(tools) & {t.name for t in agent.tools})
                if clash:
                    raise OrchestrationConfigError(
                        f"HandoffBuilder: agent {name!r} already has a tool named {clash[0]!r}"
                    )
                runner = with_transfer_tools(agent, tools)
                tools_to_targets = {transfer_tool_name(t): t for t in tool_targets}
            else:
                runner = agent
            nodes[name] = _HandoffAgent(
                name,
                runner,
                tools_to_targets,
                list(targets),
                self._decide,
                self._rules(name),
                descriptions,
            )
        builder.add_edge(first, nodes[start])
        for name, node in nodes.items():
            for target, _ in routes[name]:
                builder.add_edge(node, nodes[target])
        return self._finish(builder)

    def _rules(self, name: str) -> _TurnRules:
        turns, prompt = (
            self._autonomous.turns_and_prompt(name)
            if self._autonomous is not None
            else (0, AUTONOMOUS_MODE_PROMPT)
        )
        return _TurnRules(
            interactive=self._interactive,
            termination=self._termination,
            max_handoffs=self._max_handoffs,
            history=self._history_of.get(name, self._history),
            autonomous_turns=turns,
            autonomous_prompt=prompt,
            return_to=self._returns.get(name),
        )

    def _resolved_routes(self, named: dict[str, Agent]) -> dict[str, list[tuple[str, str | None]]]:
        declared = {source: list(targets) for source, targets in self._routes.items()}
        for source, target in self._returns.items():
            declared.setdefault(source, []).append((target, None))
        if not declared:
            return {n: [(t, None) for t in named if t != n] for n in named}
        routes: dict[str, list[tuple[str, str | None]]] = {name: [] for name in named}
        for source, targets in declared.items():
            self._check_known(source, named, "a handoff source")
            seen: set[str] = set()
            for target, description in targets:
                self._check_known(target, named, f"a handoff target of {source!r}")
                if target not in seen:
                    seen.add(target)
                    routes[source].append((target, description))
        return routes

    @staticmethod
    def _check_known(name: str, named: dict[str, Agent], what: str) -> None:
        if name not in named:
            raise OrchestrationConfigError(
                f"HandoffBuilder: {what} {name!r} is not a participant "
                f"(participants: {', '.join(named)})"
            )


def _unreachable(start: str, routes: dict[str, list[tuple[str, str | None]]]) -> list[str]:
    seen = {start}
    frontier = [start]
    while frontier:
        for target, _ in routes[frontier.pop()]:
            if target not in seen:
                seen.add(target)
                frontier.append(target)
    return [name for name in routes if name not in seen]


def handoff(
    participants: Sequence[Agent],
    *,
    start: Agent | str | None = None,
    routes: dict[str, Sequence[str]] | None = None,
    decide_handoff: DecideHandoff | None = None,
    max_handoffs: int = 20,
    checkpoint_store: CheckpointStore | None = None,
) -> Workflow:
    """A handoff workflow in one call: ``handoff([triage, refunds, orders], start=triage)``.

    ``routes`` (``{source: [targets]}``) narrows who may hand off to whom (default: everyone to
    everyone); the rest is :class:`HandoffBuilder`'s.
    """
    builder = HandoffBuilder(
        participants=participants,
        decide_handoff=decide_handoff,
        max_handoffs=max_handoffs,
        checkpoint_store=checkpoint_store,
    )
    if start is not None:
        builder.with_start_agent(start)
    for source, targets in (routes or {}).items():
        builder.add_handoff(source, list(targets))
    return builder.build()
