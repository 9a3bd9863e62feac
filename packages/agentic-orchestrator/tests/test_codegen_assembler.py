"""CodeAssemblerExecutor: waits for the expected parts, latest part wins, sections order."""

from __future__ import annotations

from typing import Never

from agentic_core import (
    Executor,
    InMemoryCheckpointStore,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_orchestrator import (
    CODEGEN_PARTS_KEY,
    AssembledCode,
    CodeAssemblerExecutor,
    CodeTask,
    GeneratedCode,
)
from agentic_orchestrator._codegen._assembler import assemble


def part(name: str, code: str, *, role: str = "code", tests: str = "") -> GeneratedCode:
    task = CodeTask(prompt=f"write {name}", name=name, role="test" if role == "test" else "code")
    return GeneratedCode(task=task.model_copy(update={"tests": tests}), code=code)


class Feeder(Executor):
    """Sends each part of the list it gets as its own message, one superstep each."""

    def __init__(self) -> None:
        super().__init__("feeder")
        self._left: list[GeneratedCode] = []

    def snapshot_state(self) -> object:
        return [p.model_dump(mode="json") for p in self._left]

    def restore_state(self, state: object) -> None:
        self._left = [GeneratedCode.model_validate(p) for p in state or []]  # type: ignore[union-attr]

    @handler
    async def start(
        self, parts: list[GeneratedCode], ctx: WorkflowContext[GeneratedCode | None]
    ) -> None:
        self._left = list(parts)
        await self.step(None, ctx)

    @handler
    async def step(self, tick: None, ctx: WorkflowContext[GeneratedCode | None]) -> None:
        if self._left:
            await ctx.send_message(self._left.pop(0))
            await ctx.send_message(None, target_id=self.id)


class Sink(Executor):
    @handler
    async def keep(self, code: AssembledCode, ctx: WorkflowContext[Never, AssembledCode]) -> None:
        parts = await ctx.get_shared_state(CODEGEN_PARTS_KEY)
        assert parts is not None
        await ctx.yield_output(code)


def pipeline(assembler: CodeAssemblerExecutor, store: InMemoryCheckpointStore | None = None):
    feeder = Feeder()
    builder = (
        WorkflowBuilder("assembly")
        .set_start_executor(feeder)
        .add_edge(feeder, feeder, condition=lambda m: m is None)
        .add_edge(feeder, assembler, condition=lambda m: m is not None)
        .add_edge(assembler, Sink("sink"))
    )
    if store is not None:
        builder.with_checkpointing(store)
    return builder.build()


async def test_waits_for_every_expected_part_then_sends_once() -> None:
    assembler = CodeAssemblerExecutor(expected=["types", "impl", "tests"])
    result = await pipeline(assembler).run(
        [
            part("types", "T = int"),
            part("impl", "x: T = 1"),
            part("tests", "def test(): ...", role="test"),
        ]
    )
    [assembled] = result.outputs
    assert assembled.code == "T = int\n\nx: T = 1\n"
    assert assembled.tests == "def test(): ...\n"
    assert assembled.parts == ["types", "impl", "tests"]


async def test_a_newer_part_replaces_the_old_one_and_sends_again() -> None:
    assembler = CodeAssemblerExecutor(expected=["types", "impl"])
    result = await pipeline(assembler).run(
        [part("types", "T = int"), part("impl", "broken ="), part("impl", "x: T = 1")]
    )
    first, second = result.outputs
    assert first.code == "T = int\n\nbroken =\n"
    assert second.code == "T = int\n\nx: T = 1\n"


async def test_sections_order_the_code_whatever_the_arrival() -> None:
    assembler = CodeAssemblerExecutor(expected=["impl", "types"], sections=["types", "impl"])
    result = await pipeline(assembler).run([part("impl", "x: T = 1"), part("types", "T = int")])
    assert result.outputs[0].code == "T = int\n\nx: T = 1\n"
    assert result.outputs[0].parts == ["types", "impl"]


async def test_parts_survive_a_resume_from_a_checkpoint() -> None:
    store = InMemoryCheckpointStore()
    workflow = pipeline(CodeAssemblerExecutor(expected=["a", "b", "c"]), store)
    full = await workflow.run([part("a", "a = 1"), part("b", "b = 2"), part("c", "c = 3")])
    history = await workflow.get_run_history(full.run_id, checkpoint_store=store)
    resumed = await workflow.run(checkpoint_id=history[2].id, checkpoint_store=store)
    assert [o.code for o in resumed.outputs] == [o.code for o in full.outputs]
    assert full.outputs[0].code == "a = 1\n\nb = 2\n\nc = 3\n"


def test_a_code_part_brings_its_tests_when_there_is_no_test_part() -> None:
    assembled = assemble([part("code", "x = 1", tests="def test_x(): ...")], language="py")
    assert assembled.language == "python"
    assert assembled.tests == "def test_x(): ...\n"
