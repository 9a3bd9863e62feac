"""``agentic-worker [URL] MODULE:FACTORY``: a worker process for a workflow.

Also reachable as ``python -m agentic_bus worker ...`` and, once the ``agentic`` command is
installed, as ``agentic worker ...`` (entry point group ``agentic.commands``). The server is the
first argument or ``--nats URL``; ``MODULE:FACTORY`` is found as ``agentic graph`` finds it
(core's ``load_object``: the current directory first, so ``flows:build`` is ``./flows.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from agentic_bus._connect import DEFAULT_NATS_URL
from agentic_bus._pool import PoolSettings
from agentic_bus._worker import Worker
from agentic_core import (
    BusError,
    ObjectReferenceError,
    WorkflowGraph,
    configure_logging,
    load_object,
)

__all__ = ["load_factory", "main", "worker_command"]


def load_factory(spec: str) -> Any:
    """The object ``MODULE:NAME`` names (a workflow or a function building one), found as
    core's ``load_object`` finds it; a bad reference exits with its message."""
    try:
        return load_object(spec, what="workflow factory")
    except ObjectReferenceError as exc:
        raise SystemExit(str(exc)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentic-worker",
        description="Run executor invocations of a workflow taken from NATS JetStream.",
    )
    parser.add_argument(
        "url", nargs="?", default=None, metavar="URL",
        help=f"NATS server URL (or --nats; default {DEFAULT_NATS_URL})",
    )  # fmt: skip
    parser.add_argument("factory", help="MODULE:FACTORY returning the workflow (or the workflow)")
    parser.add_argument("--nats", default=None, help="NATS server URL (or the first argument)")
    parser.add_argument("--pool", default=None, help="pool to serve (default: the workflow's)")
    parser.add_argument("--build", default=None, help="build id (as NatsRuntime(build=...))")
    parser.add_argument("--slots", type=int, default=8, help="tasks run at once")
    parser.add_argument("--ack-wait", type=float, default=10.0, help="seconds (as coordinators)")
    parser.add_argument("--max-deliver", type=int, default=3, help="deliveries before poison")
    parser.add_argument("--worker-id", default=None)
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING, ERROR")
    parser.add_argument("--log-json", action="store_true", help="one JSON object per log line")
    parser.add_argument(
        "--stop-grace", type=float, default=30.0,
        help="seconds running tasks get to finish on SIGTERM before they go back to the queue",
    )  # fmt: skip
    return parser


async def _serve(args: argparse.Namespace) -> None:
    target = load_factory(args.factory)
    try:
        workflow: WorkflowGraph | Any = target if isinstance(target, WorkflowGraph) else target()
    except Exception as exc:  # noqa: BLE001 - the user's factory: say which and why, once
        raise SystemExit(f"{args.factory} failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(workflow, WorkflowGraph):
        raise SystemExit(f"{args.factory} did not give a workflow (got {type(workflow).__name__})")
    worker = Worker(
        workflow,
        args.servers,
        pool=args.pool,
        build=args.build,
        slots=args.slots,
        settings=PoolSettings(ack_wait_s=args.ack_wait, max_deliver=args.max_deliver),
        worker_id=args.worker_id,
        stop_grace_s=args.stop_grace,
    )
    worker.handle_signals()
    running = asyncio.create_task(worker.run())
    ready = asyncio.create_task(worker.wait_ready())
    await asyncio.wait({running, ready}, return_when=asyncio.FIRST_COMPLETED)
    if ready.done():
        sys.stdout.write(f"READY {worker.worker_id} pool={worker.pool}\n")  # the supervisor's cue
        sys.stdout.flush()
    else:
        ready.cancel()
    await running


def _servers(parser: argparse.ArgumentParser, url: str | None, option: str | None) -> str:
    """The server from ``URL`` or ``--nats`` (one of them, else the default)."""
    if url is not None and option is not None:
        parser.error(f"give the server once: {url!r} or --nats {option!r}")
    if url is not None and "://" not in url:
        parser.error(f"{url!r} is not a server URL (nats://host:port); usage: [URL] MODULE:FACTORY")
    return url or option or DEFAULT_NATS_URL


def worker_command(argv: Sequence[str] | None = None) -> int:
    """Run a worker until SIGTERM/SIGINT; the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    args.servers = _servers(parser, args.url, args.nats)
    try:
        configure_logging(json=args.log_json, level=args.log_level)  # logs on stderr
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    try:
        asyncio.run(_serve(args))
    except KeyboardInterrupt:
        return 130
    except BusError as exc:  # an unreachable server: one line, no traceback
        sys.stderr.write(f"agentic-worker: {exc}\n")
        return 1
    return 0


def main() -> None:
    """The ``agentic-worker`` console script."""
    sys.exit(worker_command(sys.argv[1:]))
