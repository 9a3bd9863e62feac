"""On-disk Qdrant leaves no SQLite connection open once the store is closed.

qdrant-client probes SQLite's thread safety once per process through a connection it never
closes (Python 3.13 warns about it: ``ResourceWarning: unclosed database``); the store answers
that probe first. The probe is once per process, so the check runs in a fresh one, recording
every SQLite connection made and trying each after ``close()``.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

_SCRIPT = textwrap.dedent(
    """
    import asyncio, sqlite3, sys

    made = []
    connect = sqlite3.connect

    def recording(*args, **kwargs):
        connection = connect(*args, **kwargs)
        made.append((args[0] if args else kwargs.get("database"), connection))
        return connection

    sqlite3.connect = recording

    from qdrant_client.local.persistence import CollectionPersistence

    from agentic_core import VectorPoint
    from agentic_storage import QdrantVectorStore

    async def main():
        async with QdrantVectorStore(sys.argv[1]) as store:
            await store.create_collection("docs", 2)
            await store.upsert("docs", [VectorPoint(id="a", vector=[1.0, 0.0])])
            assert [hit.id for hit in await store.search("docs", [1.0, 0.0])] == ["a"]

    asyncio.run(main())
    left_open = []
    for database, connection in made:
        try:
            connection.execute("select 1")
        except sqlite3.ProgrammingError:  # closed
            continue
        left_open.append(str(database))
    assert made, "no SQLite connection was made: is the store on disk?"
    assert not left_open, f"SQLite connections left open: {left_open}"
    assert CollectionPersistence.CHECK_SAME_THREAD is not None
    print("ok")
    """
)


def test_an_on_disk_store_leaves_no_sqlite_connection_open(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", _SCRIPT, str(tmp_path / "qdrant")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
