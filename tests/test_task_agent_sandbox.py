"""TaskAgent with a real ProcessSandbox (bubblewrap): each execution mode runs code, or not.

Skips with the reason where bwrap cannot make a sandbox; fails instead under
``AGENTIC_REQUIRE_SERVICES=1`` (CI).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import (
    ExecutionMode,
    ResultStatus,
    TaskAgent,
    TaskAgentConfig,
    TaskPayload,
)
from agentic_sandbox import ProcessSandbox
from tests.fixtures.system_tools import require_ready_sandbox, require_tools

pytestmark = pytest.mark.slow

PROGRAM = "```python\nimport sys\nprint(sum(range(10)))\nprint('oops', file=sys.stderr)\n```"
BROKEN = "```python\nraise SystemExit(3)\n```"


@pytest.fixture
async def sandbox(tmp_path: Path) -> AsyncIterator[ProcessSandbox]:
    require_tools("bwrap")
    async with ProcessSandbox(workdir=tmp_path, timeout_s=20, memory_mb=256, use_bwrap=True) as box:
        await require_ready_sandbox(box)
        yield box


@pytest.mark.parametrize(
    ("mode", "action", "reply", "executed"),
    [
        (ExecutionMode.ALWAYS, "review", PROGRAM, True),
        (ExecutionMode.NEVER, "run", PROGRAM, False),
        (ExecutionMode.AUTO, "do it", PROGRAM + "\n[EXECUTE]", True),
        (ExecutionMode.AUTO, "do it", PROGRAM, False),
        (ExecutionMode.TASK, "run the sum", PROGRAM, True),
        (ExecutionMode.TASK, "explain the sum", PROGRAM, False),
    ],
)
async def test_each_mode_with_a_real_sandbox(
    sandbox: ProcessSandbox, mode: ExecutionMode, action: str, reply: str, executed: bool
) -> None:
    agent = TaskAgent(
        TaskAgentConfig(name="coder", execution_mode=mode), ScriptedChatClient([reply]), sandbox
    )
    await agent.start()
    result = await agent.execute_task(TaskPayload(action=action))
    assert result.status is ResultStatus.SUCCESS
    assert result.data["executed"] is executed
    if executed:
        assert result.data["output"] == "45\n"
        assert result.data["stderr"] == "oops\n"
    else:
        assert result.data["output"] == reply


async def test_a_failing_program_in_a_real_sandbox(sandbox: ProcessSandbox) -> None:
    agent = TaskAgent(
        TaskAgentConfig(name="coder", execution_mode=ExecutionMode.ALWAYS),
        ScriptedChatClient([BROKEN]),
        sandbox,
    )
    result = await agent.execute_task(TaskPayload(action="run"))
    assert result.status is ResultStatus.FAILURE
    assert result.data["exit_code"] == 3
    assert result.error == "exit code 3"
