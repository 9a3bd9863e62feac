"""Per-execution overhead of the sandboxes, against a bare ``subprocess.run`` as the floor.

Run: ``uv run python benches/sandbox.py [--rounds N] [--base-url URL --image IMAGE]``.

Every subject runs the same ``print(1)`` program to its end, one run at a time; the table shows
the median wall time of ``--rounds`` runs (after two warm-up runs), the 90th percentile, and the
overhead over the floor measured in the same process:

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
  tests, one after the other: Podman (tests/fixtures/podman.py: a private ``podman system
  service``) and Docker Engine (tests/fixtures/dockerd.py: a private ``dockerd``), each with
  the Debian ``python3`` test image, built on first use and cached. Its interpreter is Debian's
  ``python3`` of the image, not the floor's.

A subject that cannot run here (no bwrap, no podman, no dockerd) is reported as skipped, with
the reason.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from _common import fmt

from agentic_core import Sandbox
from agentic_sandbox import DockerSandbox, ProcessSandbox, SandboxError

PROGRAM = "print(1)"
WARM_UP = 2
REPO_ROOT = Path(__file__).resolve().parent.parent


def run_bare(python: str) -> None:
    done = subprocess.run([python, "-c", PROGRAM], capture_output=True, text=True, check=True)
    assert done.stdout == "1\n"


async def time_runs(run: Callable[[], Awaitable[None]], rounds: int) -> list[float]:
    """Wall times in ms of ``rounds`` runs, after the warm-up."""
    for _ in range(WARM_UP):
        await run()
    samples: list[float] = []
    for _ in range(rounds):
        started = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - started) * 1e3)
    return samples


async def floor_samples(python: str, rounds: int) -> list[float]:
    async def run() -> None:
        run_bare(python)  # blocking on purpose: the floor is the plain synchronous call

    return await time_runs(run, rounds)


def host_python(reported: str) -> str:
    """``reported`` (a sandbox's sys.executable) on the host, resolved; else this Python."""
    path = Path(reported)
    return str((path if path.is_file() else Path(sys.executable)).resolve())


async def interpreter(sandbox: Sandbox) -> str:
    """The Python the sandbox runs, as a host path for the floor."""
    result = await sandbox.execute("import sys\nprint(sys.executable)")
    return host_python(result.stdout.strip())


Measured = tuple[str, list[float]] | str
"""The interpreter and the samples of a subject, or why it was skipped."""


async def sandbox_samples(sandbox: Sandbox, rounds: int) -> tuple[str, list[float]]:
    async def run() -> None:
        result = await sandbox.execute(PROGRAM)
        assert result.stdout == "1\n", result

    return await interpreter(sandbox), await time_runs(run, rounds)


async def process_sandbox_samples(rounds: int, *, use_bwrap: bool) -> Measured:
    async with ProcessSandbox(use_bwrap=use_bwrap) as sandbox:
        if not await sandbox.is_ready():
            return f"no {'bwrap' if use_bwrap else 'unshare'} jail here"
        return await sandbox_samples(sandbox, rounds)


async def docker_sandbox_samples(rounds: int, base_url: str, image: str) -> Measured:
    async with DockerSandbox(image, base_url=base_url) as sandbox:
        if not await sandbox.is_ready():
            return f"no engine with {image} at {base_url}"
        return await sandbox_samples(sandbox, rounds)


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


def row(name: str, python: str, samples: list[float], floor_ms: float | None) -> str:
    median = statistics.median(samples)
    p90 = statistics.quantiles(samples, n=10)[-1]
    over = "" if floor_ms is None else f"{fmt(median - floor_ms):>10} {median / floor_ms:>8.1f}"
    return f"{name:<27} {python:<44} {fmt(median):>8} {fmt(p90):>8} {over}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--base-url", help="a Docker-API engine (default: start the test engine)")
    parser.add_argument("--image", help="an image with python3 on that engine")
    args = parser.parse_args()

    subjects: dict[str, Measured] = {}
    subjects["ProcessSandbox (bwrap)"] = await process_sandbox_samples(args.rounds, use_bwrap=True)
    subjects["ProcessSandbox (no bwrap)"] = await process_sandbox_samples(
        args.rounds, use_bwrap=False
    )
    if args.base_url and args.image:
        subjects["DockerSandbox"] = await docker_sandbox_samples(
            args.rounds, args.base_url, args.image
        )
    else:
        for engine_name in ("podman", "docker"):
            subject = f"DockerSandbox ({engine_name})"
            engine = start_test_engine(engine_name)
            if isinstance(engine, str):
                subjects[subject] = engine
                continue
            base_url, image, stop_engine = engine
            try:
                subjects[subject] = await docker_sandbox_samples(args.rounds, base_url, image)
            except SandboxError as exc:
                subjects[subject] = str(exc)
            finally:
                stop_engine()

    floors: dict[str, float] = {}
    for measured in subjects.values():
        if not isinstance(measured, str) and measured[0] not in floors:
            floors[measured[0]] = statistics.median(await floor_samples(measured[0], args.rounds))

    print(
        f"sandbox overhead per execution of {PROGRAM!r}: wall ms, median and p90 of "
        f"{args.rounds} runs; + and x against the floor of the same interpreter"
    )
    print(f"{'subject':<27} {'python':<44} {'ms':>8} {'p90':>8} {'+ms floor':>10} {'x floor':>8}")
    for python, floor_ms in floors.items():
        print(f"{'floor: subprocess.run':<27} {python:<44} {fmt(floor_ms):>8}")
    for name, measured in subjects.items():
        if isinstance(measured, str):
            print(f"{name:<27} skipped: {measured}")
        else:
            python, samples = measured
            print(row(name, python, samples, floors[python]))


if __name__ == "__main__":
    asyncio.run(main())
