"""Watch a workflow run: a live view on a terminal, event lines elsewhere, or JSON events.

:func:`run_live` drives ``Workflow.run_stream`` and returns the same ``WorkflowRunResult`` that
``Workflow.run`` would, so a command shows progress without running anything differently.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from time import monotonic
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from agentic_core import (
    AgentRunUpdateEvent,
    CheckpointStore,
    ExecutorCompletedEvent,
    ExecutorFailedEvent,
    ExecutorInvokedEvent,
    FanInIncompleteEvent,
    RequestInfoEvent,
    SuperstepCompletedEvent,
    SuperstepStartedEvent,
    Workflow,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    WorkflowRunResult,
    WorkflowRunState,
    WorkflowStartedEvent,
)
from agentic_orchestrator._cli._render import event_json, graph_tree, output_renderable, output_text

__all__ = ["run_live"]

_LIFECYCLE = (
    WorkflowStartedEvent,
    SuperstepStartedEvent,
    SuperstepCompletedEvent,
    ExecutorInvokedEvent,
    ExecutorCompletedEvent,
    AgentRunUpdateEvent,
    WorkflowOutputEvent,
    WorkflowCompletedEvent,
    WorkflowFailedEvent,
)
"""Events ``Workflow.run`` does not keep in its result (the rest are)."""
_SNIPPET = 72
"""Characters of an agent's streamed text shown beside it in the live table."""


class _Status(StrEnum):
    WAITING = "waiting"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


_STYLE = {
    _Status.WAITING: ("·", "dim"),
    _Status.RUNNING: ("▶", "bold yellow"),
    _Status.DONE: ("✓", "green"),
    _Status.FAILED: ("✗", "bold red"),
}


@dataclass
class _RunView:
    """Everything the view shows, updated event by event (no I/O here)."""

    title: str
    status: dict[str, _Status]
    began: float = field(default_factory=monotonic)
    superstep: int | None = None
    run_id: str = ""
    text: dict[str, str] = field(default_factory=dict[str, str])
    notes: dict[str, str] = field(default_factory=dict[str, str])
    outputs: list[Any] = field(default_factory=list[Any])
    kept: list[WorkflowEvent] = field(default_factory=list[WorkflowEvent])
    requests: dict[str, RequestInfoEvent] = field(default_factory=dict[str, RequestInfoEvent])
    completed: WorkflowCompletedEvent | None = None
    failed: WorkflowFailedEvent | None = None

    def apply(self, event: WorkflowEvent) -> list[Text]:
        """Take one event in; return the lines a non-terminal output prints for it."""
        if not isinstance(event, _LIFECYCLE):
            self.kept.append(event)
        match event:
            case WorkflowStartedEvent(run_id=run_id):
                self.run_id = run_id
                return [_line(f"run {run_id} started", "dim")]
            case SuperstepStartedEvent(superstep=superstep, executor_ids=ids):
                self.superstep = superstep
                for executor_id in ids:
                    self.status[executor_id] = _Status.RUNNING
                    self.text.pop(executor_id, None)
                    self.notes.pop(executor_id, None)
                return [_line(f"superstep {superstep}: {', '.join(ids)}", "bold")]
            case AgentRunUpdateEvent(executor_id=executor_id, update=update):
                piece = getattr(update, "text", None)
                if isinstance(piece, str):
                    self.text[executor_id] = self.text.get(executor_id, "") + piece
                return []
            case ExecutorCompletedEvent(executor_id=executor_id, duration_s=duration):
                self.status[executor_id] = _Status.DONE
                lines = [_line(f"  {executor_id} done in {duration:.2f} s", "green")]
                said = self.text.get(executor_id, "").strip()
                if said:
                    lines.append(Text(f"  {executor_id}: {said}"))
                return lines
            case ExecutorFailedEvent(executor_id=executor_id, error=error, will_retry=retry):
                self.status[executor_id] = _Status.RUNNING if retry else _Status.FAILED
                again = " (retrying)" if retry else ""
                return [_line(f"  {executor_id} failed{again}: {error}", "red")]
            case WorkflowOutputEvent(data=data):
                self.outputs.append(data)
                return []
            case RequestInfoEvent(request_id=request_id, source_executor_id=source, data=data):
                self.requests[request_id] = event
                return [_line(f"  {source} asks ({request_id}): {output_text(data)}", "yellow")]
            case FanInIncompleteEvent(target_id=target, missing_source_ids=missing):
                return [_line(f"  {target} never heard from {', '.join(missing)}", "yellow")]
            case WorkflowCompletedEvent(superstep_count=count, duration_s=duration, status=status):
                self.completed = event
                return [_line(f"{status} after {count} supersteps in {duration:.2f} s", "bold")]
            case WorkflowFailedEvent(error=error, superstep=superstep):
                self.failed = event
                return [_line(f"failed in superstep {superstep}: {error}", "bold red")]
            case _ if type(event).__str__ is not WorkflowEvent.__str__:
                # An event that says how it reads (a validator's verdict, say): shown as the
                # line of the executor that emitted it.
                said = str(event)
                source = getattr(event, "executor_id", None)
                if isinstance(source, str) and source:
                    self.notes[source] = said
                    return [_line(f"  {source}: {said}", "cyan")]
                return [_line(f"  {said}", "cyan")]
            case _:
                return []

    def render(self) -> RenderableType:
        """The live region: header, one row per executor, outputs so far."""
        elapsed = monotonic() - self.began
        step = "starting" if self.superstep is None else f"superstep {self.superstep}"
        header = Text(f"{self.title}  ·  {step}  ·  {elapsed:.1f} s", style="bold")
        table = Table(box=None, show_header=False, pad_edge=False, expand=False)
        table.add_column(no_wrap=True)
        table.add_column(no_wrap=True)
        table.add_column(overflow="ellipsis", no_wrap=True, max_width=_SNIPPET)
        # Rich's refresh thread calls this while the loop applies events: iterate over copies.
        for executor_id, status in list(self.status.items()):
            icon, style = _STYLE[status]
            said = " ".join((self.text.get(executor_id) or self.notes.get(executor_id, "")).split())
            if len(said) > _SNIPPET:
                said = "…" + said[-_SNIPPET + 1 :]
            table.add_row(Text(f"{icon} {executor_id}", style=style), Text(status, style), said)
        parts: list[RenderableType] = [header, table]
        parts.extend(Text(f"output: {output_text(o)}", style="green") for o in list(self.outputs))
        return Group(*parts)

    def result(self, last_checkpoint_id: str | None) -> WorkflowRunResult:
        """What ``Workflow.run`` would have returned for this run."""
        if self.failed is not None:
            status, count = WorkflowRunState.FAILED, self.failed.superstep
        elif self.completed is not None:
            status, count = self.completed.status, self.completed.superstep_count
        else:  # the stream ended early: cancelled
            status, count = WorkflowRunState.CANCELLED, self.superstep or 0
        waiting = status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
        return WorkflowRunResult(
            status=status,
            outputs=list(self.outputs),
            events=list(self.kept),
            superstep_count=count,
            duration_s=monotonic() - self.began,
            pending_requests=list(self.requests.values()) if waiting else [],
            run_id=self.run_id,
            last_checkpoint_id=last_checkpoint_id,
        )


def _line(text: str, style: str) -> Text:
    return Text(text, style=style)


async def run_live(
    workflow: Workflow,
    message: Any = None,
    *,
    console: Console,
    title: str,
    quiet: bool = False,
    json_events: bool = False,
    show_graph: bool = True,
    **run_kwargs: Any,
) -> WorkflowRunResult:
    """Run ``workflow`` (``run_stream`` with ``run_kwargs``) while showing it on ``console``.

    On a terminal: the graph as a tree (unless ``show_graph`` is false), then a live view of the
    current superstep, each executor's status and the text agents stream, with the elapsed time;
    the outputs at the end. Elsewhere (a pipe, CI) the same as plain lines, one per event.
    ``quiet`` shows only the final outputs' text; ``json_events`` writes one JSON object per
    event to the console's file and nothing else. Returns what ``Workflow.run`` would return; a
    failed run comes back with status ``FAILED`` (the ``WorkflowFailedEvent`` among the events)
    instead of raising.
    """
    on_run_id: Callable[[str], None] | None = run_kwargs.pop("on_run_id", None)
    view = _RunView(title=title, status=dict.fromkeys(workflow.executors, _Status.WAITING))
    stream = workflow.run_stream(message, **run_kwargs)
    if on_run_id is not None:
        stream = _noting_run_id(stream, on_run_id)
    if json_events:
        out = console.file
        async for event in stream:
            view.apply(event)
            out.write(event_json(event) + "\n")
            out.flush()
    elif quiet:
        async for event in stream:
            view.apply(event)
    else:
        if show_graph:
            console.print(Panel(graph_tree(workflow), title=title, expand=False))
        if console.is_terminal:
            # get_renderable: the view is redrawn 8 times a second, so the clock keeps moving
            # while a long agent call sends nothing.
            with Live(get_renderable=view.render, console=console, refresh_per_second=8) as live:
                async for event in stream:
                    view.apply(event)
                    live.refresh()
        else:
            async for event in stream:
                for line in view.apply(event):
                    console.print(line, soft_wrap=True)
    result = view.result(await _last_checkpoint(workflow, run_kwargs, view.run_id))
    if not json_events:
        _show_outputs(console, view, quiet=quiet, live=console.is_terminal)
    return result


async def _noting_run_id(
    stream: AsyncIterator[WorkflowEvent], on_run_id: Callable[[str], None]
) -> AsyncIterator[WorkflowEvent]:
    async for event in stream:
        if isinstance(event, WorkflowStartedEvent):
            on_run_id(event.run_id)
        yield event


def _show_outputs(console: Console, view: _RunView, *, quiet: bool, live: bool) -> None:
    failed = view.failed
    if quiet:
        for data in view.outputs:
            console.out(output_text(data), highlight=False)
        if failed is not None:  # the only other thing quiet shows, and on stderr
            errors = Console(stderr=True, soft_wrap=True, highlight=False)
            errors.print(f"failed in superstep {failed.superstep}: {failed.error}", markup=False)
        return
    for data in view.outputs:
        console.print(Panel(output_renderable(data), title="output", expand=False))
    if failed is not None and live:  # line mode printed it already
        console.print(
            f"failed in superstep {failed.superstep}: {failed.error}",
            style="bold red",
            markup=False,
            soft_wrap=True,
        )


async def _last_checkpoint(
    workflow: Workflow, run_kwargs: dict[str, Any], run_id: str
) -> str | None:
    store: CheckpointStore | None = run_kwargs.get("checkpoint_store") or workflow.checkpoint_store
    if store is None or not run_id:
        return None
    latest = await store.latest(run_id)
    return latest.id if latest is not None else None
