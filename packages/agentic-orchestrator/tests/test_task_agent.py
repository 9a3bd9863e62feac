"""TaskAgent: execution modes, code extraction, failures as results, state and metrics."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import ValidationError

from agentic_core import (
    AgentExecutor,
    ChatMessage,
    ChatOptions,
    ExecutionResult,
    WorkflowBuilder,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient, ScriptedSandbox
from agentic_orchestrator import (
    AgentStatus,
    ExecutionMode,
    OrchestratorError,
    ResultStatus,
    TaskAgent,
    TaskAgentConfig,
    TaskPayload,
)
from agentic_orchestrator._code_blocks import extract_code, should_execute

CODE_REPLY = "Here you go:\n```python\nprint(6 * 7)\n```\n"


NAME_ERROR = ExecutionResult(
    exit_code=1, stdout="", stderr="NameError: name 'x' is not defined", duration_s=0.01
)
"""What the sandbox answers for a program that fails."""


def agent(
    mode: ExecutionMode, reply: str = CODE_REPLY, sandbox: Any = None, **config: Any
) -> TaskAgent:
    return TaskAgent(
        TaskAgentConfig(name="coder", execution_mode=mode, **config),
        ScriptedChatClient([reply] * 5),
        sandbox,
    )


@pytest.mark.parametrize(
    ("mode", "action", "reply", "runs"),
    [
        (ExecutionMode.ALWAYS, "review", CODE_REPLY, True),
        (ExecutionMode.NEVER, "run", CODE_REPLY, False),
        (ExecutionMode.AUTO, "anything", CODE_REPLY + "[EXECUTE]", True),
        (ExecutionMode.AUTO, "anything", CODE_REPLY + "[EXECUTE] [NO_EXECUTE]", False),
        (ExecutionMode.AUTO, "anything", CODE_REPLY + "<!-- EXECUTE -->", True),
        (ExecutionMode.AUTO, "run", CODE_REPLY, False),
        (ExecutionMode.TASK, "run the tests", CODE_REPLY, True),
        (ExecutionMode.TASK, "Validate input", CODE_REPLY, True),
        (ExecutionMode.TASK, "generate a parser", CODE_REPLY, False),
        (ExecutionMode.TASK, "translate", CODE_REPLY, False),
        (ExecutionMode.TASK, "rerun", CODE_REPLY, False),
    ],
)
async def test_each_execution_mode_decides_as_the_seeds_say(
    mode: ExecutionMode, action: str, reply: str, runs: bool
) -> None:
    sandbox = ScriptedSandbox(["42\n"])
    result = await agent(mode, reply, sandbox).execute_task(TaskPayload(action=action))
    assert result.status is ResultStatus.SUCCESS
    assert result.data["executed"] is runs
    ran = [(call.language, call.code) for call in sandbox.calls]
    assert ran == ([("python", "print(6 * 7)\n")] if runs else [])
    if runs:
        assert result.data["output"] == "42\n"
    else:
        assert result.data["output"] == reply
        assert result.data["code"] == "print(6 * 7)\n"


def test_code_extraction() -> None:
    assert extract_code("no code") is None
    assert extract_code("```json\n{}\n```\n```ts\nconsole.log(1)\n```") == (
        "typescript",
        "console.log(1)\n",
    )
    assert extract_code("```sh\necho hi\n```") == ("sh", "echo hi\n")
    assert extract_code("```\nprint(1)\n```") == ("python", "print(1)\n")
    assert extract_code("```\nls\n```", default_language="bash") == ("bash", "ls\n")
    assert extract_code("```javascript\n\n```") is None
    assert should_execute(ExecutionMode.TASK, "running", "") is True


async def test_a_failing_program_is_a_failure_with_its_stderr() -> None:
    result = await agent(ExecutionMode.ALWAYS, sandbox=ScriptedSandbox([NAME_ERROR])).execute_task(
        TaskPayload(action="run")
    )
    assert result.status is ResultStatus.FAILURE
    assert result.error == "NameError: name 'x' is not defined"
    assert result.data["exit_code"] == 1


async def test_running_without_a_sandbox_is_a_failure_naming_it() -> None:
    result = await agent(ExecutionMode.ALWAYS).execute_task(TaskPayload(action="run"))
    assert result.status is ResultStatus.FAILURE
    assert "has no sandbox" in (result.error or "")


async def test_a_model_that_fails_is_retried_then_a_failure_result() -> None:
    calls = 0

    def flaky(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise ConnectionError("provider down")
        return "All good, no code needed."

    coder = TaskAgent(TaskAgentConfig(name="c", max_retries=2), FunctionChatClient(flaky))
    result = await coder.execute_task(TaskPayload(action="explain"))
    assert result.status is ResultStatus.SUCCESS
    assert calls == 3

    def down(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        raise ConnectionError("provider down")

    broken = TaskAgent(TaskAgentConfig(name="b", max_retries=1), FunctionChatClient(down))
    failed = await broken.execute_task(TaskPayload(action="explain"))
    assert failed.status is ResultStatus.FAILURE
    assert failed.error == "task agent 'b': the model failed: ConnectionError: provider down"


async def test_the_whole_task_is_bounded_by_timeout_s() -> None:
    async def slow(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        await asyncio.Event().wait()
        return "never"

    coder = TaskAgent(TaskAgentConfig(name="slow", timeout_s=0.05), FunctionChatClient(slow))
    result = await coder.execute_task(TaskPayload(action="run"))
    assert result.status is ResultStatus.FAILURE
    assert result.error == "task agent 'slow': timed out after 0.05 s"
    assert coder.get_state().status is AgentStatus.ERROR


async def test_the_prompt_holds_the_task_and_the_mode_rule() -> None:
    client = ScriptedChatClient(["ok"])
    coder = TaskAgent(
        TaskAgentConfig(
            name="c", system_prompt="You write Python.", execution_mode=ExecutionMode.AUTO
        ),
        client,
    )
    await coder.execute_task(
        TaskPayload(
            action="generate", spec={"n": 3}, inputs={"xs": [1, 2]}, constraints=["no imports"]
        )
    )
    system, user = client.calls[0][0]
    assert system.text.startswith("You write Python.")
    assert "[EXECUTE] or [NO_EXECUTE]" in system.text
    assert user.text == (
        '## Action: generate\n\n## Specification:\n{\n  "n": 3\n}\n\n'
        '## Inputs:\n{\n  "xs": [\n    1,\n    2\n  ]\n}\n\n## Constraints:\n- no imports'
    )


async def test_state_and_metrics_count_tasks_time_and_tokens() -> None:
    sandbox = ScriptedSandbox(["42\n"])
    coder = agent(ExecutionMode.ALWAYS, sandbox=sandbox)
    await coder.start()
    await coder.execute_task(TaskPayload(action="run"))
    coder.sandbox = ScriptedSandbox([NAME_ERROR])
    await coder.execute_task(TaskPayload(action="run"))
    metrics, state = coder.get_metrics(), coder.get_state()
    assert (metrics.total_tasks, metrics.successful_tasks, metrics.failed_tasks) == (2, 1, 1)
    assert metrics.total_tokens_used > 0
    assert metrics.average_execution_time_s > 0
    assert metrics.uptime_s > 0
    assert (state.tasks_completed, state.tasks_failed) == (1, 1)
    assert state.status is AgentStatus.ERROR
    assert state.current_task_id is None


async def test_start_checks_the_model_and_the_sandbox_and_stop_stops_it() -> None:
    sandbox = ScriptedSandbox([], ready=False)
    with pytest.raises(OrchestratorError, match="sandbox is not ready"):
        await agent(ExecutionMode.TASK, sandbox=sandbox).start()
    await agent(ExecutionMode.NEVER, sandbox=sandbox).start()  # NEVER needs no sandbox

    class Down(ScriptedChatClient):
        async def health_check(self) -> bool:
            return False

    with pytest.raises(OrchestratorError, match="not available"):
        await TaskAgent(TaskAgentConfig(name="d"), Down([])).start()

    ready = ScriptedSandbox([])
    coder = agent(ExecutionMode.TASK, sandbox=ready)
    await coder.start()
    await coder.stop()
    assert ready.stopped
    assert coder.get_state().status is AgentStatus.STOPPED
    with pytest.raises(OrchestratorError, match="stopped"):
        await coder.execute_task(TaskPayload(action="run"))


def test_config_is_validated() -> None:
    with pytest.raises(ValidationError):
        TaskAgentConfig(name="")
    with pytest.raises(ValidationError):
        TaskAgentConfig(name="x", timeout_s=0)
    with pytest.raises(ValidationError):
        TaskAgentConfig(name="x", max_retries=-1)
    with pytest.raises(ValidationError):
        TaskAgentConfig(name="x", bogus=1)  # type: ignore[call-arg]


async def test_a_task_agent_is_a_core_agent_in_a_workflow() -> None:
    sandbox = ScriptedSandbox(["7\n"])
    coder = agent(ExecutionMode.TASK, sandbox=sandbox)
    workflow = (
        WorkflowBuilder()
        .set_start_executor(AgentExecutor(coder, id="coder", output_response=True))
        .build()
    )
    result = await workflow.run("run it")
    response = result.outputs[0]
    assert response.text == "7\n"
    assert response.value.status is ResultStatus.SUCCESS
    thread = coder.get_new_thread()
    answered = await coder.run("explain it", thread=thread)
    assert answered.text == CODE_REPLY
    assert [m.text for m in await thread.list_messages()] == ["explain it", CODE_REPLY]
    updates = [u async for u in coder.run_stream("explain")]
    assert updates[-1].done
    assert "coder" in repr(coder)


async def test_run_executes_a_task_payload_as_given() -> None:
    sandbox = ScriptedSandbox(["42\n", "42\n"])  # run, then run_stream
    coder = agent(ExecutionMode.TASK, sandbox=sandbox)
    thread = coder.get_new_thread()
    task = TaskPayload(action="run", spec="print 6 * 7", constraints=["no imports"])
    response = await coder.run(task, thread=thread)
    assert response.text == "42\n"
    assert response.value.status is ResultStatus.SUCCESS
    assert [(call.language, call.code) for call in sandbox.calls] == [("python", "print(6 * 7)\n")]
    asked = [m.text for m in await thread.list_messages()]
    assert asked == [task.to_prompt(), "42\n"]
    updates = [u async for u in coder.run_stream(task)]
    assert updates[-1].text == "42\n"


@pytest.mark.parametrize(
    ("given", "named"),
    [({"action": "run"}, "dict"), (["run it"], "holding str"), (42, "int")],
)
async def test_run_refuses_other_types_pointing_to_execute_task(given: Any, named: str) -> None:
    coder = agent(ExecutionMode.TASK, sandbox=ScriptedSandbox([]))
    with pytest.raises(TypeError) as raised:
        await coder.run(given)
    message = str(raised.value)
    assert named in message
    assert "execute_task" in message
    assert "TaskPayload" in message
    assert "ChatMessage" in message
    assert coder.get_metrics().total_tasks == 0
