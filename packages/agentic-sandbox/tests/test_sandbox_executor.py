"""SandboxExecutor: code as a workflow node, its result sent on."""

from __future__ import annotations

import pytest

from agentic_core import (
    ExecutionResult,
    Executor,
    ExecutorKind,
    SerializingRuntime,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_core.testing import SandboxCall, ScriptedSandbox
from agentic_sandbox import CodeExecutionRequest, ProcessSandbox, SandboxExecutor


class Verdict(Executor):
    """Turns an ExecutionResult into "pass" / "fail" (what a downstream node does with it)."""

    @handler
    async def judge(self, result: ExecutionResult, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output("pass" if result.ok else "fail")


async def test_a_str_message_is_python_code_and_the_result_is_sent_on() -> None:
    sandbox = ScriptedSandbox(["ran\n"])
    runner = SandboxExecutor(sandbox, id="run")
    verdict = Verdict("verdict")
    workflow = WorkflowBuilder().set_start_executor(runner).add_edge(runner, verdict).build()
    result = await workflow.run("print(1)")
    assert result.get_outputs() == ["pass"]
    assert sandbox.calls == [SandboxCall(code="print(1)", language="python", timeout_s=None)]


async def test_a_request_carries_language_files_and_timeout() -> None:
    sandbox = ScriptedSandbox(["ran\n"])
    runner = SandboxExecutor(sandbox, output_result=True)
    workflow = WorkflowBuilder().set_start_executor(runner).build()
    request = CodeExecutionRequest(
        code="cat data.txt", language="sh", files={"data.txt": "x"}, timeout_s=2
    )
    result = await workflow.run(request)
    assert [output.stdout for output in result.get_outputs()] == ["ran\n"]
    assert sandbox.calls == [
        SandboxCall(code="cat data.txt", language="sh", timeout_s=2, files={"data.txt": "x"})
    ]


@pytest.mark.parametrize("kind", [ExecutorKind.WORKER, ExecutorKind.VALIDATOR])
def test_the_kind_is_worker_or_validator(kind: ExecutorKind) -> None:
    assert SandboxExecutor(ScriptedSandbox([]), kind=kind).kind is kind


def test_an_orchestrator_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="WORKER or a VALIDATOR"):
        SandboxExecutor(ScriptedSandbox([]), kind=ExecutorKind.ORCHESTRATOR)


async def test_a_validator_runs_real_code_across_a_json_boundary(
    sandbox: ProcessSandbox,
) -> None:
    runner = SandboxExecutor(sandbox, id="check", kind=ExecutorKind.VALIDATOR)
    verdict = Verdict("verdict")
    workflow = WorkflowBuilder().set_start_executor(runner).add_edge(runner, verdict).build()
    passing = CodeExecutionRequest(
        code="open('out/r.bin', 'wb').write(bytes([0, 255]))\nassert 1 + 1 == 2",
        files={"blob.bin": b"\xff\x00"},
    )
    runtime = SerializingRuntime()
    assert (await workflow.run(passing, runtime=runtime)).get_outputs() == ["pass"]
    failing = await workflow.run("assert 1 + 1 == 3", runtime=runtime)
    assert failing.get_outputs() == ["fail"]
