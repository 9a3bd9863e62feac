"""A ChatAgent with its threads in Redis (``StateStoreMessageStore(RedisStateStore)``) and its
long-term memory in Qdrant (``VectorMemoryProvider``) remembers a user's fact across processes."""

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

CHILD = Path(__file__).with_name("memory_across_processes_child.py")


def turn(redis_url: str, prefix: str, qdrant_dir: Path, thread_id: str, text: str) -> Any:
    done = subprocess.run(
        [sys.executable, str(CHILD), redis_url, prefix, str(qdrant_dir), thread_id, text],
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_fact_told_in_one_process_is_remembered_in_the_next(
    redis_server: str, tmp_path: Path
) -> None:
    prefix, qdrant_dir = f"mem-{uuid.uuid4().hex}", tmp_path / "qdrant"

    first = turn(redis_server, prefix, qdrant_dir, "t1", "Hello, I live in Lisbon.")
    same_thread = turn(redis_server, prefix, qdrant_dir, "t1", "Where do I live?")
    new_thread = turn(redis_server, prefix, qdrant_dir, "t2", "Remind me where I live?")

    assert first == {"reply": "I don't know yet.", "messages": 2}
    assert same_thread["messages"] == 4  # the thread's history came back from Redis
    assert "I live in Lisbon" in same_thread["reply"]
    assert new_thread["messages"] == 2  # a new thread, yet the memory came back from Qdrant
    assert "I live in Lisbon" in new_thread["reply"]
