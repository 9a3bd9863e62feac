"""Orchestrator: the registry, send_task, and DAG workflows on the core engine."""

from __future__ import annotations

import asyncio

import pytest

from agentic_core import ChatAgent, ChatMessage, ChatOptions, InMemoryCheckpointStore
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import (
    DagResult,
    DagWorkflow,
    DependencyCycleError,
    OrchestrationConfigError,
    Orchestrator,
    OrchestratorError,
    ResultPayload,
    ResultStatus,
    TaskPayload,
    WorkflowStep,
)


class Worker:
    """A task runner: answers ``{"done": action, "saw": spec}``; fails on ``fail`` actions."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.id = f"{name}-id"
        self.tasks: list[TaskPayload] = []

    async def execute_task(self, task: TaskPayload) -> ResultPayload:
        self.tasks.append(task)
        if task.action.startswith("fail"):
            return ResultPayload(status=ResultStatus.FAILURE, error=f"{self.name} cannot")
        return ResultPayload(
            status=ResultStatus.SUCCESS, data={"done": task.action, "saw": task.spec}
        )


def orchestrator(*names: str) -> tuple[Orchestrator, dict[str, Worker]]:
    workers = {name: Worker(name) for name in names}
    orch = Orchestrator()
    for worker in workers.values():
        orch.register_agent(worker)
    return orch, workers


def step(agent: str, action: str, *deps: str, **inputs: object) -> WorkflowStep:
    return WorkflowStep(agent=agent, action=action, depends_on=list(deps), inputs=dict(inputs))


async def test_a_dag_runs_in_dependency_order_with_inputs_from_earlier_steps() -> None:
    orch, workers = orchestrator("coder", "tester", "reviewer")
    result = await orch.execute(
        DagWorkflow(
            name="ship",
            steps=[
                step("coder", "generate", spec="fizzbuzz"),
                step("tester", "test", "coder:generate", code="{{coder:generate.done}}"),
                step("reviewer", "review", "coder:generate", everything="{{coder:generate}}"),
            ],
        )
    )
    assert result.status is ResultStatus.SUCCESS
    assert list(result.results) == ["coder:generate", "tester:test", "reviewer:review"]
    tested = workers["tester"].tasks[0]
    assert tested.spec == {"code": "generate"}
    assert tested.inputs == {"coder:generate": {"done": "generate", "saw": {"spec": "fizzbuzz"}}}
    assert workers["reviewer"].tasks[0].spec == {
        "everything": {"done": "generate", "saw": {"spec": "fizzbuzz"}}
    }


async def test_a_failed_step_makes_the_run_partial_and_skips_its_dependents() -> None:
    orch, workers = orchestrator("a", "b", "c")
    result = await orch.execute(
        DagWorkflow(
            steps=[step("a", "fail now"), step("b", "use", "a:fail now"), step("c", "solo")]
        )
    )
    assert result.status is ResultStatus.PARTIAL
    assert result.results["a:fail now"].error == "a cannot"
    skipped = result.results["b:use"]
    assert skipped.skipped
    assert skipped.error == "skipped: dependency 'a:fail now' failed"
    assert workers["b"].tasks == []
    assert result.results["c:solo"].status is ResultStatus.SUCCESS


async def test_all_failed_is_failure() -> None:
    orch, _ = orchestrator("a")
    result = await orch.execute(DagWorkflow(steps=[step("a", "fail")]))
    assert result.status is ResultStatus.FAILURE


async def test_ready_steps_run_in_parallel() -> None:
    """A rendezvous: each step waits for the other to start; only a parallel run ends."""
    arrived = {"left": asyncio.Event(), "right": asyncio.Event()}

    class Meeting:
        def __init__(self, me: str, other: str) -> None:
            self.name, self.id, self.other = me, me, other

        async def execute_task(self, task: TaskPayload) -> ResultPayload:
            arrived[self.name].set()
            async with asyncio.timeout(10):
                await arrived[self.other].wait()
            return ResultPayload(status=ResultStatus.SUCCESS, data=self.name)

    orch = Orchestrator()
    orch.register_agent(Meeting("left", "right"))
    orch.register_agent(Meeting("right", "left"))
    result = await orch.execute(DagWorkflow(steps=[step("left", "meet"), step("right", "meet")]))
    assert result.status is ResultStatus.SUCCESS


async def test_max_parallel_bounds_concurrent_steps() -> None:
    running = 0
    peak = 0

    class Counted:
        def __init__(self, name: str) -> None:
            self.name, self.id = name, name

        async def execute_task(self, task: TaskPayload) -> ResultPayload:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            running -= 1
            return ResultPayload(status=ResultStatus.SUCCESS)

    orch = Orchestrator()
    for name in ("a", "b", "c", "d"):
        orch.register_agent(Counted(name))
    steps = [step(name, "work") for name in ("a", "b", "c", "d")]
    assert (
        await orch.execute(DagWorkflow(steps=steps), max_parallel=1)
    ).status is ResultStatus.SUCCESS
    assert peak == 1
    peak = 0
    await orch.execute(DagWorkflow(steps=steps), max_parallel=4)
    assert peak == 4


def test_a_cycle_is_named_before_anything_runs() -> None:
    orch, workers = orchestrator("a", "b", "c")
    workflow = DagWorkflow(
        steps=[step("a", "x", "c:z"), step("b", "y", "a:x"), step("c", "z", "b:y")]
    )
    with pytest.raises(DependencyCycleError, match=r"circle: a:x -> b:y -> c:z -> a:x \("):
        orch.build_workflow(workflow)
    assert all(not w.tasks for w in workers.values())


def test_a_step_depending_on_itself_is_a_cycle() -> None:
    orch, _ = orchestrator("a")
    with pytest.raises(DependencyCycleError, match=r"circle: a:x -> a:x"):
        orch.build_workflow(DagWorkflow(steps=[step("a", "x", "a:x")]))


def test_long_chains_are_checked_without_hitting_the_recursion_limit() -> None:
    chain = [WorkflowStep(agent="a", action="x", id="s0")]
    chain += [
        WorkflowStep(agent="a", action="x", id=f"s{i}", depends_on=[f"s{i - 1}"])
        for i in range(1, 3000)
    ]
    DagWorkflow(steps=chain).check()
    chain[0] = WorkflowStep(agent="a", action="x", id="s0", depends_on=["s2999"])
    with pytest.raises(DependencyCycleError, match=r"s0 -> s1 -> s2 -> "):
        DagWorkflow(steps=chain).check()


@pytest.mark.parametrize(
    ("steps", "match"),
    [
        ([step("ghost", "x")], "names agent 'ghost', which is not registered"),
        ([step("a", "x", "nope")], "depends on 'nope', which is not a step"),
        ([step("a", "x"), step("a", "x")], "two steps have the id 'a:x'"),
        ([step("a", "x"), step("a", "y", v="{{a:x}}")], "not in its depends_on"),
        ([], "has no steps"),
        ([step("a", "x"), step("a", "y", "a:x", "a:x")], "lists a dependency twice"),
        (
            [step("a", "x"), step("a", "y", "a:x", v="{{ghost.key}}")],
            r"input 'v' of step 'a:y' \('\{\{ghost.key\}\}'\) refers to step 'ghost'",
        ),
        ([WorkflowStep(agent="a", action="x", id="orchestrator_result")], "is reserved"),
    ],
)
def test_bad_workflows_are_typed_errors_naming_the_culprit(
    steps: list[WorkflowStep], match: str
) -> None:
    orch, _ = orchestrator("a")
    with pytest.raises(OrchestrationConfigError, match=match):
        orch.build_workflow(DagWorkflow(steps=steps))


async def test_a_missing_input_key_fails_the_step_naming_it() -> None:
    orch, _ = orchestrator("a", "b")
    result = await orch.execute(
        DagWorkflow(steps=[step("a", "x"), step("b", "y", "a:x", v="{{a:x.missing}}")])
    )
    assert result.status is ResultStatus.PARTIAL
    assert result.results["b:y"].error == (
        "input 'v' of step 'b:y': the result of step 'a:x' has no key 'missing' "
        "(its keys are ['done', 'saw'])"
    )


async def test_registry_and_send_task_with_a_chat_agent() -> None:
    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        return f"done: {messages[-1].text.splitlines()[0]}"

    writer = ChatAgent(FunctionChatClient(reply), name="writer", description="writes")
    orch = Orchestrator()
    ref = orch.register_agent(writer)
    assert ref.name == "writer"
    assert ref.description == "writes"
    with pytest.raises(OrchestrationConfigError, match="already registered"):
        orch.register_agent(writer)
    with pytest.raises(OrchestrationConfigError, match="neither an Agent"):
        orch.register_agent(object())
    result = await orch.send_task("writer", TaskPayload(action="summarize", spec="text"))
    assert result.status is ResultStatus.SUCCESS
    assert result.data == {"output": "done: ## Action: summarize"}
    assert [r.name for r in orch.list_agents()] == ["writer"]
    assert orch.unregister_agent(ref.id) is True
    assert orch.unregister_agent("writer") is False
    with pytest.raises(OrchestratorError, match="no agent 'writer' is registered"):
        await orch.send_task("writer", TaskPayload(action="x"))


async def test_send_task_turns_timeouts_and_crashes_into_failures() -> None:
    async def hang(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        await asyncio.Event().wait()
        return ""

    def crash(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise RuntimeError("boom")

    orch = Orchestrator()
    orch.register_agent(ChatAgent(FunctionChatClient(hang), name="slow"))
    orch.register_agent(ChatAgent(FunctionChatClient(crash), name="broken"))
    slow = await orch.send_task("slow", TaskPayload(action="x"), timeout_s=0.05)
    assert slow.status is ResultStatus.FAILURE
    assert slow.error == "agent 'slow' timed out after 0.05 s"
    broken = await orch.send_task("broken", TaskPayload(action="x"))
    assert broken.error is not None
    assert "RuntimeError: boom" in broken.error


async def test_a_checkpointed_dag_resumes_to_the_same_result() -> None:
    orch, workers = orchestrator("a", "b", "c")
    store = InMemoryCheckpointStore()
    graph = orch.build_workflow(
        DagWorkflow(steps=[step("a", "x"), step("b", "y", "a:x"), step("c", "z", "b:y")]),
        checkpoint_store=store,
    )
    full = await graph.run(None)
    history = await graph.get_run_history(full.run_id, checkpoint_store=store)
    middle = history[len(history) // 2]
    resumed = await graph.run(checkpoint_id=middle.id, checkpoint_store=store)
    first, again = full.outputs[0], resumed.outputs[0]
    assert isinstance(again, DagResult)
    assert again.status is first.status is ResultStatus.SUCCESS
    assert {k: r.result for k, r in again.results.items()} == {
        k: r.result for k, r in first.results.items()
    }
    assert len(workers["c"].tasks) == 2  # the last step ran again after the resume, once


async def test_references_read_step_ids_with_spaces_and_dots() -> None:
    orch, workers = orchestrator("a", "b")
    result = await orch.execute(
        DagWorkflow(
            steps=[
                step("a", "run tests"),
                WorkflowStep(agent="a", action="x", id="v1.2"),
                step(
                    "b",
                    "use",
                    "a:run tests",
                    "v1.2",
                    whole="{{ a:run tests }}",
                    part="{{v1.2.done}}",
                    literal="{{not a reference",
                ),
            ]
        )
    )
    assert result.status is ResultStatus.SUCCESS
    assert workers["b"].tasks[0].spec == {
        "whole": {"done": "run tests", "saw": {}},
        "part": "x",
        "literal": "{{not a reference",
    }


async def test_a_step_with_several_dependencies_waits_for_all_and_sees_each() -> None:
    orch, workers = orchestrator("a", "b", "c", "d")
    result = await orch.execute(
        DagWorkflow(
            steps=[
                step("a", "x"),
                step("b", "y", "a:x"),
                step("c", "z"),
                step("d", "join", "b:y", "c:z", left="{{b:y.done}}", right="{{c:z.done}}"),
            ]
        )
    )
    assert result.status is ResultStatus.SUCCESS
    joined = workers["d"].tasks
    assert len(joined) == 1
    assert joined[0].spec == {"left": "y", "right": "z"}
    assert list(joined[0].inputs or {}) == ["b:y", "c:z"]


async def test_a_timed_out_step_fails_its_dependents_are_skipped_and_the_run_ends() -> None:
    class Hanging:
        name = id = "hang"

        async def execute_task(self, task: TaskPayload) -> ResultPayload:
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    orch, _ = orchestrator("ok", "after")
    orch.register_agent(Hanging())
    result = await orch.execute(
        DagWorkflow(steps=[step("hang", "x"), step("after", "y", "hang:x"), step("ok", "z")]),
        timeout_s=0.05,
    )
    assert result.status is ResultStatus.PARTIAL
    assert result.results["hang:x"].error == "agent 'hang' timed out after 0.05 s"
    assert result.results["after:y"].skipped
    assert result.failed == ["hang:x", "after:y"]
    assert result.succeeded == ["ok:z"]


async def test_step_times_lie_within_the_run_and_total_time_is_its_wall_span() -> None:
    orch, _ = orchestrator("a", "b", "c")
    result = await orch.execute(
        DagWorkflow(steps=[step("a", "x"), step("b", "y", "a:x"), step("c", "z")])
    )
    for outcome in result.results.values():
        assert result.started_at <= outcome.started_at <= outcome.finished_at
        assert outcome.finished_at <= result.finished_at
        assert outcome.duration_s >= 0
    assert result.started_at == min(r.started_at for r in result.results.values())
    assert result.total_time_s == (result.finished_at - result.started_at).total_seconds()


def test_a_built_graph_runs_in_several_event_loops_each_with_its_own_limit() -> None:
    orch, _ = orchestrator("a", "b")
    graph = orch.build_workflow(DagWorkflow(steps=[step("a", "x"), step("b", "y")]), max_parallel=1)
    for _ in range(2):
        run = asyncio.run(graph.run(None))
        assert run.outputs[0].status is ResultStatus.SUCCESS


async def test_a_built_graph_keeps_its_agents_after_they_are_unregistered() -> None:
    orch, workers = orchestrator("a")
    graph = orch.build_workflow(DagWorkflow(steps=[step("a", "x")]))
    assert orch.unregister_agent("a")
    run = await graph.run(None)
    assert run.outputs[0].status is ResultStatus.SUCCESS
    assert len(workers["a"].tasks) == 1


async def test_bad_limits_are_refused_before_anything_runs() -> None:
    orch, workers = orchestrator("a")
    workflow = DagWorkflow(steps=[step("a", "x")])
    with pytest.raises(OrchestrationConfigError, match="max_parallel must be >= 1, got 0"):
        await orch.execute(workflow, max_parallel=0)
    with pytest.raises(OrchestrationConfigError, match="a timeout must be > 0 s, got -1"):
        await orch.execute(workflow, timeout_s=-1)
    with pytest.raises(OrchestrationConfigError, match="max_parallel must be >= 1"):
        Orchestrator(max_parallel=0)
    assert workers["a"].tasks == []


async def test_execute_checkpoints_every_superstep_of_the_run() -> None:
    orch, _ = orchestrator("a", "b")
    store = InMemoryCheckpointStore()
    result = await orch.execute(
        DagWorkflow(steps=[step("a", "x"), step("b", "y", "a:x")]), checkpoint_store=store
    )
    saved = await store.list(run_id=result.workflow_id)
    assert len(saved) == 4  # start, a, b, collector
