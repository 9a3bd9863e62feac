"""A workflow checkpointed to a real Redis, its process SIGKILLed mid-superstep, resumed from
Redis in a fresh process: the outputs are exactly those of an uninterrupted run, none twice."""

import json
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

CHILD = Path(__file__).with_name("redis_crash_child.py")


def run_child(*args: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = subprocess.run(
        [sys.executable, str(CHILD), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, events, proc.stderr


def outputs(events: list[dict[str, Any]]) -> list[Any]:
    return [e["data"] for e in events if e["event"] == "output"]


@pytest.mark.parametrize("crash_round", [0, 3, 5])
def test_a_run_killed_mid_superstep_resumes_from_redis_with_identical_outputs(
    redis_server: str, crash_round: int
) -> None:
    prefix = f"crash-{uuid.uuid4().hex}"
    code, whole, err = run_child("run", redis_server, prefix + "-whole")
    assert code == 0, err
    expected = outputs(whole)
    assert len(expected) == 7  # six round reports and the history

    code, killed, err = run_child("run", redis_server, prefix, str(crash_round))
    assert code == -signal.SIGKILL, err
    run_id = next(e["run_id"] for e in killed if e["event"] == "started")
    assert not any(e["event"] == "done" for e in killed)

    code, resumed, err = run_child("resume", redis_server, prefix, run_id)
    assert code == 0, err
    start = next(e for e in resumed if e["event"] == "resumed")
    before = outputs(killed)[: start["outputs_so_far"]]

    assert before + outputs(resumed) == expected
    assert outputs(killed) == expected[: len(outputs(killed))]
    assert resumed[-1]["event"] == "done"
