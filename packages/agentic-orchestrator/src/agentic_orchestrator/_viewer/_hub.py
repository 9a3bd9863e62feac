"""RunHub: the runs this process follows live, each recorded into its RunRecord by a task.

A run is tracked from any ``WorkflowEvent`` iterator: ``Workflow.run_stream`` (a run the viewer
started or resumed, or one a program drives itself) or a replay of stored events that follows
the run as it goes (NATS ``AGENTIC_EVENTS``). Every task is kept and cancelled by ``close``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import structlog

from agentic_core import Workflow, WorkflowEvent, WorkflowStartedEvent
from agentic_orchestrator._run_summary import RunSource
from agentic_orchestrator._viewer._errors import ViewerError
from agentic_orchestrator._viewer._record import RunRecord

__all__ = ["RunHub"]

_log = structlog.get_logger("agentic_orchestrator.viewer")

RecordFactory = Callable[[str], RunRecord]


_CANCEL_AGAIN_S = 0.5
"""How long ``close`` waits for cancelled tasks before cancelling those still running again."""


class RunHub:
    """Records of the runs seen in this process, by run id."""

    def __init__(self) -> None:
        self._records: dict[str, RunRecord] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def get(self, run_id: str) -> RunRecord | None:
        """The record of ``run_id``, if this process follows or followed it."""
        return self._records.get(run_id)

    def records(self) -> list[RunRecord]:
        """Every record, in no particular order."""
        return list(self._records.values())

    def record(
        self, run_id: str, *, source: RunSource, workflow: Workflow | None = None, **names: str
    ) -> RunRecord:
        """The record of ``run_id``, made on first use (``names``: workflow_id, workflow_name)."""
        record = self._records.get(run_id)
        if record is None:
            record = RunRecord(run_id, source=source, workflow=workflow, **names)
            self._records[run_id] = record
        elif workflow is not None and record.workflow is None:
            record.workflow = workflow
        return record

    def track(
        self,
        stream: AsyncIterator[WorkflowEvent],
        *,
        workflow: Workflow | None,
        source: RunSource,
        run_id: str | None = None,
        resumable: bool = False,
        broken_source: str | None = None,
    ) -> asyncio.Future[str]:
        """Record ``stream`` in a task; the future gives the run id once the stream names it.

        A stream that fails before naming its run fails the future with that error; one that
        fails later marks the run failed, unless ``broken_source`` names where the events come
        from (a replay): then the source's failure is noted and the run's status kept.
        ``run_id`` names the run up front (a replay may start past its
        ``WorkflowStartedEvent``).
        """
        loop = asyncio.get_running_loop()
        started: asyncio.Future[str] = loop.create_future()
        # A run named up front is marked as being read now, not when the task first runs:
        # whoever waits for it to go idle must not see it idle before it began.
        record = None if run_id is None else self._open(run_id, workflow, source, resumable)
        task = loop.create_task(
            self._consume(stream, workflow, source, record, resumable, started, broken_source),
            name=f"agentic viewer run {run_id or '(new)'}",
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return started

    async def _consume(
        self,
        stream: AsyncIterator[WorkflowEvent],
        workflow: Workflow | None,
        source: RunSource,
        record: RunRecord | None,
        resumable: bool,
        started: asyncio.Future[str],
        broken_source: str | None,
    ) -> None:
        if record is not None:
            started.set_result(record.run_id)
        try:
            async for event in stream:
                if record is None:
                    if not isinstance(event, WorkflowStartedEvent):
                        raise ViewerError(
                            f"the stream began with {type(event).__name__}, not a "
                            "WorkflowStartedEvent: pass run_stream(...) as it is"
                        )
                    record = self._open(event.run_id, workflow, source, resumable)
                    started.set_result(event.run_id)
                record.apply(event)
        except asyncio.CancelledError:
            if not started.done():
                started.cancel()
            raise
        except Exception as exc:  # noqa: BLE001 - the run's failure is shown, never lost
            _log.warning(
                "viewer.stream_failed",
                run_id=record.run_id if record else None,
                error=f"{type(exc).__name__}: {exc}",
            )
            if not started.done():
                started.set_exception(exc)
            elif record is not None and broken_source is not None:
                record.error = f"{broken_source}: {type(exc).__name__}: {exc}"
            elif record is not None:
                record.fail(f"{type(exc).__name__}: {exc}")
        finally:
            if record is not None:
                record.driving = False
                record.changed()
            closer: Any = getattr(stream, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()

    def _open(
        self, run_id: str, workflow: Workflow | None, source: RunSource, resumable: bool
    ) -> RunRecord:
        record = self.record(run_id, source=source, workflow=workflow)
        record.driving = True
        record.resumable = record.resumable or resumable
        return record

    async def close(self) -> None:
        """Stop following every run (cancels the tasks and waits for them)."""
        tasks = set(self._tasks)
        for task in tasks:
            task.cancel()
        pending = tasks
        while pending:
            _, pending = await asyncio.wait(pending, timeout=_CANCEL_AGAIN_S)
            # On Python 3.11, asyncio.wait_for (nats-py's next_msg uses it) returns a message
            # that arrived as it was cancelled and drops the cancellation: cancel again.
            for task in pending:
                task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                task.result()
