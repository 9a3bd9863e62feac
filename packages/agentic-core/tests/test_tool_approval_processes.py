"""A tool call waiting for approval outlives its process: one process runs the workflow until
the call waits, another (a new interpreter, a new Workflow) answers it from the checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("tool_approval_child.py")


def child(*args: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(CHILD), *args],
        capture_output=True,
        check=False,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_pending_approval_is_answered_by_another_process(tmp_path: Path) -> None:
    store = str(tmp_path / "checkpoints")
    asked = child("ask", store)
    assert asked["status"] == "idle_with_pending_requests"
    assert asked["request"] == {
        "call_id": "c1",
        "tool_name": "deploy",
        "arguments": {"service": "api", "version": "2.0"},
        "agent_name": "releaser",
    }
    assert asked["ran"] == []
    answer = {"approved": True, "arguments": {"service": "api", "version": "1.9"}}
    answered = child(
        "answer", store, asked["checkpoint_id"], asked["request_id"], json.dumps(answer)
    )
    assert answered == {
        "status": "completed",
        "outputs": ["tool said: deployed api 1.9"],
        "ran": [{"service": "api", "version": "1.9"}],
    }
