"""SequentialBuilder: agents one after another, each seeing the whole conversation so far."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from agentic_core import (
    AgentExecutorResponse,
    AgentResponse,
    CheckpointStore,
    Executor,
    Workflow,
    WorkflowBuilder,
)
from agentic_orchestrator._builder_base import PatternBuilder
from agentic_orchestrator._participants import (
    ConversationAgent,
    ConversationOutput,
    ConversationStart,
    Participant,
    ResponseToConversation,
    accepts,
    named_participants,
    require_participants,
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
    """

    def __init__(
        self,
        *,
        participants: Sequence[Participant] | None = None,
        name: str | None = None,
        checkpoint_store: CheckpointStore | None = None,
    ) -> None:
        self._participants: dict[str, Participant] | None = None
        self._name = name
        self._checkpoint_store = checkpoint_store
        if participants is not None:
            self.participants(participants)

    def participants(self, participants: Sequence[Participant]) -> Self:
        """The chain, in order (agents and executors; names must be unique)."""
        self._participants = named_participants(
            participants, "SequentialBuilder", reserved=(_START, _END)
        )
        return self

    def build(self) -> Workflow:
        """The chain as a core ``Workflow``."""
        named = require_participants(self._participants, "SequentialBuilder")
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
                node = ConversationAgent(participant, name)
                previous_is_agent = True
            if previous is None:
                builder.set_start_executor(node)
            else:
                builder.add_edge(previous, node)
            previous = node
        assert previous is not None  # noqa: S101 - participants are never empty
        builder.add_edge(previous, ConversationOutput(_END))
        return self._finish(builder)
