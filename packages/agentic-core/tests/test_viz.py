"""Mermaid and DOT renderings name every executor and edge kind."""

from __future__ import annotations

from typing import Never

from agentic_core import Case, Default, WorkflowBuilder, WorkflowContext, executor


@executor
async def start(n: int, ctx: WorkflowContext[int]) -> None:
    await ctx.send_message(n)


@executor
async def a(n: int, ctx: WorkflowContext[int]) -> None:
    await ctx.send_message(n)


@executor
async def b(n: int, ctx: WorkflowContext[int]) -> None:
    await ctx.send_message(n)


@executor
async def join(ns: list[int], ctx: WorkflowContext[Never, int]) -> None:
    await ctx.yield_output(sum(ns))


def _workflow():
    return (
        WorkflowBuilder("viz").set_start_executor(start)
        .add_switch_edge(start, [Case(lambda n: n > 0, a), Default(b)])
        .add_fan_in_edge([a, b], join).build()
    )  # fmt: skip


def test_mermaid_shows_nodes_cases_and_fan_in() -> None:
    text = _workflow().to_mermaid()
    assert text.startswith("flowchart TD\n")
    assert 'n_start(["start"])' in text
    assert "n_start -.->|case 1| n_a" in text
    assert "n_start -.->|default| n_b" in text
    assert "n_a --> fanin_1" in text
    assert "fanin_1 --> n_join" in text


def test_dot_is_a_digraph_with_every_edge() -> None:
    text = _workflow().to_dot()
    assert text.startswith('digraph "viz" {')
    assert '"start" -> "a" [label="case 1" style="dashed"];' in text
    assert '"b" -> "fanin_1";' in text
    assert text.rstrip().endswith("}")
