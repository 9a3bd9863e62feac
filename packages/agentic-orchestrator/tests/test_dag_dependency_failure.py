"""Orchestrator(on_dependency_failure=...): skip a step after a failed dependency (the default),
or run it anyway as the seed's orchestrator does, showing it its dependencies' outcomes."""

from __future__ import annotations

import json

import pytest

from agentic_core import ChatAgent, ChatMessage, ChatOptions
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import (
    DagWorkflow,
    OrchestrationConfigError,
    Orchestrator,
    ResultStatus,
)

from .test_orchestrator import Worker, step


def team(orch: Orchestrator, *names: str) -> dict[str, Worker]:
    workers = {name: Worker(name) for name in names}
    for worker in workers.values():
        orch.register_agent(worker)
    return workers


# A failed step, a step after it and a step after both it and a successful one.
STEPS = [
    step("a", "fail now"),
    step("b", "ok"),
    step("c", "use", "a:fail now"),
    step("d", "join", "a:fail now", "b:ok", left="{{a:fail now.done}}", right="{{b:ok.done}}"),
]


@pytest.mark.parametrize("explicit", [False, True])
async def test_skip_is_the_default_and_calls_no_agent_after_a_failure(explicit: bool) -> None:
    orch = Orchestrator(on_dependency_failure="skip") if explicit else Orchestrator()
    workers = team(orch, "a", "b", "c", "d")
    result = await orch.execute(DagWorkflow(steps=STEPS))
    assert result.status is ResultStatus.PARTIAL
    assert [s for s, r in result.results.items() if r.skipped] == ["c:use", "d:join"]
    assert result.results["d:join"].error == "skipped: dependency 'a:fail now' failed"
    assert workers["c"].tasks == workers["d"].tasks == []


async def test_run_calls_every_step_and_shows_each_dependency_outcome() -> None:
    orch = Orchestrator(on_dependency_failure="run")
    workers = team(orch, "a", "b", "c", "d")
    result = await orch.execute(DagWorkflow(steps=STEPS))
    assert result.status is ResultStatus.PARTIAL
    assert not any(r.skipped for r in result.results.values())
    assert result.succeeded == ["b:ok", "c:use", "d:join"]
    assert result.failed == ["a:fail now"]
    [used] = workers["c"].tasks
    assert used.inputs == {"a:fail now": {"status": "failure", "data": None, "error": "a cannot"}}
    [joined] = workers["d"].tasks
    assert joined.inputs == {
        "a:fail now": {"status": "failure", "data": None, "error": "a cannot"},
        "b:ok": {"status": "success", "data": {"done": "ok", "saw": {}}, "error": None},
    }
    # A reference into the failed dependency is None; into the successful one, its value.
    assert joined.spec == {"left": None, "right": "ok"}


async def test_run_keeps_a_missing_key_of_a_successful_dependency_an_error() -> None:
    orch = Orchestrator(on_dependency_failure="run")
    workers = team(orch, "a", "b")
    result = await orch.execute(
        DagWorkflow(steps=[step("a", "x"), step("b", "y", "a:x", v="{{a:x.missing}}")])
    )
    assert result.results["b:y"].status is ResultStatus.FAILURE
    assert "has no key 'missing'" in (result.results["b:y"].error or "")
    assert workers["b"].tasks == []


async def test_run_goes_on_down_a_chain_of_failures() -> None:
    orch = Orchestrator(on_dependency_failure="run")
    workers = team(orch, "a", "b", "c")
    result = await orch.execute(
        DagWorkflow(
            steps=[step("a", "fail 1"), step("b", "fail 2", "a:fail 1"), step("c", "z", "b:fail 2")]
        )
    )
    assert result.status is ResultStatus.PARTIAL
    assert [len(w.tasks) for w in workers.values()] == [1, 1, 1]
    assert workers["c"].tasks[0].inputs == {
        "b:fail 2": {"status": "failure", "data": None, "error": "b cannot"}
    }


async def test_a_chat_agent_reads_the_failure_in_its_prompt() -> None:
    prompts: list[str] = []

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        prompts.append(messages[-1].text)
        return "fixed it"

    orch = Orchestrator(on_dependency_failure="run")
    team(orch, "a")
    orch.register_agent(ChatAgent(FunctionChatClient(reply), name="fixer"))
    result = await orch.execute(
        DagWorkflow(steps=[step("a", "fail"), step("fixer", "fix", "a:fail")])
    )
    assert result.results["fixer:fix"].data == {"output": "fixed it"}
    [prompt] = prompts
    inputs = json.loads(prompt.split("## Inputs:\n", 1)[1])
    assert inputs == {"a:fail": {"status": "failure", "data": None, "error": "a cannot"}}


async def test_execute_and_build_workflow_override_the_orchestrator_policy() -> None:
    orch = Orchestrator(on_dependency_failure="run")
    workers = team(orch, "a", "b")
    steps = [step("a", "fail"), step("b", "y", "a:fail")]
    skipped = await orch.execute(DagWorkflow(steps=steps), on_dependency_failure="skip")
    assert skipped.results["b:y"].skipped
    assert workers["b"].tasks == []

    default = Orchestrator()  # "skip", told to run this graph's steps anyway
    team(default, "a", "b")
    graph = default.build_workflow(DagWorkflow(steps=steps), on_dependency_failure="run")
    run = await graph.run(None)
    assert not run.outputs[0].results["b:y"].skipped


def test_an_unknown_policy_is_refused_before_anything_runs() -> None:
    with pytest.raises(OrchestrationConfigError, match="on_dependency_failure must be 'skip' or"):
        Orchestrator(on_dependency_failure="ignore")  # type: ignore[arg-type]
    orch = Orchestrator()
    team(orch, "a")
    with pytest.raises(OrchestrationConfigError, match="got 'always'"):
        orch.build_workflow(
            DagWorkflow(steps=[step("a", "x")]),
            on_dependency_failure="always",  # type: ignore[arg-type]
        )
