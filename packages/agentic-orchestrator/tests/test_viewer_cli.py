"""``agentic viewer`` as a real process: it prints its URL, serves the runs of a checkpoint
directory with the workflow it was given, and stops on Ctrl-C with exit code 0; without the
``[viewer]`` extra it says what to install (exit 2)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import cast

import httpx
import pytest

from agentic_orchestrator import RunViewer
from tests.fixtures.servers import free_port, stop_process

from ._viewer_flows import approval, settled

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
AGENTIC = Path(sys.executable).with_name("agentic")


async def paused_run(directory: Path) -> str:
    viewer = RunViewer([approval()], checkpoint_store=directory)
    try:
        run_id = await viewer.start("cats")
        assert (await settled(viewer, run_id)).status == "waiting"
    finally:
        await viewer.aclose()
    return run_id


def wait_for_runs(base: str, process: subprocess.Popen[bytes]) -> dict[str, object]:
    """GET /api/runs once the server answers (bounded: 30 s, then the test fails)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            _, err = process.communicate()
            pytest.fail(f"agentic viewer exited {process.returncode}: {err.decode()}")
        with contextlib.suppress(httpx.TransportError):
            response = httpx.get(f"{base}/api/runs", timeout=5)
            if response.status_code == 200:
                return response.json()
        time.sleep(0.1)
    pytest.fail("agentic viewer did not answer within 30 s")


def test_the_command_serves_a_checkpoint_directory_until_ctrl_c(tmp_path: Path) -> None:
    run_id = asyncio.run(paused_run(tmp_path))
    port = free_port()
    process = subprocess.Popen(
        [
            str(AGENTIC),
            "viewer",
            "--checkpoint-dir",
            str(tmp_path),
            "--workflow",
            "_viewer_flows:approval",
            "--port",
            str(port),
        ],
        cwd=HERE,  # where --workflow's module is
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        listing = wait_for_runs(f"http://127.0.0.1:{port}", process)
        view = httpx.get(f"http://127.0.0.1:{port}/api/runs/{run_id}", timeout=5).json()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        stop_process(process, 5)

    assert process.returncode == 0, err.decode()
    assert f"http://127.0.0.1:{port}/" in out.decode()
    [row] = cast("list[dict[str, object]]", listing["runs"])
    expected = {
        "run_id": run_id,
        "workflow_id": approval().id,
        "workflow_name": "approval",
        "status": "waiting",
        "superstep_count": 2,
        "pending_request_count": 1,
        "source": "checkpoints",
        "checkpoints": 2,  # a row is the RunSummary `agentic runs` prints too
    }
    assert {key: row[key] for key in expected} == expected
    assert view["can_answer"] is True
    assert view["mermaid"].startswith("flowchart TD")


def test_without_the_viewer_extra_the_command_names_the_install() -> None:
    code = (
        "import sys\n"
        "sys.modules['starlette'] = None  # as if the [viewer] extra were not installed\n"
        "from agentic_orchestrator._cli import main\n"
        "sys.argv = ['agentic', 'viewer']\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )

    assert result.returncode == 2
    assert "pip install 'agentic-orchestrator[viewer]'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_new_checkpoint_directory_is_accepted_and_a_file_is_refused(tmp_path: Path) -> None:
    # A directory that does not exist yet is where the runs started in the viewer will be saved
    # (as `agentic run --checkpoint-dir` makes it); a path that is a file is a mistake.
    not_a_directory = tmp_path / "runs.txt"
    not_a_directory.write_text("")
    refused = subprocess.run(
        [str(AGENTIC), "viewer", "--checkpoint-dir", str(not_a_directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2
    assert f"--checkpoint-dir {not_a_directory} is not a directory" in refused.stderr

    port = free_port()
    new_directory = tmp_path / "new" / "runs"
    process = subprocess.Popen(
        [
            str(AGENTIC),
            *("viewer", "--checkpoint-dir", str(new_directory)),
            *("--workflow", "_viewer_flows:approval", "--port", str(port)),
        ],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_for_runs(f"http://127.0.0.1:{port}", process)["runs"] == []
        started = httpx.post(
            f"http://127.0.0.1:{port}/api/runs", json={"message": "cats"}, timeout=10
        )
        assert started.status_code == 201, started.text
        run_id = started.json()["run_id"]
        deadline = time.monotonic() + 30
        while not (new_directory / run_id).is_dir() and time.monotonic() < deadline:
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)
    finally:
        stop_process(process, 5)
    assert process.returncode == 0
    assert (new_directory / run_id).is_dir()  # the run was checkpointed into the new directory


def test_the_command_takes_its_token_from_the_environment_and_serves_allowed_hosts(
    tmp_path: Path,
) -> None:
    token = "cli-test-token-9876543210"  # noqa: S105 - a fake secret
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    bearer = {"authorization": f"Bearer {token}"}
    process = subprocess.Popen(
        [
            str(AGENTIC),
            *("viewer", "--workflow", "_viewer_flows:approval", "--port", str(port)),
            *("--allow-host", "runs.example.com", "--max-body", "200"),
        ],
        cwd=HERE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "AGENTIC_VIEWER_TOKEN": token},
    )
    try:
        deadline = time.monotonic() + 30
        anonymous: httpx.Response | None = None
        while anonymous is None and time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"agentic viewer exited {process.returncode}")
            with contextlib.suppress(httpx.TransportError):
                anonymous = httpx.get(f"{base}/api/runs", timeout=5)
            time.sleep(0.1)
        with_token = httpx.get(f"{base}/api/runs", headers=bearer, timeout=5)
        public_name = httpx.get(
            f"{base}/api/runs", headers={**bearer, "host": "runs.example.com"}, timeout=5
        )
        other_name = httpx.get(
            f"{base}/api/runs", headers={**bearer, "host": "evil.example"}, timeout=5
        )
        too_large = httpx.post(
            f"{base}/api/runs", json={"message": "x" * 300}, headers=bearer, timeout=5
        )
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        stop_process(process, 5)

    assert anonymous is not None
    assert anonymous.status_code == 401
    assert with_token.status_code == 200
    assert public_name.status_code == 200
    assert other_name.status_code == 421
    assert too_large.status_code == 413
    assert process.returncode == 0
    assert "AGENTIC_VIEWER_TOKEN" in out.decode()
    assert token not in out.decode() + err.decode()
