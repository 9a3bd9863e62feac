"""A coordinator process for the crash and human-in-the-loop tests.

``python coordinator_child.py URL GRAPH run [--input JSON] [--wait S]`` starts a run;
``... URL GRAPH resume RUN_ID [--answer REQUEST_ID=JSON]`` continues one. Prints
``PENDING <run_id> <request_id>`` per request a paused run waits on, ``DONE <run_id> <status>``
at the end, ``FENCED`` (exit 3) when another coordinator took the run over; the runtime's
``run_claimed`` log line names the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bus_graphs import build

from agentic_bus import CoordinatorFencedError, NatsRuntime, PoolSettings


async def main(args: argparse.Namespace) -> int:
    workflow = build(args.graph)
    async with NatsRuntime(
        args.url, settings=PoolSettings(ack_wait_s=1.0, max_deliver=3), worker_wait_s=10
    ) as runtime:
        try:
            if args.mode == "run":
                result = await runtime.run(
                    workflow, json.loads(args.input), wait_for_responses_s=args.wait
                )
            else:
                answers = {}
                for answer in args.answer:
                    request_id, _, value = answer.partition("=")
                    answers[request_id] = json.loads(value)
                result = await runtime.resume(workflow, args.run_id, responses=answers or None)
        except CoordinatorFencedError as exc:
            print(f"FENCED {exc}", flush=True)
            return 3
    for request in result.pending_requests:
        print(f"PENDING {result.run_id} {request.request_id}", flush=True)
    print(f"DONE {result.run_id} {result.status.value}", flush=True)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("graph")
    parser.add_argument("mode", choices=["run", "resume"])
    parser.add_argument("run_id", nargs="?")
    parser.add_argument("--input", default="1")
    parser.add_argument("--wait", type=float, default=None)
    parser.add_argument("--answer", action="append", default=[])
    sys.exit(asyncio.run(main(parser.parse_args())))
