"""SandboxExecutor: a workflow node that runs the code it receives and sends the result on."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentic_core import ExecutionResult, Executor, ExecutorKind, Sandbox, WorkflowContext, handler


class CodeExecutionRequest(BaseModel):
    """Code for a ``SandboxExecutor`` to run (a plain ``str`` message is Python code)."""

    code: str
    language: str = "python"
    files: dict[str, str | bytes] = Field(default_factory=dict[str, str | bytes])
    """Written into the work directory before the program starts (relative paths)."""
    timeout_s: float | None = None
    """``None``: the sandbox's own timeout."""


class SandboxExecutor(Executor):
    """Runs each message's code in ``sandbox`` and sends the ``ExecutionResult`` on.

    ``kind`` is ``ExecutorKind.WORKER`` (run generated code) or ``ExecutorKind.VALIDATOR``
    (check it: route on ``result.ok``); ``output_result=True`` also yields each result as a
    workflow output. A program that fails is a result, not an error: only a sandbox that cannot
    run code at all raises (and the executor's retry policy applies).

    Example::

        runner = SandboxExecutor(ProcessSandbox(), id="run", kind=ExecutorKind.VALIDATOR)
        workflow = WorkflowBuilder().set_start_executor(runner).build()
        result = await workflow.run(CodeExecutionRequest(code="print(1)"))
    """

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        id: str = "sandbox",  # noqa: A002 - the API's name
        kind: ExecutorKind = ExecutorKind.WORKER,
        output_result: bool = False,
    ) -> None:
        if ExecutorKind(kind) not in (ExecutorKind.WORKER, ExecutorKind.VALIDATOR):
            raise ValueError(f"a SandboxExecutor is a WORKER or a VALIDATOR, not {kind!r}")
        super().__init__(id, kind=kind)
        self.sandbox = sandbox
        self.output_result = output_result

    @handler
    async def run_code(
        self,
        request: CodeExecutionRequest | str,
        ctx: WorkflowContext[ExecutionResult, ExecutionResult],
    ) -> None:
        """Run ``request`` in the sandbox; send (and maybe yield) the result."""
        if isinstance(request, str):
            request = CodeExecutionRequest(code=request)
        result = await self.sandbox.execute(
            request.code,
            language=request.language,
            timeout_s=request.timeout_s,
            files=request.files,
        )
        await ctx.send_message(result)
        if self.output_result:
            await ctx.yield_output(result)
