"""One sandbox, many event loops: ``asyncio.run`` after ``asyncio.run``, loops in two threads at
once, and ``stop()`` from yet another loop, with nothing left running or leaked.

A program belongs to the loop that started it (its pipes, futures and watchdog do); the sandbox
finishes each on its own loop, or without one when that loop is gone.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import warnings
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from agentic_core import ExecutionResult, Sandbox
from agentic_sandbox import DockerSandbox, ProcessSandbox
from tests.fixtures.engines import ContainerEngine
from tests.fixtures.system_tools import require_tools

SLEEPER = "import sys, time\nprint('up', flush=True)\ntime.sleep(60)\n"


def process_sandbox(workdir: Path) -> ProcessSandbox:
    require_tools("bwrap")
    return ProcessSandbox(workdir=workdir, timeout_s=30, memory_mb=256, use_bwrap=True)


def docker_sandbox(engine: ContainerEngine) -> DockerSandbox:
    return DockerSandbox(engine.python_image, base_url=engine.base_url, timeout_s=30, memory_mb=256)


def in_thread(work: Callable[[], Coroutine[Any, Any, Any]]) -> tuple[threading.Thread, list[Any]]:
    """Run ``work()`` in a new thread with its own event loop; the list gets its result or
    exception."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(asyncio.run(work()))
        except BaseException as exc:  # reported by the test
            outcome.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def use_from_loops_in_turn(box: Sandbox) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(3):
            result = asyncio.run(box.execute(f"print({n} * 7)"))
            assert (result.exit_code, result.stdout) == (0, f"{n * 7}\n")

        async def interactive() -> bytes:
            async with box.start("print(input().upper())") as process:  # type: ignore[attr-defined]
                await process.write(b"hello\n")
                line: bytes = await process.readline(limit=100)
                await process.wait()
                return line

        assert asyncio.run(interactive()) == b"HELLO\n"
        asyncio.run(box.stop())
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


def use_from_two_threads_at_once(box: Sandbox) -> None:
    both = threading.Barrier(2, timeout=60)

    async def session(k: int) -> list[str]:
        first = await box.execute(f"print({k})")
        both.wait()  # each thread's loop has run a program; now both run at once
        rest = await asyncio.gather(*(box.execute(f"print({k}{i})") for i in range(2)))
        return [r.stdout for r in (first, *rest)]

    runs = [in_thread(lambda k=k: session(k)) for k in (1, 2)]
    for thread, _ in runs:
        thread.join(timeout=120)
    assert [outcome for _, outcome in runs] == [
        [["1\n", "10\n", "11\n"]],
        [["2\n", "20\n", "21\n"]],
    ]
    asyncio.run(box.stop())


def stop_from_another_loop(box: Sandbox) -> ExecutionResult:
    """A program runs on a loop in another thread; ``stop()`` from this thread ends it."""
    up = threading.Event()

    async def session() -> ExecutionResult:
        async with box.start(SLEEPER) as process:  # type: ignore[attr-defined]
            assert await process.readline(limit=100) == b"up\n"
            up.set()
            result: ExecutionResult = await process.wait()
            return result

    thread, outcome = in_thread(session)
    assert up.wait(timeout=60)
    asyncio.run(box.stop())
    thread.join(timeout=60)
    [result] = outcome
    assert isinstance(result, ExecutionResult), result
    return result


# --- ProcessSandbox ---------------------------------------------------------------------------


def test_a_process_sandbox_serves_event_loops_in_turn(tmp_path: Path) -> None:
    use_from_loops_in_turn(process_sandbox(tmp_path))


def test_a_process_sandbox_serves_two_threads_at_once(tmp_path: Path) -> None:
    use_from_two_threads_at_once(process_sandbox(tmp_path))


def test_stop_ends_a_process_running_on_another_threads_loop(tmp_path: Path) -> None:
    result = stop_from_another_loop(process_sandbox(tmp_path))
    assert result.exit_code != 0
    assert result.duration_s < 60


def test_a_process_left_running_when_its_loop_ends_is_killed(
    tmp_path: Path,
    marker_env: dict[str, str],
    wait_for_processes: Callable[[int], Coroutine[Any, Any, None]],
    leftover_processes: Callable[[], list[int]],
) -> None:
    box = process_sandbox(tmp_path)

    up = asyncio.Event()

    async def run_it() -> None:
        async with box.start(SLEEPER, env=marker_env) as process:
            assert await process.readline(limit=100) == b"up\n"
            up.set()
            await process.wait()

    async def leave_it_running() -> None:
        asyncio.ensure_future(run_it())  # noqa: RUF006 - abandoned on purpose
        # Wait for its output, not just its process: Python 3.11's asyncio hangs for ever when
        # asyncio.run's shutdown cancels a subprocess whose pipes are still being connected
        # (_make_subprocess_transport awaits an exit waiter only a cancelled task would wake).
        async with asyncio.timeout(30):
            await up.wait()
        await wait_for_processes(1)  # it runs; asyncio.run then cancels it at shutdown

    asyncio.run(leave_it_running())
    assert leftover_processes() == []
    asyncio.run(box.stop())
    assert list(tmp_path.iterdir()) == []  # its run directory went with it


# --- DockerSandbox (on Podman and on Docker Engine) --------------------------------------------


@pytest.mark.slow
def test_a_docker_sandbox_serves_event_loops_in_turn(container_engine: ContainerEngine) -> None:
    use_from_loops_in_turn(docker_sandbox(container_engine))
    assert container_engine.sandbox_containers() == []


@pytest.mark.slow
def test_a_docker_sandbox_serves_two_threads_at_once(container_engine: ContainerEngine) -> None:
    use_from_two_threads_at_once(docker_sandbox(container_engine))
    assert container_engine.sandbox_containers() == []


@pytest.mark.slow
def test_stop_removes_a_container_running_on_another_threads_loop(
    container_engine: ContainerEngine,
) -> None:
    result = stop_from_another_loop(docker_sandbox(container_engine))
    assert result.exit_code != 0
    assert container_engine.sandbox_containers() == []


@pytest.mark.slow
def test_a_container_left_running_when_its_loop_ends_is_removed(
    container_engine: ContainerEngine,
) -> None:
    box = docker_sandbox(container_engine)

    async def leave_it_running() -> None:
        asyncio.ensure_future(box.execute(SLEEPER))  # noqa: RUF006 - abandoned on purpose
        async with asyncio.timeout(60):
            while not container_engine.sandbox_containers():  # noqa: ASYNC110 - polling
                await asyncio.sleep(0.05)

    asyncio.run(leave_it_running())
    asyncio.run(box.stop())
    assert container_engine.sandbox_containers() == []
