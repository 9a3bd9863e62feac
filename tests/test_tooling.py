"""The suite also enforces the tooling: ruff lint, ruff format and pyright strict are clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _tool(name: str) -> str:
    beside_python = Path(sys.executable).parent / name
    found = str(beside_python) if beside_python.exists() else shutil.which(name)
    assert found, f"{name} is a dev dependency: run `uv sync`"
    return found


def _check(*argv: str) -> None:
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"`{' '.join(argv)}` reported:\n{done.stdout}\n{done.stderr}"


def test_ruff_lint_is_clean() -> None:
    _check(_tool("ruff"), "check", ".")


def test_ruff_format_is_clean() -> None:
    _check(_tool("ruff"), "format", "--check", ".")


def test_pyright_is_clean() -> None:
    _check(_tool("pyright"))
