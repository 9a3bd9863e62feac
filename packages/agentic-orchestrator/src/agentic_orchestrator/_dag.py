"""``DagWorkflow``, the orchestrator's workflow: steps naming an agent and an action, with
dependencies, and ``DagResult``, how a run of it went.

Pure data and planning, no asyncio: checking a step list (ids, dependencies, references,
cycles), resolving a step's inputs from its dependencies' results, and the overall status.
Not to be confused with core's ``agentic_core.Workflow``, the compiled graph the
:class:`Orchestrator` turns this into (hence the prefix; the package still exports the earlier
names ``Workflow`` and ``WorkflowResult`` as aliases).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from agentic_orchestrator._errors import (
    DependencyCycleError,
    OrchestrationConfigError,
    OrchestratorError,
)
from agentic_orchestrator._payloads import ResultPayload, ResultStatus

_REFERENCE = re.compile(r"^\{\{\s*([^{}]+?)\s*\}\}$")

OnDependencyFailure = Literal["skip", "run"]
"""What a step does when a step it depends on did not succeed: ``"skip"`` (the default) marks
it failed and skipped without calling its agent; ``"run"`` runs it anyway, as the seed's
orchestrator does, with its dependencies' statuses and errors in its task's inputs
(:func:`dependency_inputs`)."""

DEPENDENCY_FAILURE_CHOICES: tuple[OnDependencyFailure, ...] = ("skip", "run")


def _now() -> datetime:
    return datetime.now(UTC)


class WorkflowStep(BaseModel):
    """One step: ``agent`` (a registered agent's name or id) does ``action`` with ``inputs``.

    References: an input value that is exactly ``"{{step_id}}"`` takes that step's result data
    whole, and ``"{{step_id.key}}"`` the value of ``key`` in it (the data must be a dict; the key
    is what follows the last dot, so step ids may hold dots and spaces). The step referred to
    must be in ``depends_on``. Only whole top-level input values are references::

        WorkflowStep(agent="coder", action="generate", inputs={"spec": "fizzbuzz"})
        WorkflowStep(
            agent="reviewer",
            action="review",
            inputs={"code": "{{coder:generate.output}}"},
            depends_on=["coder:generate"],
        )
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
        """``(input name, step id, key or None)`` for each ``"{{...}}"`` input.

        The reference is read against ``depends_on``: the whole text naming a dependency takes
        its data whole, else the text before the last dot must name one. A reference naming no
        dependency comes back with its best-guess step id (``check()`` refuses it).
        """
        found: list[tuple[str, str, str | None]] = []
        for name, value in self.inputs.items():
            if isinstance(value, str) and (match := _REFERENCE.match(value)):
                found.append((name, *_parse_reference(match.group(1), self.depends_on)))
        return found


def _parse_reference(reference: str, depends_on: Sequence[str]) -> tuple[str, str | None]:
    if reference in depends_on:
        return reference, None
    step, dot, key = reference.rpartition(".")
    if dot and step and key:
        return step, key
    return reference, None


class DagWorkflow(BaseModel):
    """A DAG of steps for :meth:`Orchestrator.execute` (not to be confused with core's graph).

    Constructing one checks field types only; :meth:`check` (which the orchestrator calls
    before anything runs) checks the graph.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = "workflow"
    steps: list[WorkflowStep]

    def check(self) -> None:
        """Raise ``OrchestrationConfigError`` (or ``DependencyCycleError``) naming what is wrong.

        Refused: no steps, two steps with one id, a dependency that is not a step or is listed
        twice, a reference to a step outside ``depends_on``, and steps depending on each other
        in a circle (the error names it as a path in run order).
        """
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
            _check_step(self.name, step, ids)
        cycle = find_cycle({s.step_id: s.depends_on for s in self.steps})
        if cycle:
            raise DependencyCycleError(
                f"workflow {self.name!r}: steps depend on each other in a circle: "
                f"{' -> '.join(cycle)} (each step needs the one before it); remove one of "
                "these dependencies"
            )


def _check_step(workflow: str, step: WorkflowStep, ids: set[str]) -> None:
    for dependency in step.depends_on:
        if dependency not in ids:
            raise OrchestrationConfigError(
                f"workflow {workflow!r}: step {step.step_id!r} depends on {dependency!r}, which "
                "is not a step"
            )
    if len(set(step.depends_on)) != len(step.depends_on):
        raise OrchestrationConfigError(
            f"workflow {workflow!r}: step {step.step_id!r} lists a dependency twice: "
            f"{step.depends_on}"
        )
    for name, referenced, _ in step.references():
        if referenced not in step.depends_on:
            raise OrchestrationConfigError(
                f"workflow {workflow!r}: input {name!r} of step {step.step_id!r} "
                f"({step.inputs[name]!r}) refers to step {referenced!r}, which is not in its "
                "depends_on"
            )


def find_cycle(depends_on: Mapping[str, Sequence[str]]) -> list[str]:
    """A dependency circle as ``[a, b, ..., a]`` in run order (b needs a), or ``[]``.

    Iterative (any depth); deterministic: steps and dependencies are visited in order.
    Dependencies that are not keys are ignored.
    """
    done: set[str] = set()
    for root in depends_on:
        if root in done:
            continue
        path = [root]
        on_path = {root}
        pending = [iter(depends_on[root])]
        while pending:
            nxt = next(pending[-1], None)
            if nxt is None:
                pending.pop()
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
            elif nxt in on_path:
                return list(reversed([*path[path.index(nxt) :], nxt]))
            elif nxt not in done and nxt in depends_on:
                path.append(nxt)
                on_path.add(nxt)
                pending.append(iter(depends_on[nxt]))
    return []


class StepInputError(OrchestratorError):
    """A step's ``"{{step.key}}"`` input names a key its dependency's result data lacks.

    Known only at run time: the step fails with this message and its dependents are skipped
    (or run, with ``on_dependency_failure="run"``).
    """


def resolve_inputs(
    step: WorkflowStep,
    results: Mapping[str, StepResult],
    *,
    on_dependency_failure: OnDependencyFailure = "skip",
) -> dict[str, Any]:
    """``step.inputs`` with each reference replaced by its dependency's result data.

    Raises :class:`StepInputError` naming the step, the input and the key when a key is
    missing (or the data is not a dict). With ``on_dependency_failure="run"`` a reference into
    a dependency that did not succeed is ``None`` when its data lacks the key (a failed step
    often has no data): the step runs and reads why from its task's inputs.
    """
    resolved = dict(step.inputs)
    for name, referenced, key in step.references():
        dependency = results[referenced]
        data = dependency.data
        if key is None:
            resolved[name] = data
            continue
        lenient = on_dependency_failure == "run" and not dependency.ok
        if lenient and (not isinstance(data, dict) or key not in data):
            resolved[name] = None
            continue
        if not isinstance(data, dict) or key not in data:
            has = (
                f"its keys are {sorted(map(str, cast('dict[Any, Any]', data)))}"
                if isinstance(data, dict)
                else f"it is {type(data).__name__}, not a dict"
            )
            raise StepInputError(
                f"input {name!r} of step {step.step_id!r}: the result of step {referenced!r} "
                f"has no key {key!r} ({has})"
            )
        resolved[name] = cast("dict[str, Any]", data)[key]
    return resolved


def dependency_inputs(
    step: WorkflowStep,
    results: Mapping[str, StepResult],
    *,
    on_dependency_failure: OnDependencyFailure = "skip",
) -> dict[str, Any]:
    """What a step's task gets as ``TaskPayload.inputs``, by dependency step id.

    ``"skip"``: each dependency's result data (they all succeeded, or the step is not run).
    ``"run"``: each dependency's outcome, failed ones included, as
    ``{"status": "success" | "partial" | "failure", "data": ..., "error": str | None}``.
    """
    if on_dependency_failure == "skip":
        return {d: results[d].data for d in step.depends_on}
    return {
        d: {"status": r.status.value, "data": r.data, "error": r.error}
        for d, r in ((d, results[d]) for d in step.depends_on)
    }


class StepResult(BaseModel):
    """How one step went: status, the agent's result, the error, and when it ran."""

    step_id: str
    agent: str
    action: str
    status: ResultStatus
    result: ResultPayload | None = None
    """The agent's answer (``None`` when the agent was not called)."""
    error: str | None = None
    skipped: bool = False
    """Not run, because a step it depends on failed (``on_dependency_failure="skip"``)."""
    started_at: datetime = Field(default_factory=_now)
    finished_at: datetime = Field(default_factory=_now)
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        """The step succeeded."""
        return self.status is ResultStatus.SUCCESS

    @property
    def data(self) -> Any:
        """The agent's result data (``None`` when there is none)."""
        return self.result.data if self.result is not None else None


class DagResult(BaseModel):
    """How a whole orchestrator workflow went: SUCCESS, PARTIAL or FAILURE, and each step.

    SUCCESS when every step succeeded, PARTIAL when some did, FAILURE when none did.
    """

    workflow_id: str
    """The core run's id (the same after a resume from a checkpoint)."""
    name: str
    status: ResultStatus
    results: dict[str, StepResult]
    """By step id, in the workflow's step order."""
    started_at: datetime = Field(default_factory=_now)
    """When the first step started."""
    finished_at: datetime = Field(default_factory=_now)
    total_time_s: float = 0.0
    """Wall time from the first step's start to the end (not the sum of the steps' times)."""

    @property
    def succeeded(self) -> list[str]:
        """Ids of the steps that succeeded, in step order."""
        return [step_id for step_id, r in self.results.items() if r.ok]

    @property
    def failed(self) -> list[str]:
        """Ids of the steps that failed or were skipped, in step order."""
        return [step_id for step_id, r in self.results.items() if not r.ok]


Workflow = DagWorkflow
"""The earlier name of :class:`DagWorkflow` (it clashed with core's ``Workflow``)."""
WorkflowResult = DagResult
"""The earlier name of :class:`DagResult`."""


def overall_status(results: Iterable[StepResult]) -> ResultStatus:
    """SUCCESS if every step succeeded, PARTIAL if some did, else FAILURE."""
    outcomes = [r.ok for r in results]
    if outcomes and all(outcomes):
        return ResultStatus.SUCCESS
    return ResultStatus.PARTIAL if any(outcomes) else ResultStatus.FAILURE
