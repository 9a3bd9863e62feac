"""The Python code loop against a real ProcessSandbox: a syntax error, a failing test, a fix.

Skips with the reason where bwrap cannot make a sandbox; fails instead under
``AGENTIC_REQUIRE_SERVICES=1`` (CI).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentic_core import AgentRunUpdateEvent, WorkflowOutputEvent
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import CodeGenResult, code_loop
from agentic_sandbox import ProcessSandbox
from tests.fixtures.system_tools import require_ready_sandbox, require_tools

pytestmark = pytest.mark.slow

TESTS = (
    "from solution import add\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_twos():\n    assert add(2, 2) == 4\n"
)
REPLIES = [
    "```python\ndef add(a, b)\n    return a + b\n```",  # a syntax error
    "Fixed:\n```python\ndef add(a, b):\n    return a * b\n```",  # compiles, fails a test
    "```python\ndef add(a, b):\n    return a + b\n```",  # right
]


@pytest.fixture(params=["bwrap", "unshare"])
async def sandbox(request: pytest.FixtureRequest) -> AsyncIterator[ProcessSandbox]:
    """A real ProcessSandbox: in a bwrap jail, or (as root, without bwrap) as another uid.

    The two use different interpreters (bwrap mounts this Python, which has pytest; the
    other uid gets the system's python3, which may not): the validators handle both.
    """
    use_bwrap = request.param == "bwrap"
    if use_bwrap:
        require_tools("bwrap")
    # The default workdir (the system temporary directory) is reachable by the sandbox uid.
    async with ProcessSandbox(timeout_s=30, memory_mb=256, use_bwrap=use_bwrap) as box:
        await require_ready_sandbox(box)
        yield box


def prompts(client: ScriptedChatClient) -> list[str]:
    return [messages[-1].text for messages, _ in client.calls]


async def test_the_loop_repairs_through_the_real_compiler_and_tests(
    sandbox: ProcessSandbox,
) -> None:
    client = ScriptedChatClient(REPLIES)
    workflow = code_loop(client, sandbox, tests=TESTS, max_attempts=3)
    result = await workflow.run("Write add(a, b) returning the sum.")
    [outcome] = result.outputs
    assert isinstance(outcome, CodeGenResult)
    assert outcome.succeeded, outcome.summary()
    assert outcome.attempts == 3
    assert (outcome.tests_passed, outcome.tests_failed) == (2, 0)
    first, second, third = prompts(client)
    assert "SyntaxError" not in first
    assert "SyntaxError: expected ':'" in second
    assert "def add(a, b)\n    return a + b" in second  # the previous code
    assert "test_add: " in third
    assert "== 5" in third
    assert "return a * b" in third


async def test_the_loop_gives_up_after_max_attempts(sandbox: ProcessSandbox) -> None:
    client = ScriptedChatClient(REPLIES[:2])
    workflow = code_loop(client, sandbox, tests=TESTS, max_attempts=2)
    events = [e async for e in workflow.run_stream("Write add(a, b).")]
    outputs = [e.data for e in events if isinstance(e, WorkflowOutputEvent)]
    [outcome] = outputs
    assert not outcome.succeeded
    assert outcome.attempts == 2
    assert outcome.tests_failed == 1
    assert outcome.tests_passed == 1
    assert any("== 5" in error for error in outcome.last_errors)
    streamed = "".join(e.update.text for e in events if isinstance(e, AgentRunUpdateEvent))
    assert "return a * b" in streamed
