"""run_live: the live view (terminal or lines), quiet and JSON modes, and the run's result."""

from __future__ import annotations

import io
import json
from typing import Never

from pydantic import BaseModel
from rich.console import Console

from agentic_core import (
    ChatAgent,
    InMemoryCheckpointStore,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowRunState,
    executor,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import SequentialBuilder
from agentic_orchestrator._cli._live import run_live


def pair() -> Workflow:
    client = ScriptedChatClient(["a draft", "a better draft"], chunk_size=3)
    writer = ChatAgent(client, "Draft.", name="writer")
    editor = ChatAgent(client, "Edit.", name="editor")
    return SequentialBuilder(participants=[writer, editor], name="pair").build()


def console(*, terminal: bool = False) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=100), buffer


async def test_lines_mode_prints_graph_steps_streamed_text_and_the_output() -> None:
    out, buffer = console()
    result = await run_live(pair(), "tea", console=out, title="pair demo")
    text = buffer.getvalue()
    assert "pair demo" in text
    assert "└── writer  (start)" in text
    assert "superstep 0: writer" in text
    assert "  writer: a draft" in text
    assert "  editor: a better draft" in text
    assert "editor: a better draft" in text.split("output")[-1]
    assert "\x1b[" not in text
    assert result.status is WorkflowRunState.COMPLETED
    assert result.superstep_count == 3
    [conversation] = result.outputs
    assert [m.text for m in conversation] == ["tea", "a draft", "a better draft"]


async def test_the_result_matches_what_run_returns() -> None:
    out, _ = console()
    live = await run_live(pair(), "tea", console=out, title="t", show_graph=False)
    plain = await pair().run("tea")
    assert live.status == plain.status
    assert live.superstep_count == plain.superstep_count
    assert [[m.text for m in o] for o in live.outputs] == [
        [m.text for m in o] for o in plain.outputs
    ]


async def test_a_terminal_gets_a_live_view_and_the_output() -> None:
    out, buffer = console(terminal=True)
    result = await run_live(pair(), "tea", console=out, title="pair demo")
    assert result.status is WorkflowRunState.COMPLETED
    text = buffer.getvalue()
    assert "superstep 2" in text  # the live header's last state stays on screen
    assert "✓ editor" in text
    assert "a better draft" in text


async def test_quiet_prints_only_the_final_answer() -> None:
    out, buffer = console()
    await run_live(pair(), "tea", console=out, title="t", quiet=True)
    assert buffer.getvalue() == "a better draft\n"


async def test_json_events_are_one_object_per_line_and_nothing_else() -> None:
    out, buffer = console()
    await run_live(pair(), "tea", console=out, title="t", json_events=True)
    events = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert events[0]["event"] == "WorkflowStartedEvent"
    assert events[-1] == {
        "event": "WorkflowCompletedEvent",
        "superstep_count": 3,
        "duration_s": events[-1]["duration_s"],
        "status": "completed",
    }


async def test_a_failing_executor_ends_with_a_failed_result_not_an_exception() -> None:
    @executor(id="boom")
    async def boom(message: str, ctx: WorkflowContext[Never]) -> None:
        raise RuntimeError(f"no {message}")

    workflow = WorkflowBuilder("broken").set_start_executor(boom).build()
    out, buffer = console()
    result = await run_live(workflow, "tea", console=out, title="t")
    assert result.status is WorkflowRunState.FAILED
    assert "boom failed: RuntimeError: no tea" in buffer.getvalue()
    assert "failed in superstep 0" in buffer.getvalue()


async def test_the_last_checkpoint_of_the_run_is_reported() -> None:
    store = InMemoryCheckpointStore()
    out, _ = console()
    result = await run_live(
        pair(), "tea", console=out, title="t", quiet=True, checkpoint_store=store
    )
    latest = await store.latest(result.run_id)
    assert latest is not None
    assert result.last_checkpoint_id == latest.id


class Program(BaseModel):
    code: str
    attempts: int


async def test_a_model_output_is_shown_field_by_field_with_text_verbatim() -> None:
    @executor(id="coder")
    async def coder(message: str, ctx: WorkflowContext[Never, Program]) -> None:
        await ctx.yield_output(Program(code="def f():\n    return 1\n", attempts=2))

    workflow = WorkflowBuilder("coding").set_start_executor(coder).build()
    out, buffer = console()
    await run_live(workflow, "go", console=out, title="t", show_graph=False)
    text = buffer.getvalue()
    assert "def f():" in text
    assert "    return 1" in text
    assert "attempts  2" in text
    assert "\\n" not in text
