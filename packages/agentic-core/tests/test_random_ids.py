"""``random_id``: 32 hex digits from the OS's randomness, drawn in batches, never repeated, and
never the parent's in a forked child."""

from __future__ import annotations

import os
import sys

import pytest

from agentic_core._random_ids import random_id


def test_ids_are_32_hex_digits_and_never_repeat() -> None:
    drawn = [random_id() for _ in range(2_000)]  # several batches

    assert all(len(i) == 32 and int(i, 16) >= 0 for i in drawn)
    assert len(set(drawn)) == len(drawn)


@pytest.mark.skipif(sys.platform == "win32", reason="os.fork")
def test_a_forked_child_draws_ids_of_its_own() -> None:
    random_id()  # the batch is drawn: parent and child both hold the rest of it
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its next id, and leave at once
        os.write(write, random_id().encode())
        os._exit(0)
    os.close(write)
    child_id = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)

    assert len(child_id) == 32
    assert child_id != random_id()
