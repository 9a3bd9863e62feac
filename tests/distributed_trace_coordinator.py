"""The coordinator process of the distributed-trace test.

``python distributed_trace_coordinator.py NATS_URL`` (with ``AGENTIC_TRACE_FILE`` set) runs the
``distributed_trace_graph`` workflow on ``NatsRuntime`` inside a span ``distributed run``, its
tasks going to the worker processes, then prints ``DONE <outputs as JSON>``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from distributed_trace_graph import PROVIDER, build
from opentelemetry import trace

from agentic_bus import NatsRuntime


async def main(url: str) -> int:
    if PROVIDER is None:
        print("AGENTIC_TRACE_FILE is not set", file=sys.stderr)
        return 2
    workflow = build()
    async with NatsRuntime(url, worker_wait_s=30) as runtime:
        with trace.get_tracer("distributed-trace-test").start_as_current_span("distributed run"):
            result = await workflow.run("hello", runtime=runtime)
    PROVIDER.shutdown()
    print(f"DONE {json.dumps(result.get_outputs())}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1])))
