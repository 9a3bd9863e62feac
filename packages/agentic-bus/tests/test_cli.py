"""The worker command: ``agentic-worker``, ``python -m agentic_bus worker`` and the
``agentic.commands`` entry point ``worker`` that the ``agentic`` command picks up."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import entry_points

import pytest
from worker_procs import TESTS_DIR

from agentic_bus._cli import worker_command


def _worker(*args: str, timeout_s: float = 30.0) -> subprocess.CompletedProcess[str]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "AGENTIC_TEST_FLAGS"},
        "PYTHONPATH": os.pathsep.join(
            p for p in [str(TESTS_DIR), os.environ.get("PYTHONPATH")] if p
        ),
    }
    return subprocess.run(
        [sys.executable, "-m", "agentic_bus", "worker", *args],
        env=env, capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip


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
        ("bus_graphs", "expected MODULE:FACTORY"),
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
