"""Qdrant's on-disk local mode without the SQLite connection qdrant-client leaves open.

The first on-disk collection of a process makes qdrant-client ask SQLite whether it is
threadsafe, through an in-memory connection it never closes (``with sqlite3.connect(...)``
commits, it does not close). Python 3.13 reports that as ``ResourceWarning: unclosed
database`` when the connection is collected, which fails programs and suites that turn
warnings into errors. ``answer_threadsafety_probe`` asks the same question first, on a
connection it closes, and leaves the answer where qdrant-client looks for it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["answer_threadsafety_probe"]

_THREADSAFE_QUERY = "select * from pragma_compile_options where compile_options like 'THREADSAFE=%'"


def answer_threadsafety_probe() -> None:
    """Set qdrant-client's ``CollectionPersistence.CHECK_SAME_THREAD`` as it would (check
    the thread of a connection unless SQLite was built ``THREADSAFE=1``); a no-op once set,
    or when this qdrant-client has no such probe."""
    try:
        from qdrant_client.local.persistence import CollectionPersistence
    except ImportError:  # pragma: no cover - another qdrant-client layout
        return
    persistence: Any = CollectionPersistence
    if getattr(persistence, "CHECK_SAME_THREAD", False) is not None:
        return
    connection = sqlite3.connect(":memory:")
    try:
        row = connection.execute(_THREADSAFE_QUERY).fetchone()
    finally:
        connection.close()
    persistence.CHECK_SAME_THREAD = row is None or row[0] != "THREADSAFE=1"
