"""LLMGeneratorExecutor: prompts, code extraction, repairs, giving up, context, checkpoints."""

from __future__ import annotations

from typing import Never

import pytest

from agentic_core import (
    AgentRunUpdateEvent,
    ChatMessage,
    ChatOptions,
    Executor,
    InMemoryCheckpointStore,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRunState,
    handler,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import (
    AssembledCode,
    CodeGenerationError,
    CodeGenResult,
    CodeTask,
    GeneratedCode,
    LLMGeneratorExecutor,
    ValidationResult,
)
from agentic_orchestrator._codegen._prompt import build_prompt, extract_generated_code


def fenced(code: str, label: str = "python") -> str:
    return f"Here is the code:\n```{label}\n{code}\n```\nDone."


class Sink(Executor):
    """Yields every GeneratedCode it gets as a workflow output."""

    @handler
    async def keep(self, code: GeneratedCode, ctx: WorkflowContext[Never, GeneratedCode]) -> None:
        await ctx.yield_output(code)


class AlwaysFails(Executor):
    """A validator that rejects every attempt with an error naming the attempt."""

    def __init__(self) -> None:
        super().__init__("judge")

    @handler
    async def judge(self, code: GeneratedCode, ctx: WorkflowContext[ValidationResult]) -> None:
        await ctx.send_message(
            ValidationResult(
                stage="compile",
                passed=False,
                source=AssembledCode.of(code),
                errors=[f"SyntaxError: bad token in attempt {code.task.attempt}"],
            )
        )


def repair_loop(generator: LLMGeneratorExecutor) -> Workflow:
    judge = AlwaysFails()
    return (
        WorkflowBuilder("repair")
        .set_start_executor(generator)
        .add_edge(generator, judge)
        .add_edge(judge, generator)
        .build()
    )


def prompts(client: ScriptedChatClient | FunctionChatClient) -> list[str]:
    return [messages[-1].text for messages, _ in client.calls]


# -- code extraction ---------------------------------------------------------------------------


def test_extraction_prefers_the_block_in_the_task_language() -> None:
    reply = "Install:\n```bash\npip install x\n```\nCode:\n```py\ndef f():\n    return 1\n```"
    assert extract_generated_code(reply, "python") == "def f():\n    return 1"


def test_extraction_takes_an_unlabelled_block_then_a_cut_off_fence_then_bare_text() -> None:
    assert extract_generated_code("```\nx = 1\n```", "python") == "x = 1"
    assert extract_generated_code("Sure!\n```python\nx = 2\ny = 3", "python") == "x = 2\ny = 3"
    assert extract_generated_code("  x = 4\n", "python") == "x = 4"


def test_extraction_reads_typescript_labels() -> None:
    reply = "```ts\nexport const a: number = 1;\n```"
    assert extract_generated_code(reply, "typescript") == "export const a: number = 1;"


# -- prompts -----------------------------------------------------------------------------------


def test_prompt_holds_language_task_tests_previous_code_and_errors() -> None:
    task = CodeTask(
        prompt="Write add(a, b).",
        tests="from solution import add\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        attempt=2,
        previous_code="def add(a, b) return a+b",
        previous_errors=["solution.py, line 1: SyntaxError: expected ':'"],
    )
    prompt = build_prompt(task, {})
    assert "Language: python." in prompt
    assert "Write add(a, b)." in prompt
    assert "assert add(1, 2) == 3" in prompt
    assert "def add(a, b) return a+b" in prompt
    assert "SyntaxError: expected ':'" in prompt
    assert "attempt 2" in prompt


def test_a_test_part_is_not_shown_the_tests_it_must_pass_but_how_to_write_them() -> None:
    task = CodeTask(prompt="Test add.", role="test", tests="def test_x(): assert False")
    prompt = build_prompt(task, {})
    assert "assert False" not in prompt
    assert "from solution import" in prompt
    ts_task = CodeTask(prompt="Test it.", role="test", language="typescript")
    assert '"./solution.ts"' in build_prompt(ts_task, {})


# -- generation and repair -------------------------------------------------------------------


async def test_generates_sends_the_extracted_code() -> None:
    client = ScriptedChatClient([fenced("def add(a, b):\n    return a + b")])
    generator = LLMGeneratorExecutor(client)
    workflow = (
        WorkflowBuilder().set_start_executor(generator).add_edge(generator, Sink("s")).build()
    )
    result = await workflow.run("Write add(a, b).")
    [generated] = result.outputs
    assert generated.code == "def add(a, b):\n    return a + b"
    assert generated.task.prompt == "Write add(a, b)."
    assert generated.model == "scripted"


async def test_a_repair_prompt_holds_the_previous_errors_and_code() -> None:
    client = ScriptedChatClient([fenced("v1 = ("), fenced("v2 = ("), fenced("v3 = (")])
    workflow = repair_loop(LLMGeneratorExecutor(client, max_attempts=3))
    await workflow.run(CodeTask(prompt="Write v."))
    first, second, third = prompts(client)
    assert "SyntaxError" not in first
    assert "SyntaxError: bad token in attempt 1" in second
    assert "v1 = (" in second
    assert "SyntaxError: bad token in attempt 2" in third
    assert "v2 = (" in third


async def test_past_max_attempts_it_yields_a_failure_naming_the_last_errors() -> None:
    client = ScriptedChatClient([fenced("a = ("), fenced("b = (")])
    result = await repair_loop(LLMGeneratorExecutor(client, max_attempts=2)).run("Write b.")
    [outcome] = result.outputs
    assert isinstance(outcome, CodeGenResult)
    assert not outcome.succeeded
    assert outcome.attempts == 2
    assert outcome.stage == "compile"
    assert outcome.last_errors == ["SyntaxError: bad token in attempt 2"]
    assert outcome.code == "b = ("
    assert "SyntaxError: bad token in attempt 2" in str(outcome)
    assert len(client.calls) == 2


async def test_streamed_runs_surface_the_model_tokens() -> None:
    client = ScriptedChatClient([fenced("x = 1")])
    generator = LLMGeneratorExecutor(client)
    workflow = (
        WorkflowBuilder().set_start_executor(generator).add_edge(generator, Sink("s")).build()
    )
    events = [event async for event in workflow.run_stream("Write x.")]
    updates = [e for e in events if isinstance(e, AgentRunUpdateEvent)]
    assert len(updates) > 1
    assert all(e.executor_id == "generator" for e in updates)
    assert "".join(e.update.text for e in updates) == fenced("x = 1")


async def test_waits_for_the_parts_it_requires_then_sees_them_in_its_prompt() -> None:
    types_client = ScriptedChatClient([fenced("Point = tuple[int, int]")])
    impl_client = ScriptedChatClient([fenced("def origin() -> Point:\n    return (0, 0)")])
    types = LLMGeneratorExecutor(types_client, id="types", part="types")
    impl = LLMGeneratorExecutor(
        impl_client,
        id="impl",
        part="impl",
        task=CodeTask(prompt="Write origin() returning a Point."),
        requires=["types"],
    )
    workflow = (
        WorkflowBuilder()
        .set_start_executor(types)
        .add_edge(types, impl)
        .add_edge(impl, Sink("s"))
        .build()
    )
    result = await workflow.run("Define Point.")
    [generated] = result.outputs
    assert generated.task.name == "impl"
    assert "Point = tuple[int, int]" in prompts(impl_client)[0]


async def test_a_repair_without_a_task_is_a_clear_error() -> None:
    generator = LLMGeneratorExecutor(ScriptedChatClient([]))
    workflow = WorkflowBuilder().set_start_executor(generator).build()
    failure = ValidationResult(
        stage="test", passed=False, source=AssembledCode(language="python", code="")
    )
    with pytest.raises(Exception, match="never generated") as caught:
        await workflow.run(failure)
    assert isinstance(caught.value.__cause__, CodeGenerationError)


def test_bad_max_attempts_is_refused() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        LLMGeneratorExecutor(ScriptedChatClient([]), max_attempts=0)


# -- state ---------------------------------------------------------------------------------------


def test_snapshot_and_restore_keep_task_context_and_code() -> None:
    generator = LLMGeneratorExecutor(ScriptedChatClient([]))
    state = {
        "current": CodeTask(prompt="p", attempt=2, previous_errors=["e"]).model_dump(mode="json"),
        "waiting": None,
        "context": {"types": "T = int"},
        "code": "x = 1",
    }
    generator.restore_state(state)
    assert generator.snapshot_state() == state
    generator.restore_state(None)
    assert generator.snapshot_state()["current"] is None


async def test_a_run_resumed_from_a_checkpoint_repairs_as_the_uninterrupted_one() -> None:
    def model(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        del options
        return fenced(f"attempt_{messages[-1].text.count('SyntaxError')} = (")

    store = InMemoryCheckpointStore()
    client = FunctionChatClient(model)
    judge = AlwaysFails()
    generator = LLMGeneratorExecutor(client, max_attempts=3)
    workflow = (
        WorkflowBuilder("repair")
        .set_start_executor(generator)
        .add_edge(generator, judge)
        .add_edge(judge, generator)
        .with_checkpointing(store)
        .build()
    )
    full = await workflow.run("Write it.")
    history = await workflow.get_run_history(full.run_id, checkpoint_store=store)
    # After the first judgement: the repair that follows needs the generator's saved task.
    resumed = await workflow.run(checkpoint_id=history[1].id, checkpoint_store=store)
    assert resumed.status is WorkflowRunState.COMPLETED
    assert resumed.outputs == full.outputs
    assert resumed.outputs[0].attempts == 3
    assert "attempt 2" in client.calls[-1][0][-1].text
