"""When a run's checkpoints are written: ``durability="sync" | "async" | "exit"`` (LangGraph's).

A call of ``Workflow.run``/``run_stream`` with a checkpoint store gets one ``CheckpointWrites``
(``checkpoint_writes`` picks it by mode). Each superstep loop awaits ``after_superstep(run)`` at
every barrier; the call then awaits ``at_end(run)`` once the run completed or waits on requests,
or ``on_failure(run, exc)`` once it failed or stopped (cancelled, a stream closed early), before
the error reaches the caller. What each mode guarantees, a crash (a killed process) included:

- ``sync`` (the default): a barrier's checkpoint is written before the next superstep starts.
  A crash loses at most the superstep that was running.
- ``async``: a barrier's checkpoint is built at once and written while the next superstep runs
  (a task, started when that superstep first gives the event loop a turn; a superstep that never
  does has it written at the next barrier, without a task); one write at a time, in order (the
  next barrier first waits for it), and the call waits for the last one before it returns (the
  run ended or pauses) or raises. A crash loses at most the superstep that was running and the
  one before it.
- ``exit``: written only when the call ends: the run completed, pauses on requests, or failed
  or stopped (then the state of the last barrier, as ``sync`` would have left it, so a resume
  runs the failed superstep again). A crash loses everything since the call began: a resume
  starts from the start, the last pause, or the checkpoint the call resumed from.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Literal

from agentic_core._errors import CheckpointError
from agentic_core.graph._run_state import RunState, checkpoint_of
from agentic_core.protocols._checkpoint import Checkpoint, CheckpointStore

Durability = Literal["sync", "async", "exit"]
"""When checkpoints are written (``Workflow.run``'s ``durability=``): see ``checkpoint_writes``."""

DURABILITY_MODES: tuple[Durability, ...] = ("sync", "async", "exit")


def check_durability(durability: object) -> None:
    """Refuse a ``durability=`` that is not a mode (None means the default, ``"sync"``)."""
    if durability is not None and durability not in DURABILITY_MODES:
        raise ValueError(
            f"durability must be 'sync', 'async' or 'exit' (or None: 'sync'), got {durability!r}"
        )


def checkpoint_writes(
    durability: Durability | None, store: CheckpointStore | None, run: RunState
) -> CheckpointWrites | None:
    """The checkpoint writes of one call on ``run``: None without a store (as in LangGraph, a
    mode without a checkpointer has no effect), else the mode's writes (``"sync"`` by default)."""
    if store is None:
        return None
    if durability is None or durability == "sync":
        return _SyncWrites(store)
    if durability == "async":
        return _AsyncWrites(store)
    return _ExitWrites(store, run)


async def save_checkpoint(run: RunState, store: CheckpointStore) -> None:
    """Write the run's state after its last barrier as one checkpoint, now (a fork's first)."""
    await _SyncWrites(store).after_superstep(run)


class CheckpointWrites:
    """The checkpoint writes of one call of ``run``/``run_stream``, by its durability mode."""

    __slots__ = ("store",)

    def __init__(self, store: CheckpointStore) -> None:
        self.store = store

    async def after_superstep(self, run: RunState) -> None:
        """A barrier passed: the run's state is the one to resume from next."""

    async def at_end(self, run: RunState) -> None:
        """The call ends: the run completed or waits on requests (pending writes done)."""

    async def on_failure(self, run: RunState, exc: BaseException) -> None:
        """The call fails with ``exc`` (or stops): leave the store as the mode promises.

        A write that fails here is added to ``exc`` as a note, never raised in its place.
        """


class _SyncWrites(CheckpointWrites):
    __slots__ = ()

    async def after_superstep(self, run: RunState) -> None:
        checkpoint = checkpoint_of(run)
        try:  # _write inlined: one coroutine less at every superstep
            run.last_checkpoint_id = await self.store.save(checkpoint)
        except CheckpointError:
            raise
        except Exception as exc:
            raise _save_failed(run, checkpoint, exc) from exc
        run.parent_checkpoint_id = None  # recorded once, on a fork's first checkpoint


class _AsyncWrites(CheckpointWrites):
    __slots__ = ("handle", "unstarted", "writing")

    def __init__(self, store: CheckpointStore) -> None:
        super().__init__(store)
        self.unstarted: tuple[RunState, Checkpoint] | None = None
        """The last barrier's write, until the next superstep gives the event loop a turn."""
        self.handle: asyncio.Handle | None = None
        """What starts it then."""
        self.writing: asyncio.Future[None] | None = None
        """The write started as a task, until it is known to have succeeded."""

    async def after_superstep(self, run: RunState) -> None:
        checkpoint = checkpoint_of(run)  # now: the next superstep changes the run
        run.parent_checkpoint_id = None
        await self._finish_writing()  # one write at a time, in order; a failed one stops the run
        # Started as a task once the next superstep gives the loop a turn (awaits I/O): one that
        # never does leaves nothing to overlap, and the write is done at the next barrier
        # without a task's cost (the same guarantee, a few microseconds less per superstep).
        self.unstarted = (run, checkpoint)
        self.handle = asyncio.get_running_loop().call_soon(self._start)

    def _start(self) -> None:
        if self.unstarted is not None:
            run, checkpoint = self.unstarted
            self.unstarted = None
            self.writing = asyncio.ensure_future(_write(run, self.store, checkpoint))

    async def at_end(self, run: RunState) -> None:
        await self._finish_writing()

    async def on_failure(self, run: RunState, exc: BaseException) -> None:
        try:
            await self._finish_writing()
        except Exception as error:  # noqa: BLE001 - the run's own failure is what is raised
            exc.add_note(f"and writing the checkpoint of its last barrier failed too: {error}")

    async def _finish_writing(self) -> None:
        """The write of the last barrier, done (written here if it never started)."""
        unstarted = self.unstarted
        if unstarted is not None:
            self.unstarted = None
            if self.handle is not None:
                self.handle.cancel()
            run, checkpoint = unstarted
            await _write(run, self.store, checkpoint)
            return
        writing = self.writing
        if writing is None:
            return
        if not writing.done():
            # Through a future of its own (a lighter asyncio.shield): a call cancelled meanwhile
            # leaves the write running, and on_failure waits for it again (LangGraph's
            # background writes are never cancelled either).
            waiter = asyncio.get_running_loop().create_future()
            writing.add_done_callback(functools.partial(_wake, waiter))
            await waiter
        self.writing = None
        writing.result()  # its CheckpointError, if it failed


class _ExitWrites(CheckpointWrites):
    __slots__ = ("inboxes", "written")

    def __init__(self, store: CheckpointStore, run: RunState) -> None:
        super().__init__(store)
        self.inboxes = run.inboxes
        """The messages of the last barrier: ``plan_superstep`` moves them out of the run."""
        self.written = run.superstep
        """The run's superstep when its state was last in the store (or the call began)."""

    async def after_superstep(self, run: RunState) -> None:
        self.inboxes = run.inboxes  # all exit mode pays per superstep

    async def at_end(self, run: RunState) -> None:
        if run.superstep == self.written:
            return  # no superstep ran: the store holds this state already (or nothing to keep)
        self.written = run.superstep
        await save_checkpoint(run, self.store)

    async def on_failure(self, run: RunState, exc: BaseException) -> None:
        failed = run.superstep
        if failed == self.written:
            return  # no barrier passed since the store last had the run's state
        if run.applying == failed:
            # The superstep's effects were partly applied (an edge condition raised, say): the
            # last barrier's state is gone from the run, so the store keeps what it had.
            return
        # Up to here the failing superstep only took its messages and recorded failed attempts:
        # put both back and the run is at its last barrier, as sync mode left the store.
        run.inboxes = self.inboxes
        if run.errors:
            run.errors = {
                executor_id: kept
                for executor_id, infos in run.errors.items()
                if (kept := tuple(info for info in infos if info.superstep < failed))
            }
        self.written = failed
        try:
            await save_checkpoint(run, self.store)
        except Exception as error:  # noqa: BLE001 - the run's own failure is what is raised
            exc.add_note(f"and writing its last checkpoint (durability='exit') failed: {error}")


def _wake(waiter: asyncio.Future[None], _: object) -> None:
    if not waiter.done():  # cancelled with the call that waited
        waiter.set_result(None)


async def _write(run: RunState, store: CheckpointStore, checkpoint: Checkpoint) -> None:
    """Save ``checkpoint`` of ``run``; any failure is a ``CheckpointError`` naming both."""
    try:
        run.last_checkpoint_id = await store.save(checkpoint)
    except CheckpointError:
        raise
    except Exception as exc:
        raise _save_failed(run, checkpoint, exc) from exc


def _save_failed(run: RunState, checkpoint: Checkpoint, exc: Exception) -> CheckpointError:
    return CheckpointError(
        f"saving the checkpoint of run {run.run_id} at superstep {checkpoint.superstep} "
        f"failed: {type(exc).__name__}: {exc}"
    )
