"""A coordinator process for the crash and human-in-the-loop tests.

``python coordinator_child.py URL GRAPH run [--input JSON] [--wait S]`` starts a run with
``NatsRuntime.run`` (``--form workflow-run``: ``workflow.run(..., runtime=runtime)``;
``--form workflow-run-stream``: ``workflow.run_stream(..., runtime=runtime)``, printing
``OUTPUT <json>`` per output); ``... URL GRAPH resume RUN_ID [--answer REQUEST_ID=JSON]``
continues one. Prints
``PENDING <run_id> <request_id>`` per request a paused run waits on, ``DONE <run_id> <status>``
at the end, ``FENCED`` (exit 3) when another coordinator took the run over; the runtime's
``run_claimed`` log line names the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bus_graphs import build

from agentic_bus import CoordinatorFencedError, NatsRuntime, PoolSettings
from agentic_core import (
    RequestInfoEvent,
    Workflow,
    WorkflowCompletedEvent,
    WorkflowOutputEvent,
    WorkflowRunResult,
    WorkflowRunState,
    WorkflowStartedEvent,
)


@dataclass
class Streamed:
    """How a streamed run ended (what the end of ``main`` prints)."""

    run_id: str = ""
    status: WorkflowRunState = WorkflowRunState.FAILED
    pending_requests: list[RequestInfoEvent] = field(default_factory=list[RequestInfoEvent])


async def streamed(workflow: Workflow, message: object, runtime: NatsRuntime) -> Streamed:
    """``workflow.run_stream`` on the runtime, each output printed as it comes."""
    ended = Streamed()
    async for event in workflow.run_stream(message, runtime=runtime):
        if isinstance(event, WorkflowStartedEvent):
            ended.run_id = event.run_id
        elif isinstance(event, WorkflowOutputEvent):
            print(f"OUTPUT {json.dumps(event.data)}", flush=True)
        elif isinstance(event, RequestInfoEvent):
            ended.pending_requests.append(event)
        elif isinstance(event, WorkflowCompletedEvent):
            ended.status = event.status
    return ended


async def main(args: argparse.Namespace) -> int:
    workflow = build(args.graph)
    async with NatsRuntime(
        args.url, settings=PoolSettings(ack_wait_s=1.0, max_deliver=3), worker_wait_s=10
    ) as runtime:
        try:
            message = json.loads(args.input)
            result: WorkflowRunResult | Streamed
            if args.mode == "run" and args.form == "workflow-run":
                result = await workflow.run(message, runtime=runtime)
            elif args.mode == "run" and args.form == "workflow-run-stream":
                result = await streamed(workflow, message, runtime)
            elif args.mode == "run":
                result = await runtime.run(workflow, message, wait_for_responses_s=args.wait)
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
    parser.add_argument(
        "--form", choices=["runtime-run", "workflow-run", "workflow-run-stream"],
        default="runtime-run",
    )  # fmt: skip
    sys.exit(asyncio.run(main(parser.parse_args())))
