"""The worker command: ``agentic-worker``, ``python -m agentic_bus worker`` and the
``agentic.commands`` entry point ``worker`` that the ``agentic`` command picks up."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from worker_procs import TESTS_DIR

from agentic_bus._cli import worker_command


def _worker(
    *args: str,
    timeout_s: float = 30.0,
    cwd: Path | None = None,
    tests_importable: bool = True,
    command: tuple[str, ...] = (sys.executable, "-m", "agentic_bus", "worker"),
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("AGENTIC_TEST_FLAGS", "PYTHONPATH")}
    paths = [str(TESTS_DIR)] if tests_importable else []
    paths += [p for p in [os.environ.get("PYTHONPATH")] if p]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return subprocess.run(
        [*command, *args],
        env=env, capture_output=True, text=True, timeout=timeout_s, check=False, cwd=cwd,
    )  # fmt: skip


FLOWS_PY = textwrap.dedent(
    """
    from typing import Never

    from agentic_core import WorkflowBuilder, WorkflowContext, executor


    @executor
    async def echo(text: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(text)


    def build():
        return WorkflowBuilder("flows").set_start_executor(echo).build()
    """
)


def test_the_agentic_command_finds_the_worker_subcommand() -> None:
    (found,) = [e for e in entry_points(group="agentic.commands") if e.name == "worker"]
    assert found.load() is worker_command


def test_the_console_script_is_installed() -> None:
    (found,) = [e for e in entry_points(group="console_scripts") if e.name == "agentic-worker"]
    assert found.value == "agentic_bus._cli:main"


def test_help_lists_the_options() -> None:
    done = _worker("--help")
    assert done.returncode == 0
    for option in ("--nats", "--pool", "--build", "--slots", "--ack-wait", "--stop-grace"):
        assert option in done.stdout


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("no_such_module:build", "cannot import module 'no_such_module'"),
        ("bus_graphs:no_such_factory", "has no attribute 'no_such_factory'"),
        ("bus_graphs", "expected MODULE:NAME"),
        ("bus_graphs:_flags", "did not give a workflow (got NoneType)"),
        ("bus_graphs:Blob", "bus_graphs:Blob failed: ValidationError"),
    ],
)
def test_a_bad_factory_is_a_clear_error(factory: str, message: str) -> None:
    done = _worker(factory, "--nats", "nats://127.0.0.1:9")
    assert done.returncode != 0
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unreachable_server_is_one_line_without_the_password() -> None:
    done = _worker("bus_graphs:pipeline", "--nats", "nats://ada:hunter2@127.0.0.1:9")
    assert done.returncode == 1
    assert "agentic-worker:" in done.stderr
    assert "127.0.0.1:9" in done.stderr
    assert "hunter2" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr


def test_the_factory_module_is_found_in_the_current_directory(tmp_path: Path) -> None:
    # The console script, not `python -m` (which puts the current directory on sys.path itself).
    script = Path(sys.executable).with_name("agentic-worker")
    (tmp_path / "flows.py").write_text(FLOWS_PY)

    done = _worker(
        "nats://127.0.0.1:9", "flows:build",
        cwd=tmp_path, tests_importable=False, command=(str(script),),
    )  # fmt: skip

    assert "cannot import module" not in done.stderr
    assert done.returncode == 1  # the factory loaded and built; then the server was away
    assert "agentic-worker:" in done.stderr
    assert "127.0.0.1:9" in done.stderr


def test_the_server_goes_first_or_after_nats_but_not_both() -> None:
    both = _worker("nats://127.0.0.1:9", "bus_graphs:pipeline", "--nats", "nats://127.0.0.1:8")
    not_a_url = _worker("bus_graphs:pipeline", "bus_graphs:jokes")

    assert both.returncode == 2
    assert "give the server once" in both.stderr
    assert not_a_url.returncode == 2
    assert "is not a server URL" in not_a_url.stderr


def test_a_bad_log_level_is_refused() -> None:
    done = _worker("bus_graphs:pipeline", "--log-level", "LOUD")
    assert done.returncode != 0
    assert "LOUD" in done.stderr


def test_python_m_without_the_subcommand_prints_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentic_bus"], capture_output=True, text=True, timeout=30,
        check=False,
    )  # fmt: skip
    assert done.returncode != 0
    assert "usage: python -m agentic_bus worker" in done.stderr
