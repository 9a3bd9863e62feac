"""code_loop: generate -> compile -> test with repairs, fast/strong routing, attempt bound."""

from __future__ import annotations

import pytest

from agentic_core import InMemoryCheckpointStore
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import CodeGenResult, CodeTask, code_loop

from ._codegen_support import SubprocessSandbox

pytestmark = pytest.mark.slow  # the checks start interpreters

TESTS = "from solution import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
SYNTAX = "```python\ndef add(a, b)\n    return a + b\n```"
WRONG = "```python\ndef add(a, b):\n    return a * b\n```"
RIGHT = "```python\ndef add(a, b):\n    return a + b\n```"


def user_prompts(client: ScriptedChatClient) -> list[str]:
    return [messages[-1].text for messages, _ in client.calls]


async def test_the_loop_repairs_a_syntax_error_then_a_failing_test() -> None:
    client = ScriptedChatClient([SYNTAX, WRONG, RIGHT])
    workflow = code_loop(client, SubprocessSandbox(), tests=TESTS, max_attempts=3)
    [outcome] = (await workflow.run("Write add(a, b).")).outputs
    assert isinstance(outcome, CodeGenResult)
    assert outcome.succeeded, outcome
    assert outcome.attempts == 3
    assert outcome.tests_passed == 1
    assert outcome.code.strip() == "def add(a, b):\n    return a + b"
    first, second, third = user_prompts(client)
    assert "assert add(2, 3) == 5" in first
    assert "SyntaxError" in second
    assert "assert 6 == 5" in third


async def test_running_out_of_attempts_ends_with_a_failure_naming_the_last_errors() -> None:
    client = ScriptedChatClient([SYNTAX, WRONG])
    workflow = code_loop(
        client, SubprocessSandbox(), prompt="Write add(a, b).", tests=TESTS, max_attempts=2
    )
    result = await workflow.run()
    [outcome] = result.outputs
    assert not outcome.succeeded
    assert outcome.attempts == 2
    assert outcome.stage == "test"
    assert "assert 6 == 5" in outcome.last_errors[0]
    assert "failed" in str(outcome)
    assert "assert 6 == 5" in str(outcome)


async def test_simple_errors_go_to_the_fast_model_and_complex_ones_to_the_strong_model() -> None:
    strong = ScriptedChatClient([SYNTAX, RIGHT], model="strong")
    fast = ScriptedChatClient([WRONG], model="fast")
    workflow = code_loop(strong, SubprocessSandbox(), tests=TESTS, fast_client=fast, max_attempts=3)
    [outcome] = (await workflow.run(CodeTask(prompt="Write add(a, b).", tests=TESTS))).outputs
    assert outcome.succeeded
    assert outcome.attempts == 3
    # The syntax error (simple) went to the fast model, the failing test (complex) back to
    # the strong one, which saw what the fast model wrote.
    assert len(fast.calls) == 1
    assert "SyntaxError" in user_prompts(fast)[0]
    assert len(strong.calls) == 2
    assert "return a * b" in user_prompts(strong)[1]


async def test_a_checkpointed_loop_resumes_to_the_same_result() -> None:
    store = InMemoryCheckpointStore()
    replies = [SYNTAX, WRONG, RIGHT]
    workflow = code_loop(ScriptedChatClient(replies), SubprocessSandbox(), tests=TESTS)
    full = await workflow.run("Write add(a, b).", checkpoint_store=store)
    history = await workflow.get_run_history(full.run_id, checkpoint_store=store)
    # From the checkpoint after the first compile: two more generations to go.
    again = code_loop(ScriptedChatClient(replies[1:]), SubprocessSandbox(), tests=TESTS)
    resumed = await again.run(checkpoint_id=history[1].id, checkpoint_store=store)
    assert resumed.outputs == full.outputs
