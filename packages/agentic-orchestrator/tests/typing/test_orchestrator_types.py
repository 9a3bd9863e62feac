# pyright: strict
"""Type-checked (pyright strict) uses of the agentic_orchestrator API: fails CI if the types
regress.

It also runs as a test module, without a model or a server: agents answer from
``ScriptedChatClient`` and code runs in ``ScriptedSandbox``.
"""

from __future__ import annotations

from typing import assert_type

from agentic_core import Agent, AgenticError, ChatAgent, ChatMessage, Workflow
from agentic_core.testing import ScriptedChatClient, ScriptedSandbox
from agentic_orchestrator import (
    AgentRef,
    AssembledCode,
    CodeGenResult,
    ConcurrentBuilder,
    DagResult,
    DagWorkflow,
    DelegatingAgent,
    ExecutionMode,
    GroupChatBuilder,
    Orchestrator,
    OrchestratorError,
    ResultPayload,
    ResultStatus,
    SequentialBuilder,
    StepResult,
    TaskAgent,
    TaskAgentConfig,
    TaskPayload,
    ValidationResult,
    WorkflowStep,
    any_termination,
    code_failed,
    code_loop,
    code_passed,
    keyword_termination,
    max_rounds_termination,
    no_repeat_selector,
    repair_is_simple,
    round_robin_selector,
)


def agent(name: str, *replies: str) -> ChatAgent:
    return ScriptedChatClient(list(replies)).as_agent(f"You are the {name}.", name=name)


async def test_a_sequential_chain_outputs_the_conversation() -> None:
    workflow = (
        SequentialBuilder().participants([agent("writer", "A"), agent("editor", "B")]).build()
    )

    result = await workflow.run("Write.")

    assert_type(workflow, Workflow)
    conversation: list[ChatMessage] = result.outputs[0]
    assert [m.text for m in conversation] == ["Write.", "A", "B"]


async def test_a_group_chat_takes_a_selector_and_terminations() -> None:
    workflow = (
        GroupChatBuilder()
        .participants([agent("writer", "draft", "final"), agent("critic", "APPROVED")])
        .with_orchestrator_func(no_repeat_selector(round_robin_selector))
        .with_termination_condition(
            any_termination([keyword_termination("APPROVED"), max_rounds_termination(4)])
        )
        .build()
    )

    result = await workflow.run("Write a line.")

    conversation: list[ChatMessage] = result.outputs[0]
    assert conversation[-1].text == "APPROVED"


def test_concurrent_builds_a_core_workflow() -> None:
    workflow = ConcurrentBuilder().participants([agent("a", "1"), agent("b", "2")]).build()

    assert_type(workflow, Workflow)


async def test_the_dag_orchestrator_runs_steps_of_registered_agents() -> None:
    orchestrator = Orchestrator(max_parallel=2)
    ref = orchestrator.register_agent(agent("coder", "code"))
    orchestrator.register_agent(agent("reviewer", "looks good"))
    dag = DagWorkflow(
        name="review",
        steps=[
            WorkflowStep(agent="coder", action="generate"),
            WorkflowStep(
                agent="reviewer",
                action="review",
                inputs={"code": "{{coder:generate.output}}"},
                depends_on=["coder:generate"],
            ),
        ],
    )

    result = await orchestrator.execute(dag)

    assert_type(ref, AgentRef)
    assert_type(result, DagResult)
    assert_type(result.results, dict[str, StepResult])
    assert_type(result.succeeded, list[str])
    assert result.status is ResultStatus.SUCCESS
    assert result.results["reviewer:review"].data == {"output": "looks good"}


async def test_a_task_agent_runs_its_code_in_the_sandbox() -> None:
    sandbox = ScriptedSandbox(["42\n"])
    coder = TaskAgent(
        TaskAgentConfig(name="coder", execution_mode=ExecutionMode.ALWAYS),
        ScriptedChatClient(["```python\nprint(6 * 7)\n```"]),
        sandbox,
    )
    as_agent: Agent = coder

    result = await coder.execute_task(TaskPayload(action="run"))

    assert_type(result, ResultPayload)
    assert_type(result.status, ResultStatus)
    assert isinstance(as_agent, Agent)
    assert result.data["output"] == "42\n"
    assert [call.code for call in sandbox.calls] == ["print(6 * 7)\n"]


async def test_a_delegating_agent_is_a_core_agent() -> None:
    lead = DelegatingAgent(ScriptedChatClient(["Done."]), [agent("helper", "help")], name="lead")
    as_agent: Agent = lead

    response = await as_agent.run("Do it.")

    assert response.text == "Done."


def test_the_code_loop_and_its_edge_predicates_are_typed() -> None:
    loop = code_loop(ScriptedChatClient([]), ScriptedSandbox([]), tests="", max_attempts=2)
    source = AssembledCode(language="python", code="x = 1", tests="", parts=["code"])
    failed = ValidationResult(stage="test", passed=False, source=source, severity="simple")
    result = CodeGenResult(
        succeeded=True, language="python", code="x = 1", tests="", attempts=1, stage="test"
    )

    assert_type(loop, Workflow)
    assert_type(code_passed(source), bool)
    assert (code_failed(failed), repair_is_simple(failed), code_passed(result)) == (
        True,
        True,
        True,
    )
    assert_type(result.summary(), str)


def test_orchestrator_errors_share_the_workspace_root() -> None:
    assert issubclass(OrchestratorError, AgenticError)
