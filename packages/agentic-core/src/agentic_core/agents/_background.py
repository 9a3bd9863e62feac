"""Background agent runs: start now, poll or resume the stream later with a continuation token."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from agentic_core._errors import AgentError
from agentic_core.protocols._agent import AgentResponse, AgentResponseUpdate, ContinuationToken


@dataclass
class _BackgroundRun:
    task: asyncio.Task[None] | None = None
    updates: list[AgentResponseUpdate] = field(default_factory=list[AgentResponseUpdate])
    response: AgentResponse | None = None
    error: BaseException | None = None
    finished_at: float | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)


class BackgroundRuns:
    """The background runs of one agent, by task id; finished runs expire after ``ttl_s``."""

    def __init__(self, *, ttl_s: float = 3600.0) -> None:
        self._runs: dict[str, _BackgroundRun] = {}
        self._ttl_s = ttl_s

    def start(self, steps: AsyncIterator[AgentResponseUpdate | AgentResponse]) -> ContinuationToken:
        """Run ``steps`` in a task; the token points before its first update."""
        self._expire()
        task_id = uuid.uuid4().hex
        run = _BackgroundRun()
        self._runs[task_id] = run
        run.task = asyncio.get_running_loop().create_task(self._drive(run, steps))
        return ContinuationToken(task_id=task_id, sequence=0)

    async def _drive(
        self, run: _BackgroundRun, steps: AsyncIterator[AgentResponseUpdate | AgentResponse]
    ) -> None:
        try:
            async for step in steps:
                if isinstance(step, AgentResponse):
                    run.response = step
                else:
                    run.updates.append(step)
                run.changed.set()
        except Exception as exc:  # noqa: BLE001 - kept and re-raised to whoever polls
            run.error = exc
        finally:
            run.finished_at = time.monotonic()
            run.changed.set()

    def _get(self, token: ContinuationToken) -> _BackgroundRun:
        self._expire()
        run = self._runs.get(token.task_id)
        if run is None:
            raise AgentError(
                f"unknown or expired continuation token for task {token.task_id!r} "
                "(background runs live in the process that started them, and finished ones "
                f"are kept for {self._ttl_s:.0f} s)"
            )
        return run

    async def poll(self, token: ContinuationToken, agent_id: str) -> AgentResponse:
        """The final response, or a newer token while the run goes on."""
        run = self._get(token)
        if run.finished_at is None:
            newer = ContinuationToken(task_id=token.task_id, sequence=len(run.updates))
            return AgentResponse(agent_id=agent_id, continuation_token=newer)
        if run.error is not None:
            raise AgentError(f"background run {token.task_id!r} failed: {run.error}") from run.error
        if run.response is None:  # pragma: no cover - a finished run without error has one
            raise AgentError(f"background run {token.task_id!r} produced no response")
        return run.response

    async def follow(self, token: ContinuationToken) -> AsyncIterator[AgentResponseUpdate]:
        """The updates after ``token.sequence``, live until the run ends (last: ``done=True``)."""
        run = self._get(token)
        seen = token.sequence
        while True:
            run.changed.clear()
            while seen < len(run.updates):
                update = run.updates[seen]
                seen += 1
                yield update.model_copy(
                    update={
                        "continuation_token": ContinuationToken(
                            task_id=token.task_id, sequence=seen
                        )
                    }
                )
            if run.finished_at is not None:
                break
            await run.changed.wait()
        if run.error is not None:
            raise AgentError(f"background run {token.task_id!r} failed: {run.error}") from run.error
        yield AgentResponseUpdate(
            done=True,
            continuation_token=ContinuationToken(task_id=token.task_id, sequence=seen),
            response=run.response,
        )

    def _expire(self) -> None:
        now = time.monotonic()
        for task_id, run in list(self._runs.items()):
            if run.finished_at is not None and now - run.finished_at > self._ttl_s:
                del self._runs[task_id]
