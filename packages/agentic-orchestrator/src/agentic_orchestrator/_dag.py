"""The orchestrator's workflow: steps naming an agent and an action, with dependencies."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agentic_orchestrator._errors import DependencyCycleError, OrchestrationConfigError
from agentic_orchestrator._payloads import ResultPayload, ResultStatus

_REFERENCE = re.compile(r"^\{\{\s*([^{}.\s]+(?:\.[^{}.\s]+)*)\s*\}\}$")


class WorkflowStep(BaseModel):
    """One step: ``agent`` (a registered agent's name or id) does ``action`` with ``inputs``.

    An input value ``"{{step_id}}"`` takes that earlier step's result data whole, and
    ``"{{step_id.key}}"`` one key of it; the referenced step must be in ``depends_on``.
    """

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1)
    action: str = Field(min_length=1)
    inputs: dict[str, Any] = Field(default_factory=dict[str, Any])
    depends_on: list[str] = Field(default_factory=list[str])
    id: str | None = None
    """Defaults to ``"<agent>:<action>"``."""

    @property
    def step_id(self) -> str:
        """The id other steps name in ``depends_on``."""
        return self.id or f"{self.agent}:{self.action}"

    def references(self) -> list[tuple[str, str, str | None]]:
        """``(input name, step id, key or None)`` for each ``{{...}}`` input."""
        found: list[tuple[str, str, str | None]] = []
        for name, value in self.inputs.items():
            if isinstance(value, str) and (match := _REFERENCE.match(value)):
                step, _, key = match.group(1).partition(".")
                found.append((name, step, key or None))
        return found


class Workflow(BaseModel):
    """A DAG of steps for :meth:`Orchestrator.execute` (not to be confused with core's graph)."""

    model_config = ConfigDict(extra="forbid")

    name: str = "workflow"
    steps: list[WorkflowStep]

    def check(self) -> None:
        """Raise ``OrchestrationConfigError`` (or ``DependencyCycleError``) naming what is wrong."""
        if not self.steps:
            raise OrchestrationConfigError(f"workflow {self.name!r} has no steps")
        ids: set[str] = set()
        for step in self.steps:
            if step.step_id in ids:
                raise OrchestrationConfigError(
                    f"workflow {self.name!r}: two steps have the id {step.step_id!r}; give one "
                    "an explicit id"
                )
            ids.add(step.step_id)
        for step in self.steps:
            for dependency in step.depends_on:
                if dependency not in ids:
                    raise OrchestrationConfigError(
                        f"workflow {self.name!r}: step {step.step_id!r} depends on "
                        f"{dependency!r}, which is not a step"
                    )
            for name, referenced, _ in step.references():
                if referenced not in step.depends_on:
                    raise OrchestrationConfigError(
                        f"workflow {self.name!r}: input {name!r} of step {step.step_id!r} "
                        f"refers to step {referenced!r}, which is not in its depends_on"
                    )
        cycle = _find_cycle({s.step_id: s.depends_on for s in self.steps})
        if cycle:
            raise DependencyCycleError(
                f"workflow {self.name!r}: steps depend on each other in a circle: "
                f"{' -> '.join(cycle)}"
            )


class StepResult(BaseModel):
    """How one step went."""

    step_id: str
    agent: str
    action: str
    status: ResultStatus
    result: ResultPayload | None = None
    error: str | None = None
    skipped: bool = False
    """Not run, because a step it depends on failed."""
    duration_s: float = 0.0


class WorkflowResult(BaseModel):
    """How a whole orchestrator workflow went: SUCCESS, PARTIAL or FAILURE, and each step."""

    workflow_id: str
    """The core run's id."""
    name: str
    status: ResultStatus
    results: dict[str, StepResult]
    """By step id, in the workflow's step order."""
    total_time_s: float = 0.0


def _find_cycle(depends_on: dict[str, list[str]]) -> list[str]:
    """A dependency circle as ``[a, b, ..., a]``, or ``[]``."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str]:
        if node in on_path:
            return [*path[path.index(node) :], node]
        if node in done:
            return []
        path.append(node)
        on_path.add(node)
        for dependency in depends_on.get(node, []):
            cycle = visit(dependency)
            if cycle:
                return cycle
        path.pop()
        on_path.discard(node)
        done.add(node)
        return []

    for node in depends_on:
        cycle = visit(node)
        if cycle:
            return list(reversed(cycle))
    return []
