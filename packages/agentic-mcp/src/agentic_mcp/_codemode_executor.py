"""CodeModeExecutor: a workflow node that runs the code it receives through a ``CodeMode``."""

from __future__ import annotations

from pydantic import BaseModel, Field

from agentic_core import Executor, ExecutorKind, WorkflowContext, handler
from agentic_mcp._codemode import CodeMode
from agentic_mcp._models import CodeModeResult


class CodeModeRequest(BaseModel):
    """Code for a ``CodeModeExecutor`` (a plain ``str`` message is the code itself)."""

    code: str
    files: dict[str, str | bytes] = Field(default_factory=dict[str, str | bytes])
    """Extra files written next to the program (relative paths)."""


class CodeModeExecutor(Executor):
    """Runs each message's code with ``code_mode`` and sends the ``CodeModeResult`` on.

    ``kind`` is ``WORKER`` (default) or ``VALIDATOR`` (route on ``result.ok``);
    ``output_result=True`` also yields each result as a workflow output. A failing program is
    a result, not an error.

    Example::

        node = CodeModeExecutor(CodeMode(client, ProcessSandbox()), id="tools")
        workflow = WorkflowBuilder().set_start_executor(node).build()
        result = await workflow.run("import mcp\\nprint(mcp.time.get_current_time(timezone='UTC'))")
    """

    def __init__(
        self,
        code_mode: CodeMode,
        *,
        id: str = "code_mode",  # noqa: A002 - the API's name
        kind: ExecutorKind = ExecutorKind.WORKER,
        output_result: bool = False,
    ) -> None:
        if ExecutorKind(kind) not in (ExecutorKind.WORKER, ExecutorKind.VALIDATOR):
            raise ValueError(f"a CodeModeExecutor is a WORKER or a VALIDATOR, not {kind!r}")
        super().__init__(id, kind=kind)
        self.code_mode = code_mode
        self.output_result = output_result

    @handler
    async def run_code(
        self,
        request: CodeModeRequest | str,
        ctx: WorkflowContext[CodeModeResult, CodeModeResult],
    ) -> None:
        """Run ``request``; send (and maybe yield) the result."""
        if isinstance(request, str):
            request = CodeModeRequest(code=request)
        result = await self.code_mode.execute(request.code, files=request.files)
        await ctx.send_message(result)
        if self.output_result:
            await ctx.yield_output(result)
