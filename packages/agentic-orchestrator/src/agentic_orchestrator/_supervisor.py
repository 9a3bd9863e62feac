"""create_supervisor: a supervisor agent hands tasks to workers, which hand the turn back."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

from agentic_core import Agent, ChatAgent, ChatClient, Tool
from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._handoff import HandoffBuilder
from agentic_orchestrator._handoff_turns import HistoryMode

OutputMode = Literal["last_message", "full_history"]
"""What of a worker's turn joins the conversation: its last message, or all of it."""


class _SupervisorBuilder(HandoffBuilder):
    """A handoff mesh shaped as a star: only the supervisor hands off; workers return to it."""

    def __init__(
        self,
        supervisor: ChatAgent,
        workers: Sequence[Agent],
        *,
        output_mode: OutputMode,
        name: str | None,
    ) -> None:
        super().__init__(participants=[supervisor, *workers], name=name)
        self.with_start_agent(supervisor)
        self.add_handoff(supervisor, list(workers))
        worker_history: HistoryMode = output_mode
        for worker in workers:
            # A route with no transfer tool: the worker's answer goes back to the supervisor.
            self._returns[worker.name] = supervisor.name
            self._history_of[worker.name] = worker_history
        # The supervisor's own turns stay whole, so its model sees its transfer calls answered.
        self._history_of[supervisor.name] = "full_history"


def create_supervisor(
    agents: Sequence[Agent],
    *,
    model: ChatClient,
    tools: Sequence[Tool | Callable[..., Any]] = (),
    prompt: str | None = None,
    supervisor_name: str = "supervisor",
    output_mode: OutputMode = "last_message",
    name: str | None = None,
) -> HandoffBuilder:
    """A supervisor agent that delegates to ``agents`` and answers, as LangGraph's.

    The supervisor (a ``ChatAgent`` on ``model`` with ``prompt`` as instructions and ``tools``)
    gets the caller's input and a ``transfer_to_<worker>`` tool per worker; a worker answers
    and the turn goes back to the supervisor (recorded, as in LangGraph-supervisor, as a
    ``transfer_back_to_<supervisor>`` call and its result). The run ends when the supervisor
    answers without delegating; its output is the conversation. ``output_mode`` says what of a
    worker's turn joins it: ``"last_message"`` (its final message) or ``"full_history"`` (its
    tool calls and results too). The result is a :class:`HandoffBuilder` (LangGraph's
    ``StateGraph``): add ``with_checkpointing``, ``with_request_info``, ... then ``build()``
    (LangGraph's ``compile()``)::

        workflow = create_supervisor([research_agent, math_agent], model=client).build()
        conversation = (await workflow.run("FAANG headcount in 2024?")).outputs[0]
    """
    if output_mode not in ("last_message", "full_history"):
        raise OrchestrationConfigError(
            "create_supervisor: output_mode must be 'last_message' or 'full_history', "
            f"got {output_mode!r}"
        )
    if isinstance(agents, (str, bytes)) or not agents:
        raise OrchestrationConfigError("create_supervisor: agents must be a non-empty sequence")
    supervisor = ChatAgent(model, prompt, name=supervisor_name, tools=tools)
    return _SupervisorBuilder(supervisor, agents, output_mode=output_mode, name=name)
