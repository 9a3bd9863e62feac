"""Orchestrator: an agent registry, tasks sent to agents, DAG workflows run on the core engine."""

from __future__ import annotations

import asyncio
import time
import weakref
from datetime import UTC, datetime
from typing import Any, Never, Protocol, runtime_checkable

import structlog
from pydantic import BaseModel, Field

from agentic_core import (
    Agent,
    CheckpointStore,
    Executor,
    ExecutorKind,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_orchestrator._dag import (
    DEPENDENCY_FAILURE_CHOICES,
    DagResult,
    DagWorkflow,
    OnDependencyFailure,
    StepInputError,
    StepResult,
    WorkflowStep,
    dependency_inputs,
    overall_status,
    resolve_inputs,
)
from agentic_orchestrator._errors import OrchestrationConfigError, OrchestratorError
from agentic_orchestrator._payloads import ResultMetrics, ResultPayload, ResultStatus, TaskPayload

_log = structlog.get_logger(__name__)

_START = "orchestrator_start"
_END = "orchestrator_result"


@runtime_checkable
class _TaskRunner(Protocol):
    async def execute_task(self, task: TaskPayload) -> ResultPayload: ...


_Registered = Agent | _TaskRunner


class AgentRef(BaseModel):
    """A registered agent, as :meth:`Orchestrator.list_agents` shows it."""

    id: str
    name: str
    description: str | None = None


class _Progress(BaseModel):
    """What flows along the DAG: every finished step's result so far."""

    results: dict[str, StepResult] = Field(default_factory=dict[str, StepResult])


class _Gate:
    """At most ``limit`` steps of one run at once: one semaphore per run.

    Made on first use inside the run's event loop and dropped once no step holds it, so a
    compiled graph serves runs in any loop, each with its own limit.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._by_run: weakref.WeakValueDictionary[str, asyncio.Semaphore] = (
            weakref.WeakValueDictionary()
        )

    def for_run(self, run_id: str) -> asyncio.Semaphore:
        gate = self._by_run.get(run_id)
        if gate is None:
            gate = asyncio.Semaphore(self.limit)
            self._by_run[run_id] = gate
        return gate


class _Start(Executor):
    @handler
    async def start(self, message: Any, ctx: WorkflowContext[_Progress]) -> None:
        """Start every step that depends on nothing (the run's message is ignored)."""
        del message
        await ctx.send_message(_Progress())


class _Step(Executor):
    """One step: resolves its inputs from its dependencies and sends its agent the task.

    The agent is bound when the graph is built; per-run data travels in the messages only.
    """

    def __init__(
        self,
        step: WorkflowStep,
        agent: _Registered,
        gate: _Gate,
        timeout_s: float | None,
        on_dependency_failure: OnDependencyFailure,
    ) -> None:
        super().__init__(step.step_id)
        self.step = step
        self.agent = agent
        self.gate = gate
        self.timeout_s = timeout_s
        self.on_dependency_failure: OnDependencyFailure = on_dependency_failure

    @handler
    async def run_step(
        self, progress: _Progress | list[_Progress], ctx: WorkflowContext[_Progress]
    ) -> None:
        """Run the step (or skip it when a dependency failed and the policy is "skip") and
        pass every result on."""
        known = _merge(progress)
        step = self.step
        failed = [d for d in step.depends_on if not known.results[d].ok]
        if failed and self.on_dependency_failure == "skip":
            outcome = self._outcome(
                ResultStatus.FAILURE,
                error=f"skipped: dependency {failed[0]!r} failed",
                skipped=True,
            )
        else:
            outcome = await self._run(known, ctx.run_id)
        known.results[step.step_id] = outcome
        await ctx.send_message(known)

    async def _run(self, known: _Progress, run_id: str) -> StepResult:
        step = self.step
        policy = self.on_dependency_failure
        try:
            spec = resolve_inputs(step, known.results, on_dependency_failure=policy)
        except StepInputError as exc:
            _log.warning("step_input_missing", step=step.step_id, error=str(exc))
            return self._outcome(ResultStatus.FAILURE, error=str(exc))
        earlier = dependency_inputs(step, known.results, on_dependency_failure=policy)
        task = TaskPayload(action=step.action, spec=spec, inputs=earlier or None)
        async with self.gate.for_run(run_id):
            started_at, started = _now(), time.perf_counter()
            result = await _perform(self.agent, task, self.timeout_s)
        return self._outcome(
            result.status,
            result=result,
            error=result.error,
            started_at=started_at,
            duration_s=time.perf_counter() - started,
        )

    def _outcome(
        self,
        status: ResultStatus,
        *,
        result: ResultPayload | None = None,
        error: str | None = None,
        skipped: bool = False,
        started_at: datetime | None = None,
        duration_s: float = 0.0,
    ) -> StepResult:
        finished_at = _now()
        return StepResult(
            step_id=self.step.step_id,
            agent=self.step.agent,
            action=self.step.action,
            status=status,
            result=result,
            error=error,
            skipped=skipped,
            started_at=started_at or finished_at,
            finished_at=finished_at,
            duration_s=duration_s,
        )


class _Collect(Executor):
    def __init__(self, workflow: DagWorkflow) -> None:
        super().__init__(_END, kind=ExecutorKind.ORCHESTRATOR)
        self.workflow = workflow

    @handler
    async def collect(
        self, progress: list[_Progress], ctx: WorkflowContext[Never, DagResult]
    ) -> None:
        """Yield the workflow's result once every last step has finished."""
        known = _merge(progress)
        ordered = {s.step_id: known.results[s.step_id] for s in self.workflow.steps}
        started_at = min(r.started_at for r in ordered.values())
        finished_at = _now()
        await ctx.yield_output(
            DagResult(
                workflow_id=ctx.run_id,
                name=self.workflow.name,
                status=overall_status(ordered.values()),
                results=ordered,
                started_at=started_at,
                finished_at=finished_at,
                total_time_s=max((finished_at - started_at).total_seconds(), 0.0),
            )
        )


class Orchestrator:
    """A registry of agents, and DAG workflows of their tasks run on the core engine.

    Agents are any core ``Agent`` (its answer becomes a ``ResultPayload`` whose data is
    ``{"output": text}``) or anything with ``execute_task(TaskPayload) -> ResultPayload`` (a
    :class:`TaskAgent`). :meth:`execute` checks the whole workflow first (unknown agents,
    missing steps, references outside ``depends_on``, dependency cycles: each a typed error
    naming the culprit, before anything runs), then compiles it to a core graph: every step is
    an executor, steps whose dependencies are done run in the same superstep (at most
    ``max_parallel`` at once), a step whose dependency failed is skipped (or run anyway, with
    ``on_dependency_failure="run"``), and the result is SUCCESS, PARTIAL or FAILURE with each
    step's result and times::

        orchestrator = Orchestrator()
        orchestrator.register_agent(coder)
        orchestrator.register_agent(reviewer)
        result = await orchestrator.execute(
            DagWorkflow(
                steps=[
                    WorkflowStep(agent="coder", action="generate", inputs={"spec": "fizzbuzz"}),
                    WorkflowStep(
                        agent="reviewer",
                        action="review",
                        inputs={"code": "{{coder:generate.output}}"},
                        depends_on=["coder:generate"],
                    ),
                ]
            )
        )

    A step's agent receives ``TaskPayload(action, spec=<its inputs, references resolved>,
    inputs=<each dependency's result data by step id>)``.

    ``on_dependency_failure`` says what a step does after a dependency that did not succeed
    (FAILURE or PARTIAL): ``"skip"`` (the default) records it as a skipped failure without
    calling its agent; ``"run"`` runs it once every dependency has a result, whatever its
    status, as the seed's orchestrator does. The step then sees every dependency's outcome:
    ``TaskPayload.inputs[dep] == {"status": ..., "data": ..., "error": ...}`` (successes
    included), and a ``"{{dep.key}}"`` reference into a failed dependency without that key is
    ``None`` instead of failing the step.
    """

    def __init__(
        self,
        *,
        default_timeout_s: float | None = 60.0,
        max_parallel: int = 10,
        on_dependency_failure: OnDependencyFailure = "skip",
    ) -> None:
        _check_limits("Orchestrator", max_parallel, default_timeout_s)
        _check_policy("Orchestrator", on_dependency_failure)
        self.default_timeout_s = default_timeout_s
        """Per task (``None``: no limit); ``send_task`` and ``execute`` may override it."""
        self.max_parallel = max_parallel
        """Steps of one run working at once, unless ``execute`` says otherwise."""
        self.on_dependency_failure: OnDependencyFailure = on_dependency_failure
        """``"skip"`` or ``"run"`` a step after a failed dependency, unless ``execute`` says
        otherwise."""
        self._agents: dict[str, _Registered] = {}

    # -- registry -------------------------------------------------------------------------------

    def register_agent(self, agent: Agent | Any) -> AgentRef:
        """Add ``agent`` (a core Agent, or anything with ``execute_task``); names are unique."""
        if not isinstance(agent, (Agent, _TaskRunner)):
            raise OrchestrationConfigError(
                f"Orchestrator: {type(agent).__qualname__} is neither an Agent nor has "
                "execute_task(TaskPayload)"
            )
        ref = _ref(agent)
        if not ref.id or not ref.name:
            raise OrchestrationConfigError(
                f"Orchestrator: an agent needs a non-empty id and name, got {ref!r}"
            )
        for other in map(_ref, self._agents.values()):
            if ref.name in (other.name, other.id) or ref.id in (other.name, other.id):
                raise OrchestrationConfigError(
                    f"Orchestrator: an agent named {ref.name!r} (or with id {ref.id!r}) is "
                    "already registered"
                )
        self._agents[ref.id] = agent
        _log.info("agent_registered", agent_id=ref.id, agent_name=ref.name)
        return ref

    def unregister_agent(self, agent_id: str) -> bool:
        """Remove the agent with this id (or name); whether there was one.

        Graphs already built keep the agent they were built with.
        """
        key = self._key(agent_id)
        if key is None:
            return False
        del self._agents[key]
        _log.info("agent_unregistered", agent_id=key)
        return True

    def list_agents(self) -> list[AgentRef]:
        """The registered agents, in registration order."""
        return [_ref(agent) for agent in self._agents.values()]

    def _key(self, agent: str) -> str | None:
        if agent in self._agents:
            return agent
        return next((key for key, a in self._agents.items() if _ref(a).name == agent), None)

    def _unknown(self, agent: str) -> str:
        known = ", ".join(r.name for r in self.list_agents()) or "none"
        return f"no agent {agent!r} is registered (agents: {known})"

    # -- tasks ----------------------------------------------------------------------------------

    async def send_task(
        self, agent_id: str, task: TaskPayload, timeout_s: float | None = None
    ) -> ResultPayload:
        """Have the agent (by id or name) do ``task``; its failure or timeout is a result.

        ``timeout_s`` defaults to ``default_timeout_s``. A core Agent gets the task as a
        prompt (:meth:`TaskPayload.to_prompt`) on a new thread. Raises ``OrchestratorError``
        only for an agent that is not registered.
        """
        key = self._key(agent_id)
        if key is None:
            raise OrchestratorError(self._unknown(agent_id))
        limit = self.default_timeout_s if timeout_s is None else timeout_s
        _check_limits("send_task", 1, limit)
        return await _perform(self._agents[key], task, limit)

    # -- workflows ------------------------------------------------------------------------------

    def build_workflow(
        self,
        workflow: DagWorkflow,
        *,
        max_parallel: int | None = None,
        timeout_s: float | None = None,
        checkpoint_store: CheckpointStore | None = None,
        on_dependency_failure: OnDependencyFailure | None = None,
    ) -> Workflow:
        """``workflow`` checked and compiled to a core ``Workflow``; its output is one
        :class:`DagResult`.

        Run it, checkpoint it, resume it and stream it like any other graph (the run's input
        message is ignored: ``await graph.run(None)``). The agents are bound now: unregistering
        one later does not change this graph. ``max_parallel`` bounds the steps working at once
        in each run; ``timeout_s`` is each step's (default: ``default_timeout_s``);
        ``on_dependency_failure`` overrides the orchestrator's.
        """
        limit = self.max_parallel if max_parallel is None else max_parallel
        step_timeout = self.default_timeout_s if timeout_s is None else timeout_s
        policy = (
            self.on_dependency_failure if on_dependency_failure is None else on_dependency_failure
        )
        _check_limits(f"workflow {workflow.name!r}", limit, step_timeout)
        _check_policy(f"workflow {workflow.name!r}", policy)
        workflow.check()
        agents: dict[str, _Registered] = {}
        for step in workflow.steps:
            if step.step_id in (_START, _END):
                raise OrchestrationConfigError(
                    f"workflow {workflow.name!r}: the step id {step.step_id!r} is reserved"
                )
            key = self._key(step.agent)
            if key is None:
                raise OrchestrationConfigError(
                    f"workflow {workflow.name!r}: step {step.step_id!r} names agent "
                    f"{step.agent!r}, which is not registered (agents: "
                    f"{', '.join(r.name for r in self.list_agents()) or 'none'})"
                )
            agents[step.step_id] = self._agents[key]
        return _compile(workflow, agents, _Gate(limit), step_timeout, checkpoint_store, policy)

    async def execute(
        self,
        workflow: DagWorkflow,
        *,
        max_parallel: int | None = None,
        timeout_s: float | None = None,
        checkpoint_store: CheckpointStore | None = None,
        on_dependency_failure: OnDependencyFailure | None = None,
    ) -> DagResult:
        """Check ``workflow`` (nothing runs when it is wrong), run it, and return how it went.

        ``max_parallel``, ``timeout_s`` (per step) and ``on_dependency_failure`` default to
        the orchestrator's; with a
        ``checkpoint_store`` every superstep is checkpointed (see :meth:`build_workflow` to
        resume one).
        """
        graph = self.build_workflow(
            workflow,
            max_parallel=max_parallel,
            timeout_s=timeout_s,
            checkpoint_store=checkpoint_store,
            on_dependency_failure=on_dependency_failure,
        )
        _log.info(
            "orchestrator_workflow_started", workflow=workflow.name, steps=len(workflow.steps)
        )
        run = await graph.run(None)
        results = [o for o in run.outputs if isinstance(o, DagResult)]
        if not results:
            raise OrchestratorError(
                f"workflow {workflow.name!r} ended {run.status.value} without a result"
            )
        result = results[-1]
        _log.info(
            "orchestrator_workflow_completed",
            workflow=workflow.name,
            workflow_id=result.workflow_id,
            status=result.status.value,
            failed=result.failed,
            duration_s=result.total_time_s,
        )
        return result


def _compile(
    workflow: DagWorkflow,
    agents: dict[str, _Registered],
    gate: _Gate,
    timeout_s: float | None,
    checkpoint_store: CheckpointStore | None,
    on_dependency_failure: OnDependencyFailure,
) -> Workflow:
    """Start → steps (direct edge for one dependency, fan-in for several) → collector."""
    builder = WorkflowBuilder(workflow.name, max_supersteps=len(workflow.steps) + 3)
    start = _Start(_START)
    builder.set_start_executor(start)
    nodes = {
        s.step_id: _Step(s, agents[s.step_id], gate, timeout_s, on_dependency_failure)
        for s in workflow.steps
    }
    needed: set[str] = set()
    for step in workflow.steps:
        node = nodes[step.step_id]
        needed.update(step.depends_on)
        if not step.depends_on:
            builder.add_edge(start, node)
        elif len(step.depends_on) == 1:
            builder.add_edge(nodes[step.depends_on[0]], node)
        else:
            builder.add_fan_in_edge([nodes[d] for d in step.depends_on], node)
    # Every result reaches the last steps (each message carries all results so far).
    last = [nodes[s.step_id] for s in workflow.steps if s.step_id not in needed]
    builder.add_fan_in_edge(last, _Collect(workflow))
    if checkpoint_store is not None:
        builder.with_checkpointing(checkpoint_store)
    return builder.build()


async def _perform(agent: _Registered, task: TaskPayload, timeout_s: float | None) -> ResultPayload:
    """``agent`` does ``task`` within ``timeout_s``; a failure or timeout is a FAILURE result."""
    name = _ref(agent).name
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            if isinstance(agent, _TaskRunner):
                result = await agent.execute_task(task)
                if isinstance(result, ResultPayload):  # pyright: ignore[reportUnnecessaryIsInstance]
                    return result
                raise TypeError(f"execute_task returned {type(result).__name__}, not ResultPayload")
            response = await agent.run(task.to_prompt(), thread=agent.get_new_thread())
    except TimeoutError:
        error = f"agent {name!r} timed out after {timeout_s} s"
    except Exception as exc:  # noqa: BLE001 - a failed task is a result
        error = f"agent {name!r} failed: {type(exc).__name__}: {exc}"
    else:
        return ResultPayload(
            status=ResultStatus.SUCCESS,
            data={"output": response.text},
            metrics=ResultMetrics(
                execution_time_s=time.perf_counter() - started,
                tokens_used=response.usage.total_tokens or None,
            ),
        )
    _log.warning("task_failed", agent=name, action=task.action, error=error)
    return ResultPayload(
        status=ResultStatus.FAILURE,
        error=error,
        metrics=ResultMetrics(execution_time_s=time.perf_counter() - started),
    )


def _check_limits(owner: str, max_parallel: int, timeout_s: float | None) -> None:
    if max_parallel < 1:
        raise OrchestrationConfigError(f"{owner}: max_parallel must be >= 1, got {max_parallel}")
    if timeout_s is not None and timeout_s <= 0:
        raise OrchestrationConfigError(f"{owner}: a timeout must be > 0 s, got {timeout_s}")


def _check_policy(owner: str, on_dependency_failure: str) -> None:
    if on_dependency_failure not in DEPENDENCY_FAILURE_CHOICES:
        raise OrchestrationConfigError(
            f"{owner}: on_dependency_failure must be 'skip' or 'run', got {on_dependency_failure!r}"
        )


def _now() -> datetime:
    return datetime.now(UTC)


def _ref(agent: _Registered) -> AgentRef:
    description = getattr(agent, "description", None)
    return AgentRef(
        id=str(getattr(agent, "id", "")),
        name=str(getattr(agent, "name", "")),
        description=description if isinstance(description, str) else None,
    )


def _merge(progress: _Progress | list[_Progress]) -> _Progress:
    if isinstance(progress, _Progress):
        return _Progress(results=dict(progress.results))
    merged: dict[str, StepResult] = {}
    for part in progress:
        merged.update(part.results)
    return _Progress(results=merged)
