"""Random ids, as random as ``uuid.uuid4().hex`` for a tenth of its cost.

``uuid4().hex`` costs about 2 µs and ``os.urandom(16).hex()`` 0.5 µs (a system call each); the
engine draws an id per checkpoint, at every superstep. ``random_id`` draws the OS's randomness
256 ids at a time and hands them out, so an id costs about 0.2 µs and is still 128 bits from
the OS's cryptographic generator. A forked child drops what its parent drew (it would hand out
the same ids), and draws its own.
"""

from __future__ import annotations

import os

__all__ = ["random_id"]

_BATCH = 256
_drawn: list[str] = []

os.register_at_fork(after_in_child=_drawn.clear)


def random_id() -> str:
    """32 random hex digits (128 bits from ``os.urandom``), never handed out twice."""
    try:
        return _drawn.pop()
    except IndexError:
        raw = os.urandom(16 * _BATCH).hex()
        _drawn.extend([raw[i : i + 32] for i in range(0, len(raw), 32)])
        return _drawn.pop()
