"""TaskDecomposer: a validated plan, retries with the problems, CodePlanError at the end."""

from __future__ import annotations

import json
from typing import Never

import pytest

from agentic_core import (
    ChatMessage,
    ChatResponse,
    Executor,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowExecutionError,
    handler,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import CodePlan, CodePlanError, CodeTask, Subtask, TaskDecomposer
from agentic_orchestrator._codegen._decomposer import ordered_subtasks, plan_problems

GOOD = json.dumps(
    {
        "subtasks": [
            {"name": "impl", "prompt": "Implement the machine.", "depends_on": ["types"]},
            {"name": "types", "prompt": "Define State and Event."},
        ]
    }
)
CYCLIC = json.dumps(
    {
        "subtasks": [
            {"name": "a", "prompt": "A", "depends_on": ["b"]},
            {"name": "b", "prompt": "B", "depends_on": ["a"]},
        ]
    }
)


class Sink(Executor):
    @handler
    async def keep(self, task: CodeTask, ctx: WorkflowContext[Never, CodeTask]) -> None:
        await ctx.yield_output(task)


def test_plan_problems_name_what_is_wrong() -> None:
    plan = CodePlan(
        subtasks=[
            Subtask(name="a", prompt="A", depends_on=["zzz"]),
            Subtask(name="a", prompt="again"),
        ]
    )
    problems = plan_problems(plan, max_subtasks=1)
    assert any("at most 1" in p for p in problems)
    assert any("unique: a" in p for p in problems)
    assert any("unknown subtask(s): zzz" in p for p in problems)
    assert plan_problems(CodePlan.model_validate_json(CYCLIC), max_subtasks=6) == [
        "the dependencies form a cycle: a -> b -> a"
    ]


def test_subtasks_come_dependencies_first() -> None:
    plan = CodePlan.model_validate_json(GOOD)
    assert [s.name for s in ordered_subtasks(plan)] == ["types", "impl"]


async def test_an_invalid_plan_is_retried_with_its_problems_then_tasks_are_sent() -> None:
    client = ScriptedChatClient(["Sure! Here is my plan: none.", f"```json\n{CYCLIC}\n```", GOOD])
    decomposer = TaskDecomposer(client, language="typescript", retries=2)
    workflow = (
        WorkflowBuilder().set_start_executor(decomposer).add_edge(decomposer, Sink("s")).build()
    )
    result = await workflow.run("Create a TypeScript state machine")
    assert [(t.name, t.prompt) for t in result.outputs] == [
        ("types", "Define State and Event."),
        ("impl", "Implement the machine."),
    ]
    assert all(t.language == "typescript" for t in result.outputs)
    assert "builds on: types" in result.outputs[1].context
    assert len(client.calls) == 3
    second_request, options = client.calls[1]
    assert options is not None
    assert options.response_format is CodePlan
    assert "no JSON object" in second_request[-1].text
    assert "cycle: a -> b -> a" in client.calls[2][0][-1].text


async def test_a_parsed_response_value_is_used_as_is() -> None:
    plan = CodePlan(subtasks=[Subtask(name="only", prompt="Do it.")])
    reply = ChatResponse(message=ChatMessage.assistant("(parsed)"), value=plan)
    decomposer = TaskDecomposer(ScriptedChatClient([reply]))
    assert await decomposer.plan("x") == plan


async def test_no_valid_plan_after_the_retries_raises_code_plan_error() -> None:
    client = ScriptedChatClient(["nope", CYCLIC])
    decomposer = TaskDecomposer(client, retries=1)
    with pytest.raises(CodePlanError, match="after 2 attempt"):
        await decomposer.plan("x")
    workflow = (
        WorkflowBuilder()
        .set_start_executor(TaskDecomposer(ScriptedChatClient(["no"]), retries=0))
        .build()
    )
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("x")
    assert isinstance(caught.value.__cause__, CodePlanError)
