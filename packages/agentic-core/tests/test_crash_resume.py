"""SIGKILL a process running a checkpointed workflow, resume it in a fresh process, compare.

The child (``crash_resume_child.py``, run with ``sys.executable``) runs a 21-superstep workflow
with a ``FileCheckpointStore``: a fan-out/fan-in round trip per 3 supersteps, shared state, and
an executor whose per-run state lives in checkpoints (``snapshot_state``). Each superstep sleeps
~50 ms, and the child prints (and flushes) a JSON line per superstep and per output.

The test kills the child by PID at a quiet point (its last printed superstep is the last
checkpoint on disk, and the next checkpoint is ~50 ms away), starts a fresh process that resumes
from the run's latest checkpoint (possibly killed in turn), and checks against an uninterrupted
run in another process: what the killed processes printed plus what the last one yields is
exactly the uninterrupted outputs, none twice, and the resume points agree with
``Checkpoint.outputs_so_far``.

The durability modes are then killed at random points (a random superstep, then a random pause
of up to two supersteps), in a run that also pauses once on a request (the child answers it at
once), and each kill checks what the mode promises about the latest checkpoint on disk, before
the same exactly-once check of the outputs:

- ``sync``: a resume starts at most one superstep back (it runs again the superstep that was
  running when the process died, nothing earlier);
- ``async``: at most two supersteps back (the write of the last barrier may not have finished);
- ``exit``: from the start, or from the last pause (nothing else is ever written mid-run).
"""

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentic_core import FileCheckpointStore

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

CHILD = Path(__file__).with_name("crash_resume_child.py")
SUPERSTEPS = 21  # crash_resume_child.ROUNDS * 3
WAIT_S = 60.0
STEP_DELAY_S = 0.05  # crash_resume_child.STEP_DELAY_S: each superstep takes about this long
ASKING_SUPERSTEPS = 22  # with --ask: answering the request takes one superstep more
PAUSE_SUPERSTEP = 3  # with --ask, the run pauses after superstep ASK_ROUND * 3
STEPS_BACK = {"sync": 1, "async": 2}
"""How far before the superstep running at a crash the latest checkpoint may be, by mode."""


@dataclass
class Child:
    proc: subprocess.Popen[bytes]
    log: Path
    err: Path

    def events(self) -> list[dict[str, Any]]:
        """The JSON lines the child printed (other lines, e.g. log records, are skipped)."""
        found: list[dict[str, Any]] = []
        for line in self.log.read_text().splitlines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict) and "event" in value:
                found.append(value)
        return found

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events() if e["event"] == kind]

    def outputs(self) -> list[Any]:
        return [e["data"] for e in self.of("output")]

    def last_superstep(self) -> int:
        steps = self.of("superstep")
        return steps[-1]["superstep"] if steps else -1

    def started(self) -> bool:
        return bool(self.of("started"))

    def describe(self) -> str:
        return f"stdout:\n{self.log.read_text()}\nstderr:\n{self.err.read_text()}"

    def finish(self) -> None:
        """Wait for a normal exit (bounded) and check it succeeded."""
        try:
            self.proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"child {self.proc.pid} did not finish in {WAIT_S} s\n{self.describe()}")
        assert self.proc.returncode == 0, self.describe()


@pytest.fixture
def spawn(tmp_path: Path) -> Iterator[Callable[..., Child]]:
    """Start children; every child still running at the end is killed and reaped."""
    children: list[Child] = []

    def start(*args: str) -> Child:
        n = len(children)
        log, err = tmp_path / f"child{n}.out", tmp_path / f"child{n}.err"
        with log.open("wb") as out, err.open("wb") as errors:
            proc = subprocess.Popen(
                [sys.executable, str(CHILD), *args],
                stdout=out,
                stderr=errors,
                stdin=subprocess.DEVNULL,
                cwd=tmp_path,
            )
        child = Child(proc, log, err)
        children.append(child)
        return child

    yield start
    for child in children:
        if child.proc.poll() is None:
            child.proc.kill()
        child.proc.wait(timeout=WAIT_S)


def checkpoint_files(store_dir: Path) -> list[Path]:
    return sorted(store_dir.glob("*/*.json"))


def kill_at_quiet_point(child: Child, store_dir: Path, min_checkpoints: int) -> None:
    """SIGKILL ``child`` once ``min_checkpoints`` exist and it has printed its last one."""
    deadline = time.monotonic() + WAIT_S
    while True:
        if child.proc.poll() is not None:
            pytest.fail(
                f"child exited (code {child.proc.returncode}) before the kill\n{child.describe()}"
            )
        if time.monotonic() > deadline:
            pytest.fail(f"no {min_checkpoints} checkpoints after {WAIT_S} s\n{child.describe()}")
        count = len(checkpoint_files(store_dir))
        if count >= min_checkpoints and child.last_superstep() == count - 1:
            break
        time.sleep(0.005)
    os.kill(child.proc.pid, signal.SIGKILL)
    child.proc.wait(timeout=WAIT_S)
    assert child.proc.returncode == -signal.SIGKILL


def stored_supersteps(store_dir: Path, run_id: str) -> list[int]:
    """The supersteps of the run's checkpoints; every file must load (atomic writes)."""
    listed = asyncio.run(FileCheckpointStore(store_dir).list(run_id=run_id))
    return [meta.superstep for meta in listed]


def run_uninterrupted(tmp: Path, *options: str) -> Child:
    """A run from start to end in its own process, finished."""
    log, err = tmp / "child.out", tmp / "child.err"
    with log.open("wb") as out, err.open("wb") as errors:
        proc = subprocess.Popen(
            [sys.executable, str(CHILD), "run", str(tmp / "store"), *options],
            stdout=out,
            stderr=errors,
            stdin=subprocess.DEVNULL,
            cwd=tmp,
        )
    child = Child(proc, log, err)
    try:
        child.finish()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT_S)
    return child


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    """The outputs of an uninterrupted run, in its own process."""
    child = run_uninterrupted(tmp_path_factory.mktemp("uninterrupted"))
    (done,) = child.of("done")
    assert done["superstep_count"] == SUPERSTEPS
    outputs = child.outputs()
    assert len(outputs) == 8  # a report per round, then the history
    assert outputs[-1] == {"history": [o["acc"] for o in outputs[:-1]]}
    return outputs


@pytest.fixture(scope="module")
def uninterrupted_asking(
    tmp_path_factory: pytest.TempPathFactory, uninterrupted: list[Any]
) -> list[Any]:
    """The outputs of an uninterrupted run that pauses once (the same as without the pause)."""
    child = run_uninterrupted(tmp_path_factory.mktemp("uninterrupted-asking"), "--ask")
    (done,) = child.of("done")
    assert done["superstep_count"] == ASKING_SUPERSTEPS
    assert [e["superstep"] for e in child.of("paused")] == [PAUSE_SUPERSTEP]
    assert child.outputs() == uninterrupted
    return uninterrupted


@pytest.mark.parametrize(
    "kill_points",
    [
        pytest.param([3], id="kill-after-3-checkpoints"),
        pytest.param([11], id="kill-after-11-checkpoints"),
        pytest.param([4, 13], id="kill-twice"),
    ],
)
def test_sigkill_then_resume_in_a_fresh_process_gives_the_uninterrupted_outputs(
    spawn: Callable[..., Child],
    tmp_path: Path,
    uninterrupted: list[Any],
    kill_points: list[int],
) -> None:
    store_dir = tmp_path / "store"
    victims: list[Child] = []
    run_id: str | None = None
    for n, min_checkpoints in enumerate(kill_points):
        if run_id is None:
            child = spawn("run", str(store_dir))
        else:
            child = spawn("resume", str(store_dir), run_id)
        kill_at_quiet_point(child, store_dir, min_checkpoints)
        victims.append(child)
        assert not child.of("done"), child.describe()
        (started,) = child.of("started")
        if run_id is None:
            run_id = str(started["run_id"])
        assert started["run_id"] == run_id
        # Whatever the kill interrupted, every checkpoint on disk is whole, one per superstep.
        supersteps = stored_supersteps(store_dir, run_id)
        assert supersteps == list(range(len(supersteps)))
        assert min_checkpoints <= len(supersteps) < SUPERSTEPS
        if n > 0:
            assert child.of("resumed")[0]["superstep"] < supersteps[-1]
    assert run_id is not None

    final = spawn("resume", str(store_dir), run_id)
    final.finish()

    # Each process resumed where the previous one's checkpoints ended, with the outputs count
    # of that checkpoint equal to what the killed processes had yielded so far.
    printed: list[Any] = []
    for victim, resumer in zip(victims, [*victims[1:], final], strict=True):
        printed += victim.outputs()
        (resumed,) = resumer.of("resumed")
        assert resumed["superstep"] == victim.last_superstep(), victim.describe()
        assert resumed["outputs_so_far"] == len(printed)
        (started,) = resumer.of("started")
        assert started["run_id"] == run_id
    (done,) = final.of("done")
    assert done["superstep_count"] == SUPERSTEPS

    # Exactly the uninterrupted outputs, none lost, none twice; the history output proves the
    # executor state and shared state crossed every crash.
    assert printed + final.outputs() == uninterrupted
    assert stored_supersteps(store_dir, run_id) == list(range(SUPERSTEPS))


LAST_KILL = ASKING_SUPERSTEPS - 4
"""Kills come after a superstep before this one: three supersteps are left, so they land."""


def kill_at_random_point(child: Child, rng: random.Random, first: int, last: int) -> None:
    """SIGKILL ``child`` at a random moment: once it printed superstep ``k`` (random in
    ``[first, last)``; ``-1``: as soon as it started), after a random pause of up to two
    supersteps."""
    k = rng.randrange(first, last)
    deadline = time.monotonic() + WAIT_S
    while not (child.started() and child.last_superstep() >= k):
        if child.proc.poll() is not None:
            pytest.fail(
                f"child exited (code {child.proc.returncode}) before the kill\n{child.describe()}"
            )
        if time.monotonic() > deadline:
            pytest.fail(f"no superstep {k} after {WAIT_S} s\n{child.describe()}")
        time.sleep(0.005)
    time.sleep(rng.uniform(0, 2 * STEP_DELAY_S))
    os.kill(child.proc.pid, signal.SIGKILL)
    child.proc.wait(timeout=WAIT_S)
    assert child.proc.returncode == -signal.SIGKILL


def latest_on_disk(store_dir: Path, run_id: str) -> tuple[int, int]:
    """The run's latest checkpoint on disk: (superstep, outputs_so_far); (-1, 0) for none.

    Every file must load (writes are atomic, whatever the kill interrupted)."""
    latest = asyncio.run(FileCheckpointStore(store_dir).latest(run_id))
    return (-1, 0) if latest is None else (latest.superstep, latest.outputs_so_far)


def pause_checkpoints_only(store_dir: Path, run_id: str) -> bool:
    """Whether every checkpoint of the run on disk is one of a pause (requests pending)."""

    async def listed() -> list[list[str]]:
        return [
            m.pending_request_ids for m in await FileCheckpointStore(store_dir).list(run_id=run_id)
        ]

    return all(asyncio.run(listed()))


@pytest.mark.parametrize("first_kill", ["before-the-pause", "after-the-pause"])
@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_sigkill_at_random_points_resumes_where_the_durability_mode_promises(
    spawn: Callable[..., Child],
    tmp_path: Path,
    uninterrupted_asking: list[Any],
    durability: str,
    first_kill: str,
) -> None:
    rng = random.Random(f"{durability}/{first_kill}")
    windows = [
        (-1, PAUSE_SUPERSTEP) if first_kill == "before-the-pause" else (PAUSE_SUPERSTEP, LAST_KILL),
        None,  # the second kill: anywhere after the first one's resume point
    ]
    store_dir = tmp_path / "store"
    options = ("--ask", "--durability", durability)
    run_id: str | None = None
    resumed_from = -1  # the superstep of the checkpoint the next process resumes from
    kept: list[Any] = []  # the run's outputs up to that checkpoint

    def start() -> Child:
        if run_id is None:
            return spawn("run", str(store_dir), *options)
        return spawn("resume", str(store_dir), run_id, *options)

    for window in windows:
        first, last = window or (resumed_from, LAST_KILL)
        if first >= last:
            break  # too close to the end for another kill: the last process finishes the run
        child = start()
        kill_at_random_point(child, rng, first, last)
        assert not child.of("done"), child.describe()
        run_id = str(child.of("started")[0]["run_id"])
        if resumed_from >= 0:
            assert child.of("resumed")[0]["superstep"] == resumed_from
        reached = max(child.last_superstep(), resumed_from)  # the last barrier it passed
        latest, outputs_so_far = latest_on_disk(store_dir, run_id)
        where = f"{durability}: killed after superstep {reached}, latest checkpoint {latest}"
        if durability == "exit":
            allowed = {resumed_from}
            if resumed_from < PAUSE_SUPERSTEP <= reached:
                paused = bool(child.of("paused"))
                allowed = {PAUSE_SUPERSTEP} if paused else {resumed_from, PAUSE_SUPERSTEP}
            assert latest in allowed, f"{where}, expected one of {allowed}\n{child.describe()}"
            assert pause_checkpoints_only(store_dir, run_id), where
        else:
            running = reached + 1
            assert running - STEPS_BACK[durability] <= latest <= running, (
                f"{where}\n{child.describe()}"
            )
        kept = (kept + child.outputs())[:outputs_so_far]
        if latest == -1:  # nothing kept: the next process starts the run again
            run_id = None
        resumed_from = latest

    final = start()
    final.finish()

    if run_id is not None:
        (resumed,) = final.of("resumed")
        assert resumed["superstep"] == resumed_from
        assert resumed["outputs_so_far"] == len(kept)
    (done,) = final.of("done")
    assert done["superstep_count"] == ASKING_SUPERSTEPS
    assert kept + final.outputs() == uninterrupted_asking  # none lost, none twice
