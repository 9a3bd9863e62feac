"""Mermaid and DOT renderings name every executor and edge kind; executor ids are text in them,
never markup or syntax, and each executor is its own node."""

from __future__ import annotations

import re
from typing import Never

from hypothesis import given
from hypothesis import strategies as st

from agentic_core import (
    Case,
    Default,
    Executor,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    executor,
)
from agentic_core.graph._viz import mermaid_text, node_id


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
    assert 'n_start [label="start" style="bold"];' in text
    assert 'n_start -> n_a [label="case 1" style="dashed"];' in text
    assert "n_b -> fanin_1;" in text
    assert text.rstrip().endswith("}")


HOSTILE_IDS = (
    "<img src=x onerror=alert(1)>",
    '<a href="javascript:x">y</a>',
    'a"b',
    "a\nb",
    "a-b",
    "a_b",
    "end",
    "#lt;b#gt;",
    "style x:#35;",
    "a\\",
)


def _hostile_workflow() -> Workflow:
    """The first hostile id fans out to all the others (each a worker of str)."""

    def worker(executor_id: str) -> Executor:
        @executor(id=executor_id)
        async def relay(text: str, ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(text)

        return relay

    start, *rest = (worker(i) for i in HOSTILE_IDS)
    return WorkflowBuilder('a<b>"c').set_start_executor(start).add_fan_out_edge(start, rest).build()


def _mermaid_nodes(text: str) -> dict[str, str]:
    """Node id -> its label, Mermaid's ``#code;`` entities read back."""
    found = re.findall(r'^    (n_\w+)\(?\["([^"]*)"\]\)?$', text, flags=re.MULTILINE)
    return {node: _read_mermaid(label) for node, label in found}


def _read_mermaid(label: str) -> str:
    return re.sub(r"#(\d+);", lambda m: chr(int(m[1])), label)


def test_mermaid_shows_hostile_ids_as_text_in_distinct_nodes() -> None:
    workflow = _hostile_workflow()
    text = workflow.to_mermaid()
    assert "<" not in text
    assert ">" not in text.replace("-->", "").replace("-.->", "")
    nodes = _mermaid_nodes(text)
    assert sorted(nodes.values()) == sorted(HOSTILE_IDS)  # one node each, the id verbatim
    assert nodes == {workflow.mermaid_node_ids()[i]: i for i in HOSTILE_IDS}
    edges = re.findall(r"^    (n_\w+) -\.->\|fan-out\| (n_\w+)$", text, flags=re.MULTILINE)
    assert len(edges) == len(HOSTILE_IDS) - 1
    assert len(text.splitlines()) == 1 + 2 * len(HOSTILE_IDS) - 1  # a newline in an id is escaped


def test_dot_quotes_hostile_ids_in_distinct_nodes() -> None:
    text = _hostile_workflow().to_dot()
    assert text.startswith('digraph "a<b>\\"c" {')
    labels = re.findall(r'^    (n_\w+) \[label="((?:[^"\\]|\\.)*)"', text, flags=re.MULTILINE)
    assert len({node for node, _ in labels}) == len(HOSTILE_IDS)
    unescaped = {
        re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], lbl) for _, lbl in labels
    }
    assert unescaped == set(HOSTILE_IDS)
    assert len(text.splitlines()) == 3 + len(HOSTILE_IDS) + len(HOSTILE_IDS) - 1 + 1


@given(st.text(), st.text())
def test_node_ids_are_one_to_one_and_plain(a: str, b: str) -> None:
    assert re.fullmatch(r"n_[A-Za-z0-9_]*", node_id(a))
    assert (node_id(a) == node_id(b)) == (a == b)


@given(st.text())
def test_mermaid_labels_hold_no_syntax_and_read_back_verbatim(text: str) -> None:
    label = mermaid_text(text)
    assert not set(label) & set('<>&"\n\r:`[]()|{}')
    assert _read_mermaid(label) == text
