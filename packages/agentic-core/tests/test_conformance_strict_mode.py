"""The public conformance suites run in any project, whatever its pytest-asyncio mode.

This workspace runs its tests in ``auto`` mode, which hides a suite that forgot to mark its
tests: in a ``strict`` project such a suite's tests fail ("async def functions are not natively
supported"). So every suite is run here in a throwaway ``strict`` project.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agentic_core.testing import conformance
from tests.fixtures.servers import missing_service
from tests.fixtures.system_tools import process_sandbox_problem

SUITES = sorted(name for name in conformance.__all__ if name.endswith("Conformance"))

STORES = """
import pytest
import pytest_asyncio

from agentic_core import InMemoryBus
from agentic_core.stores import InMemoryCheckpointStore, InMemoryStateStore, InMemoryVectorStore
from agentic_core.testing.conformance import (
    CheckpointStoreConformance,
    MessageBusConformance,
    StateStoreConformance,
    VectorStoreConformance,
)


class TestCheckpointStoreConformance(CheckpointStoreConformance):
    @pytest.fixture
    def checkpoint_store(self):
        return InMemoryCheckpointStore()


class TestStateStoreConformance(StateStoreConformance):
    @pytest.fixture
    def state_store(self):
        return InMemoryStateStore()


class TestVectorStoreConformance(VectorStoreConformance):
    large_collection_size = 50

    @pytest.fixture
    def vector_store(self):
        return InMemoryVectorStore()


class TestMessageBusConformance(MessageBusConformance):
    @pytest_asyncio.fixture
    async def message_bus(self):
        bus = InMemoryBus()
        yield bus
        await bus.close()
"""

# Core has no sandbox of its own: agentic-sandbox's ProcessSandbox stands in (skipped without it).
SANDBOXES = """
import pytest_asyncio

from agentic_core.testing.conformance import InteractiveSandboxConformance, SandboxConformance
from agentic_sandbox import ProcessSandbox


class TestSandboxConformance(SandboxConformance):
    max_output_bytes = 100_000

    @pytest_asyncio.fixture
    async def sandbox(self):
        async with ProcessSandbox(max_output_bytes=self.max_output_bytes, timeout_s=20) as box:
            yield box


class TestInteractiveSandboxConformance(InteractiveSandboxConformance):
    max_output_bytes = 100_000

    @pytest_asyncio.fixture
    async def sandbox(self):
        async with ProcessSandbox(max_output_bytes=self.max_output_bytes, timeout_s=20) as box:
            yield box
"""


@pytest.mark.parametrize("name", SUITES)
def test_every_suite_marks_its_tests_for_pytest_asyncio(name: str) -> None:
    suite = getattr(conformance, name)
    marks = [mark.name for mark in getattr(suite, "pytestmark", [])]
    assert "asyncio" in marks, f"{name} does not mark its tests with pytest.mark.asyncio"


@pytest.mark.slow
def test_every_suite_passes_in_a_strict_mode_project(tmp_path: Path) -> None:
    has_sandbox = importlib.util.find_spec("agentic_sandbox") is not None
    # Where no ProcessSandbox can run (no bubblewrap, no working `unshare`), the store suites
    # still run; then the test skips naming what to install (fails under
    # AGENTIC_REQUIRE_SERVICES=1).
    sandbox_problem = process_sandbox_problem() if has_sandbox else None
    has_sandbox = has_sandbox and sandbox_problem is None
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"
    )
    (tmp_path / "test_stores.py").write_text(textwrap.dedent(STORES))
    if has_sandbox:
        (tmp_path / "test_sandboxes.py").write_text(textwrap.dedent(SANDBOXES))
    command = [sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider"]
    command += ["-o", "asyncio_mode=strict", str(tmp_path)]

    try:
        result = subprocess.run(
            command, capture_output=True, text=True, cwd=tmp_path, check=False, timeout=150
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the suites took over {exc.timeout} s:\n{exc.stdout!r}\n{exc.stderr!r}")

    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert not re.search(r"\b(FAILED|SKIPPED|ERROR)\b", result.stdout), report
    passed = set(re.findall(r"::Test(\w+)::\S+ PASSED", result.stdout))
    assert passed == {name for name in SUITES if has_sandbox or "Sandbox" not in name}, report
    if sandbox_problem is not None:
        missing_service(f"the sandbox suites did not run: ProcessSandbox: {sandbox_problem}")
    if not has_sandbox:
        pytest.skip("agentic-sandbox is not installed: the sandbox suites did not run")
