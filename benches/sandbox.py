"""Per-execution overhead of the sandboxes, against a bare ``subprocess.run`` as the floor.

Run: ``uv run python benches/sandbox.py [--rounds N] [--base-url URL --image IMAGE]
[--no-engines]``.

Every subject runs the same ``print(1)`` program to its end, one run at a time. All subjects are
opened first (both test engines up at once), then each round runs every floor and every subject
once, in turn, so load on the shared machine hits them alike. The table shows the median and
min-max wall time over ``--rounds`` rounds (after two warm-up runs each), the 90th percentile,
and the overhead over the floor of the same interpreter, computed round by round (``+ms``, ``x``)
then summarised as median (min-max):

- ``floor``: ``subprocess.run([python, "-c", "print(1)"])`` with the interpreter the subject
  runs (each sandbox reports its ``sys.executable`` first; as root without bwrap ProcessSandbox
  runs the system ``python3``, and the test image holds Debian's, the same build as the host's),
  so every overhead is measured against the same program started bare;
- ``ProcessSandbox (bwrap)`` and ``ProcessSandbox (no bwrap)``: ``use_bwrap=True`` (the
  bubblewrap jail) and ``use_bwrap=False`` (the ``unshare`` fallback), each ``execute`` making
  and removing a run directory and the jail;
- ``DockerSandbox``: one container per run — create it with a waiting first process and the
  run's sized tmpfs disk, start it, copy the program in, run it as an engine ``exec``, read
  ``out/`` from the tmpfs, remove. Without ``--base-url``/``--image`` it runs on both engines of the
  tests (``--no-engines``: on none): Podman (tests/fixtures/podman.py: a private ``podman system
  service``) and Docker Engine (tests/fixtures/dockerd.py: a private ``dockerd``), each with
  the Debian ``python3`` test image, built on first use and cached. Its interpreter is Debian's
  ``python3`` of the image, not the floor's.

A subject that cannot run here (no bwrap, no podman, no dockerd) is reported as skipped, with
the reason.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from _common import alternate, fmt, ratio_summary, summary

from agentic_core import Sandbox
from agentic_sandbox import DockerSandbox, ProcessSandbox, SandboxError

PROGRAM = "print(1)"
WARM_UP = 2
REPO_ROOT = Path(__file__).resolve().parent.parent


def run_bare(python: str) -> None:
    done = subprocess.run([python, "-c", PROGRAM], capture_output=True, text=True, check=True)
    assert done.stdout == "1\n"


def host_python(reported: str) -> str:
    """``reported`` (a sandbox's sys.executable) on the host, resolved; else this Python."""
    path = Path(reported)
    return str((path if path.is_file() else Path(sys.executable)).resolve())


async def interpreter(sandbox: Sandbox) -> str:
    """The Python the sandbox runs, as a host path for the floor."""
    result = await sandbox.execute("import sys\nprint(sys.executable)")
    return host_python(result.stdout.strip())


@dataclass
class Subject:
    """One side: a sandbox (or the bare floor of an interpreter) and its wall ms per round."""

    name: str
    python: str  # the interpreter it runs, as a host path (the floor of the same one)
    run: Callable[[], Awaitable[None]]
    samples: list[float] = field(default_factory=list[float])


def sandbox_run(sandbox: Sandbox) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        result = await sandbox.execute(PROGRAM)
        assert result.stdout == "1\n", result

    return run


def floor_run(python: str) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        run_bare(python)  # blocking on purpose: the floor is the plain synchronous call

    return run


async def time_one(subject: Subject) -> None:
    started = time.perf_counter()
    await subject.run()
    subject.samples.append((time.perf_counter() - started) * 1e3)


async def open_sandbox(
    stack: contextlib.AsyncExitStack, name: str, sandbox: Sandbox, why_not: str
) -> Subject | str:
    """``sandbox`` entered on ``stack`` as a subject, or why it cannot run here."""
    await stack.enter_async_context(sandbox)
    if not await sandbox.is_ready():
        return why_not
    return Subject(name, await interpreter(sandbox), sandbox_run(sandbox))


def start_test_engine(engine: str) -> tuple[str, str, Callable[[], None]] | str:
    """One of the tests' private engines: (base_url, image, stop) or why it cannot start."""
    sys.path.insert(0, str(REPO_ROOT))
    from tests.fixtures.dockerd import DockerdSetupError, start_dockerd_engine
    from tests.fixtures.podman import (
        EngineSetupError,
        cached_image_tars,
        start_podman_engine,
        static_busybox,
    )

    busybox = static_busybox()
    if busybox is None:
        return "busybox-static not installed (apt-get install busybox-static debootstrap)"
    try:
        shell_tar, python_tar, _timings = cached_image_tars(busybox)
        if engine == "podman":
            started = start_podman_engine(shell_tar, python_tar)
            return started.base_url, started.python_image, started.stop
        running = start_dockerd_engine(shell_tar, python_tar)
    except (EngineSetupError, DockerdSetupError, OSError, subprocess.SubprocessError) as exc:
        return f"cannot start the {engine} test engine: {exc}"
    return running.base_url, running.python_image, running.stop


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20, help="timed rounds (default 20)")
    parser.add_argument("--base-url", help="a Docker-API engine (default: start the test engine)")
    parser.add_argument("--image", help="an image with python3 on that engine")
    parser.add_argument("--no-engines", action="store_true", help="skip DockerSandbox")
    args = parser.parse_args()

    skipped: dict[str, str] = {}
    subjects: list[Subject] = []
    stops: list[Callable[[], None]] = []
    try:
        async with contextlib.AsyncExitStack() as stack:
            candidates: list[tuple[str, Sandbox | str]] = [
                ("ProcessSandbox (bwrap)", ProcessSandbox(use_bwrap=True)),
                ("ProcessSandbox (no bwrap)", ProcessSandbox(use_bwrap=False)),
            ]
            if args.base_url and args.image:
                candidates.append(
                    ("DockerSandbox", DockerSandbox(args.image, base_url=args.base_url))
                )
            elif not args.no_engines:
                for engine_name in ("podman", "docker"):  # both engines up for the whole run
                    engine = start_test_engine(engine_name)
                    subject = f"DockerSandbox ({engine_name})"
                    if isinstance(engine, str):
                        candidates.append((subject, engine))
                        continue
                    base_url, image, stop_engine = engine
                    stops.append(stop_engine)
                    candidates.append((subject, DockerSandbox(image, base_url=base_url)))
            for name, sandbox in candidates:
                if isinstance(sandbox, str):
                    skipped[name] = sandbox
                    continue
                try:
                    opened = await open_sandbox(stack, name, sandbox, "not ready here")
                except SandboxError as exc:
                    opened = str(exc)
                if isinstance(opened, str):
                    skipped[name] = opened
                else:
                    subjects.append(opened)
            floors = {
                python: Subject("floor: subprocess.run", python, floor_run(python))
                for python in dict.fromkeys(subject.python for subject in subjects)
            }
            sides = [*floors.values(), *subjects]  # floors first, then every sandbox, per round
            for side in sides:
                for _ in range(WARM_UP):
                    await side.run()
            await alternate(sides, args.rounds, time_one)
    finally:
        for stop in stops:
            stop()

    print(
        f"\nsandbox overhead per execution of {PROGRAM!r}: wall ms, median (min-max) and p90 of "
        f"{args.rounds} rounds, every subject and floor once per round (alternated); + and x "
        "against the floor of the same interpreter in the same round"
    )
    print(f"{'subject':<27} {'python':<44} {'ms':>20} {'p90':>8} {'+ms floor':>20} {'x floor':>20}")
    for side in sides:
        p90 = fmt(statistics.quantiles(side.samples, n=10)[-1]) if len(side.samples) > 1 else ""
        line = f"{side.name:<27} {side.python:<44} {summary(side.samples):>20} {p90:>8}"
        floor = floors[side.python]
        if side is not floor:
            over = [s - f for s, f in zip(side.samples, floor.samples, strict=True)]
            line += f" {summary(over):>20} {ratio_summary(side.samples, floor.samples):>20}"
        print(line)
    for name, why in skipped.items():
        print(f"{name:<27} skipped: {why}")


if __name__ == "__main__":
    asyncio.run(main())
