"""SequentialBuilder: agents one after another, each seeing the whole conversation so far."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Self

from agentic_core import (
    Agent,
    AgentExecutorResponse,
    AgentResponse,
    CheckpointStore,
    Executor,
    Workflow,
    WorkflowBuilder,
)
from agentic_orchestrator._builder_base import PatternBuilder
from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._participants import (
    ConversationAgent,
    ConversationOutput,
    ConversationStart,
    Participant,
    ResponseToConversation,
    accepts,
    named_participants,
    participant_name,
    require_participants,
    turn_executor,
)

_START = "sequential_input"
_END = "sequential_output"
_SAMPLE_RESPONSE = AgentExecutorResponse(executor_id="", agent_response=AgentResponse(agent_id=""))


class SequentialBuilder(PatternBuilder):
    """A chain of participants sharing one conversation; the output is the whole conversation.

    The workflow takes a str, a ``ChatMessage`` or a ``list[ChatMessage]``. Each agent sees
    everything said before it (on a fresh thread) and adds its reply, sending an
    ``AgentExecutorResponse`` on; the run's output is the full conversation as a
    ``list[ChatMessage]``. Custom executors may sit anywhere in the
    chain: one that handles ``AgentExecutorResponse`` gets the previous agent's response as is,
    any other gets the conversation as a ``list[ChatMessage]``; to pass the turn on it sends a
    ``list[ChatMessage]``. An executor that yields an output and sends nothing ends the run there
    (an early-exit gate)::

        workflow = SequentialBuilder().participants([writer, reviewer]).build()
        conversation = (await workflow.run("Write a haiku about tea")).outputs[0]

    As in MAF, ``chain_only_agent_responses=True`` shows each agent only the previous agent's
    reply (the first agent gets the input; the output is still the whole conversation), and
    ``output_from`` chooses the outputs: ``"all"`` or a list of agents (or their names) makes
    each chosen agent's ``AgentResponse`` an output as it answers, in chain order, instead of
    the conversation at the end. Executors yield their own outputs, so only agents are named.
    """

    def __init__(
        self,
        *,
        participants: Sequence[Participant] | None = None,
        name: str | None = None,
        chain_only_agent_responses: bool = False,
        output_from: Literal["all"] | Sequence[Agent | str] | None = None,
        checkpoint_store: CheckpointStore | None = None,
    ) -> None:
        self._participants: dict[str, Participant] | None = None
        self._name = name
        self._chain_only = chain_only_agent_responses
        if isinstance(output_from, str) and output_from != "all":
            raise OrchestrationConfigError(
                f"SequentialBuilder: output_from must be 'all' or a list of agents, "
                f"got {output_from!r}"
            )
        self._output_from = output_from
        self._checkpoint_store = checkpoint_store
        if participants is not None:
            self.participants(participants)

    def participants(self, participants: Sequence[Participant]) -> Self:
        """The chain, in order (agents and executors; names must be unique)."""
        self._participants = named_participants(
            participants, "SequentialBuilder", reserved=(_START, _END)
        )
        return self

    def _outputs_from(self, named: dict[str, Participant]) -> set[str] | None:
        """The agents whose responses are outputs (None: the conversation is the output)."""
        if self._output_from is None:
            return None
        agents = {n for n, p in named.items() if not isinstance(p, Executor)}
        if self._output_from == "all":
            return agents
        chosen = {n if isinstance(n, str) else participant_name(n) for n in self._output_from}
        unknown = sorted(chosen - agents)
        if unknown:
            raise OrchestrationConfigError(
                f"SequentialBuilder: output_from names {', '.join(map(repr, unknown))}, not an "
                f"agent of the chain (agents: {', '.join(sorted(agents))}); executors yield "
                "their own outputs"
            )
        if not chosen:
            raise OrchestrationConfigError("SequentialBuilder: output_from names no agent")
        return chosen

    def build(self) -> Workflow:
        """The chain as a core ``Workflow``."""
        named = require_participants(self._participants, "SequentialBuilder")
        outputs_from = self._outputs_from(named)
        builder = WorkflowBuilder(self._name or "sequential")
        previous: Executor | None = None
        previous_is_agent = False
        if isinstance(next(iter(named.values())), Executor):
            # An executor first gets the input as a conversation; an agent takes a
            # str, a message or a conversation as it is (one superstep fewer).
            previous = ConversationStart(_START)
            builder.set_start_executor(previous)
        for name, participant in named.items():
            if isinstance(participant, Executor):
                node = participant
                if (
                    previous is not None
                    and previous_is_agent
                    and not accepts(node, _SAMPLE_RESPONSE)
                ):
                    adapter = ResponseToConversation(f"{name}_input")
                    builder.add_edge(previous, adapter)
                    previous = adapter
                previous_is_agent = False
            else:
                node = turn_executor(ConversationAgent, participant)(
                    participant,
                    name,
                    chain_only=self._chain_only,
                    yield_response=outputs_from is not None and name in outputs_from,
                )
                previous_is_agent = True
            if previous is None:
                builder.set_start_executor(node)
            else:
                builder.add_edge(previous, node)
            previous = node
        assert previous is not None  # noqa: S101 - participants are never empty
        builder.add_edge(
            previous, ConversationOutput(_END, yield_conversation=outputs_from is None)
        )
        return self._finish(builder)
