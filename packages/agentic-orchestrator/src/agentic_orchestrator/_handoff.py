"""HandoffBuilder: agents pass the conversation to each other until one answers for good."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Self

from agentic_core import (
    Agent,
    ChatAgent,
    CheckpointStore,
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_orchestrator._builder_base import PatternBuilder
from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._group_chat_state import TerminationCondition
from agentic_orchestrator._handoff_tools import (
    transfer_tool_name,
    transfer_tools,
    with_transfer_tools,
)
from agentic_orchestrator._handoff_turns import (
    AUTONOMOUS_MODE_PROMPT,
    Autonomy,
    DecideHandoff,
    HandoffAgentExecutor,
    HandoffTurn,
    HistoryMode,
    TurnRules,
)
from agentic_orchestrator._participants import (
    ConversationInput,
    description_of,
    named_participants,
    require_participants,
    to_conversation,
    turn_executor,
)

_START = "handoff_input"


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
        self._autonomous: Autonomy | None = None
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
        self._autonomous = Autonomy(
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
        nodes: dict[str, HandoffAgentExecutor] = {}
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
            nodes[name] = turn_executor(HandoffAgentExecutor, runner)(
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

    def _rules(self, name: str) -> TurnRules:
        turns, prompt = (
            self._autonomous.turns_and_prompt(name)
            if self._autonomous is not None
            else (0, AUTONOMOUS_MODE_PROMPT)
        )
        return TurnRules(
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
