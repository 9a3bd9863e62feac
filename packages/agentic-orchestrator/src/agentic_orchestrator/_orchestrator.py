"""Orchestrator: an agent registry, tasks sent to agents, DAG workflows run on the core engine."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Never, Protocol, cast, runtime_checkable

import structlog
from pydantic import BaseModel, Field

from agentic_core import (
    Agent,
    CheckpointStore,
    Executor,
    ExecutorKind,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_core import Workflow as GraphWorkflow
from agentic_orchestrator._dag import StepResult, Workflow, WorkflowResult, WorkflowStep
from agentic_orchestrator._errors import OrchestrationConfigError, OrchestratorError
from agentic_orchestrator._payloads import ResultMetrics, ResultPayload, ResultStatus, TaskPayload

_log = structlog.get_logger(__name__)

_START = "orchestrator_start"
_END = "orchestrator_result"


@runtime_checkable
class _TaskRunner(Protocol):
    async def execute_task(self, task: TaskPayload) -> ResultPayload: ...


class AgentRef(BaseModel):
    """A registered agent, as :meth:`Orchestrator.list_agents` shows it."""

    id: str
    name: str
    description: str | None = None


class _Progress(BaseModel):
    """What flows along the DAG: every finished step's result so far."""

    results: dict[str, StepResult] = Field(default_factory=dict[str, StepResult])


class _Start(Executor):
    @handler
    async def start(self, message: Any, ctx: WorkflowContext[_Progress]) -> None:
        """Start every step that depends on nothing."""
        del message
        await ctx.send_message(_Progress())


class _Step(Executor):
    """One step: waits for its dependencies, resolves its inputs, sends the task."""

    def __init__(self, step: WorkflowStep, orchestrator: Orchestrator, gate: asyncio.Semaphore):
        super().__init__(step.step_id)
        self.step = step
        self.orchestrator = orchestrator
        self.gate = gate

    @handler
    async def run_step(
        self, progress: _Progress | list[_Progress], ctx: WorkflowContext[_Progress]
    ) -> None:
        """Run the step (or skip it when a dependency failed) and pass every result on."""
        known = _merge(progress)
        step = self.step
        failed = [d for d in step.depends_on if known.results[d].status is not ResultStatus.SUCCESS]
        started = time.perf_counter()
        if failed:
            outcome = StepResult(
                step_id=step.step_id,
                agent=step.agent,
                action=step.action,
                status=ResultStatus.FAILURE,
                error=f"skipped: dependency {failed[0]!r} failed",
                skipped=True,
            )
        else:
            outcome = await self._run(known, started)
        known.results[step.step_id] = outcome
        await ctx.send_message(known)

    async def _run(self, known: _Progress, started: float) -> StepResult:
        step = self.step
        try:
            spec = {name: _resolve(step, name, value, known) for name, value in step.inputs.items()}
        except OrchestratorError as exc:
            return StepResult(
                step_id=step.step_id,
                agent=step.agent,
                action=step.action,
                status=ResultStatus.FAILURE,
                error=str(exc),
            )
        earlier = {d: _data(known.results[d]) for d in step.depends_on}
        task = TaskPayload(action=step.action, spec=spec, inputs=earlier or None)
        async with self.gate:
            result = await self.orchestrator.send_task(step.agent, task)
        return StepResult(
            step_id=step.step_id,
            agent=step.agent,
            action=step.action,
            status=result.status,
            result=result,
            error=result.error,
            duration_s=time.perf_counter() - started,
        )


class _Collect(Executor):
    def __init__(self, workflow: Workflow) -> None:
        super().__init__(_END, kind=ExecutorKind.ORCHESTRATOR)
        self.workflow = workflow

    @handler
    async def collect(
        self, progress: list[_Progress], ctx: WorkflowContext[Never, WorkflowResult]
    ) -> None:
        """Yield the workflow's result once every last step has finished."""
        known = _merge(progress)
        ordered = {s.step_id: known.results[s.step_id] for s in self.workflow.steps}
        succeeded = sum(r.status is ResultStatus.SUCCESS for r in ordered.values())
        if succeeded == len(ordered):
            status = ResultStatus.SUCCESS
        elif succeeded:
            status = ResultStatus.PARTIAL
        else:
            status = ResultStatus.FAILURE
        await ctx.yield_output(
            WorkflowResult(
                workflow_id=ctx.run_id,
                name=self.workflow.name,
                status=status,
                results=ordered,
                total_time_s=sum(r.duration_s for r in ordered.values()),
            )
        )


class Orchestrator:
    """A registry of agents, and DAG workflows of their tasks run on the core engine.

    Agents are any core ``Agent`` (its answer becomes a ``ResultPayload``) or anything with
    ``execute_task(TaskPayload) -> ResultPayload`` (a :class:`TaskAgent`). :meth:`execute`
    checks the whole workflow first (unknown agents, missing steps, references outside
    ``depends_on``, dependency cycles: each a typed error naming the culprit, before anything
    runs), then compiles it to a core graph: every step is an executor, steps whose
    dependencies are done run in the same superstep (at most ``max_parallel`` at once), a step
    whose dependency failed is skipped, and the result is SUCCESS, PARTIAL or FAILURE with each
    step's result and time::

        orchestrator = Orchestrator()
        orchestrator.register_agent(coder)
        orchestrator.register_agent(reviewer)
        result = await orchestrator.execute(
            Workflow(
                steps=[
                    WorkflowStep(agent="coder", action="generate", inputs={"spec": "fizzbuzz"}),
                    WorkflowStep(
                        agent="reviewer",
                        action="review",
                        inputs={"code": "{{coder:generate}}"},
                        depends_on=["coder:generate"],
                    ),
                ]
            )
        )
    """

    def __init__(self, *, default_timeout_s: float = 60.0, max_parallel: int = 10) -> None:
        if default_timeout_s <= 0 or max_parallel < 1:
            raise OrchestrationConfigError(
                "Orchestrator: default_timeout_s must be > 0 and max_parallel >= 1"
            )
        self.default_timeout_s = default_timeout_s
        self.max_parallel = max_parallel
        self._agents: dict[str, Agent | _TaskRunner] = {}

    # -- registry -------------------------------------------------------------------------------

    def register_agent(self, agent: Agent | Any) -> AgentRef:
        """Add ``agent`` (a core Agent, or anything with ``execute_task``); names are unique."""
        if not isinstance(agent, (Agent, _TaskRunner)):
            raise OrchestrationConfigError(
                f"Orchestrator: {type(agent).__qualname__} is neither an Agent nor has "
                "execute_task(TaskPayload)"
            )
        ref = _ref(agent)
        for other in self._agents.values():
            if _ref(other).name == ref.name or _ref(other).id == ref.id:
                raise OrchestrationConfigError(
                    f"Orchestrator: an agent named {ref.name!r} (or with id {ref.id!r}) is "
                    "already registered"
                )
        self._agents[ref.id] = agent
        _log.info("agent_registered", agent_id=ref.id, agent_name=ref.name)
        return ref

    def unregister_agent(self, agent_id: str) -> bool:
        """Remove the agent with this id (or name); whether there was one."""
        key = self._key(agent_id)
        if key is None:
            return False
        del self._agents[key]
        return True

    def list_agents(self) -> list[AgentRef]:
        """The registered agents, in registration order."""
        return [_ref(agent) for agent in self._agents.values()]

    def _key(self, agent: str) -> str | None:
        if agent in self._agents:
            return agent
        return next((key for key, a in self._agents.items() if _ref(a).name == agent), None)

    # -- tasks ----------------------------------------------------------------------------------

    async def send_task(
        self, agent_id: str, task: TaskPayload, timeout_s: float | None = None
    ) -> ResultPayload:
        """Have the agent (by id or name) do ``task``; its failure or timeout is a result.

        Raises ``OrchestratorError`` only for an agent that is not registered.
        """
        key = self._key(agent_id)
        if key is None:
            raise OrchestratorError(
                f"no agent {agent_id!r} is registered (agents: "
                f"{', '.join(r.name for r in self.list_agents()) or 'none'})"
            )
        agent = self._agents[key]
        name = _ref(agent).name
        limit = timeout_s or self.default_timeout_s
        started = time.perf_counter()
        try:
            async with asyncio.timeout(limit):
                if isinstance(agent, _TaskRunner):
                    return await agent.execute_task(task)
                response = await agent.run(task.to_prompt(), thread=agent.get_new_thread())
        except TimeoutError:
            error = f"agent {name!r} timed out after {limit} s"
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

    # -- workflows ------------------------------------------------------------------------------

    def build_workflow(
        self,
        workflow: Workflow,
        *,
        max_parallel: int | None = None,
        checkpoint_store: CheckpointStore | None = None,
    ) -> GraphWorkflow:
        """``workflow`` checked and compiled to a core ``Workflow`` (run it, checkpoint it,
        stream it like any other); its output is one :class:`WorkflowResult`."""
        workflow.check()
        for step in workflow.steps:
            if self._key(step.agent) is None:
                raise OrchestrationConfigError(
                    f"workflow {workflow.name!r}: step {step.step_id!r} names agent "
                    f"{step.agent!r}, which is not registered (agents: "
                    f"{', '.join(r.name for r in self.list_agents()) or 'none'})"
                )
            if step.step_id in (_START, _END):
                raise OrchestrationConfigError(f"the step id {step.step_id!r} is reserved")
        gate = asyncio.Semaphore(max_parallel or self.max_parallel)
        builder = WorkflowBuilder(workflow.name, max_supersteps=len(workflow.steps) + 3)
        start = _Start(_START)
        builder.set_start_executor(start)
        nodes = {s.step_id: _Step(s, self, gate) for s in workflow.steps}
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
        last = [nodes[s.step_id] for s in workflow.steps if s.step_id not in needed]
        builder.add_fan_in_edge(last, _Collect(workflow))
        if checkpoint_store is not None:
            builder.with_checkpointing(checkpoint_store)
        return builder.build()

    async def execute(
        self,
        workflow: Workflow,
        *,
        max_parallel: int | None = None,
        checkpoint_store: CheckpointStore | None = None,
    ) -> WorkflowResult:
        """Check ``workflow``, run it, and return how it went."""
        graph = self.build_workflow(
            workflow, max_parallel=max_parallel, checkpoint_store=checkpoint_store
        )
        run = await graph.run(None)
        return cast("WorkflowResult", run.outputs[0])


def _ref(agent: Agent | _TaskRunner) -> AgentRef:
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


def _data(result: StepResult) -> Any:
    return result.result.data if result.result is not None else None


def _resolve(step: WorkflowStep, name: str, value: Any, known: _Progress) -> Any:
    for input_name, referenced, key in step.references():
        if input_name != name:
            continue
        data = _data(known.results[referenced])
        if key is None:
            return data
        if not isinstance(data, dict) or key not in data:
            raise OrchestratorError(
                f"input {name!r} of step {step.step_id!r}: the result of step {referenced!r} "
                f"has no key {key!r}"
            )
        return cast("dict[str, Any]", data)[key]
    return value
