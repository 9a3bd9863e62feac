"""build() rejects every invalid graph with a GraphValidationError naming executors and types."""

from __future__ import annotations

from typing import Any, Never

import pytest

from agentic_core import (
    Case,
    Default,
    Executor,
    GraphValidationError,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
)


@executor
async def ints(n: int, ctx: WorkflowContext[int]) -> None:
    await ctx.send_message(n)


@executor
async def texts(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text)


@executor
async def anything(value: Any, ctx: WorkflowContext[Any]) -> None:
    await ctx.send_message(value)


def test_no_start_executor() -> None:
    with pytest.raises(GraphValidationError, match="no start executor"):
        WorkflowBuilder().add_executor(ints).build()


def test_an_edge_naming_an_unknown_id() -> None:
    with pytest.raises(GraphValidationError, match="unknown executor id 'ghost'"):
        WorkflowBuilder().set_start_executor(ints).add_edge(ints, "ghost").build()


def test_an_unknown_start_id() -> None:
    with pytest.raises(GraphValidationError, match="unknown executor id 'ghost'"):
        WorkflowBuilder().set_start_executor("ghost").build()


def test_a_duplicated_id() -> None:
    @executor(id="ints")
    async def impostor(n: int, ctx: WorkflowContext[int]) -> None:
        del n, ctx

    with pytest.raises(GraphValidationError, match=r"duplicate executor id.*'ints'"):
        WorkflowBuilder().set_start_executor(ints).add_edge(ints, impostor).build()


def test_an_executor_unreachable_from_the_start() -> None:
    @executor
    async def island(n: int, ctx: WorkflowContext[int]) -> None:
        del n, ctx

    with pytest.raises(
        GraphValidationError, match="unreachable from the start executor 'ints': 'island'"
    ):
        WorkflowBuilder().set_start_executor(ints).add_executor(island).build()


def test_an_edge_whose_types_cannot_meet() -> None:
    with pytest.raises(
        GraphValidationError,
        match="edge ints -> texts: 'ints' sends int but no handler of 'texts' accepts it",
    ):
        WorkflowBuilder().set_start_executor(ints).add_edge(ints, texts).build()


def test_a_switch_branch_whose_types_cannot_meet() -> None:
    with pytest.raises(GraphValidationError, match="edge ints -> texts"):
        (
            WorkflowBuilder().set_start_executor(ints)
            .add_switch_edge(ints, [Case(lambda n: n > 0, anything), Default(texts)]).build()
        )  # fmt: skip


def test_any_and_unions_and_subclasses_are_compatible() -> None:
    class Base:
        pass

    class Child(Base):
        pass

    @executor
    async def make_child(n: int, ctx: WorkflowContext[Child]) -> None:
        del n, ctx

    @executor
    async def take_base(item: Base | str, ctx: WorkflowContext) -> None:
        del item, ctx

    (
        WorkflowBuilder().set_start_executor(ints).add_edge(ints, anything)
        .add_edge(anything, texts).add_edge(ints, make_child).add_edge(make_child, take_base)
        .build()
    )  # fmt: skip


def test_a_fan_in_target_without_a_list_handler() -> None:
    with pytest.raises(
        GraphValidationError, match="fan-in target 'texts' has no handler for a list"
    ):
        WorkflowBuilder().set_start_executor(ints).add_fan_in_edge([ints], texts).build()


def test_a_fan_in_whose_element_types_cannot_meet() -> None:
    @executor
    async def join_texts(parts: list[str], ctx: WorkflowContext) -> None:
        del parts, ctx

    with pytest.raises(
        GraphValidationError, match="fan-in edge ints -> join_texts: 'ints' sends int"
    ):
        WorkflowBuilder().set_start_executor(ints).add_fan_in_edge([ints], join_texts).build()


def test_a_target_without_handlers() -> None:
    class Empty(Executor):
        pass

    with pytest.raises(GraphValidationError, match="'empty' has no @handler"):
        WorkflowBuilder().set_start_executor(ints).add_edge(ints, Empty("empty")).build()


def test_switch_default_must_be_last_and_single() -> None:
    with pytest.raises(GraphValidationError, match="Default must come last"):
        WorkflowBuilder().add_switch_edge(ints, [Default(anything), Case(bool, anything)])
    with pytest.raises(GraphValidationError, match="more than one Default"):
        WorkflowBuilder().add_switch_edge(ints, [Default(anything), Default(anything)])


def test_fan_edges_need_members() -> None:
    with pytest.raises(GraphValidationError, match="fan-out edge from 'ints' has no targets"):
        WorkflowBuilder().add_fan_out_edge(ints, [])
    with pytest.raises(GraphValidationError, match="names a source twice"):
        WorkflowBuilder().add_fan_in_edge([ints, ints], anything)


def test_max_supersteps_must_be_positive() -> None:
    with pytest.raises(GraphValidationError, match="max_supersteps must be at least 1"):
        WorkflowBuilder().set_start_executor(ints).with_max_supersteps(0).build()


def test_unannotated_context_skips_the_type_check() -> None:
    class Loose(Executor):
        @handler
        async def run(self, n: int, ctx) -> None:  # type: ignore[no-untyped-def]
            await ctx.send_message("text")

    loose = Loose("loose")
    assert loose.output_types == ()
    WorkflowBuilder().set_start_executor(loose).add_edge(loose, texts).build()


def test_never_sends_nothing_so_any_target_is_fine() -> None:
    @executor
    async def quiet(n: int, ctx: WorkflowContext[Never, int]) -> None:
        del n, ctx

    assert quiet.output_types == ()
    WorkflowBuilder().set_start_executor(quiet).add_edge(quiet, texts).build()
