"""What the endpoint serves: each agent or workflow under a model name, and how many runs
may go at once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from agentic_core import Agent, Workflow
from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._openai._wire import EndpointError

__all__ = ["RunSlots", "ServedModel", "Target", "served_models"]

Target = Agent | Workflow
"""A core ``Agent``, or a core ``Workflow`` (served as ``workflow.as_agent()``)."""


@dataclass(frozen=True)
class ServedModel:
    """One target under its model name: the agent that answers (a workflow's ``as_agent()``)."""

    name: str
    agent: Agent
    is_workflow: bool


def served_models(targets: Mapping[str, Target] | Sequence[Target]) -> dict[str, ServedModel]:
    """The targets by model name (a sequence: by ``agent.name`` / ``workflow.name``)."""
    pairs = (
        list(targets.items())
        if isinstance(targets, Mapping)
        else [(target.name, target) for target in targets]
    )
    if not pairs:
        raise OrchestrationConfigError("create_openai_app: give at least one agent or workflow")
    served: dict[str, ServedModel] = {}
    for name, target in pairs:
        if not name or not name.strip():
            raise OrchestrationConfigError(
                "create_openai_app: every target needs a name (give a mapping name -> target)"
            )
        if name in served:
            raise OrchestrationConfigError(
                f"create_openai_app: two targets are named {name!r}: give a mapping to name "
                "them apart"
            )
        if isinstance(target, Workflow):
            served[name] = ServedModel(name, target.as_agent(name), is_workflow=True)
        elif isinstance(cast("object", target), Agent):
            served[name] = ServedModel(name, target, is_workflow=False)
        else:
            kind = type(target).__name__
            raise OrchestrationConfigError(
                f"create_openai_app: {name!r} is a {kind}, not a core Agent or Workflow"
            )
    return served


class RunSlots:
    """At most ``limit`` runs at once: a run past the bound is refused (429), never queued."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise OrchestrationConfigError(f"max_concurrent_runs must be at least 1, got {limit}")
        self.limit = limit
        self.active = 0

    def take(self) -> None:
        """Take a slot, or raise ``EndpointError`` 429."""
        if self.active >= self.limit:
            raise EndpointError(
                429,
                f"this server runs at most {self.limit} requests at once: retry shortly",
                type="requests",
                code="rate_limit_exceeded",
            )
        self.active += 1

    def give_back(self) -> None:
        self.active -= 1
