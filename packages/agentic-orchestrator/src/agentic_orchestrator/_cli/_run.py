"""``agentic run CONFIG.toml "task"``: build the configured workflow, run it, show it.

Ctrl-C cancels the run (``asyncio.run`` turns SIGINT into a cancellation of the main task): the
executors running are cancelled, the last checkpoint stays, and the command says how to resume.
"""

from __future__ import annotations

import builtins
import inspect
import os
import shlex
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from rich.console import Console

from agentic_core import (
    Checkpoint,
    CheckpointMetadata,
    CheckpointStore,
    FileCheckpointStore,
    RunDriver,
    Tool,
    WorkflowRunResult,
    WorkflowRunState,
)
from agentic_orchestrator._cli._build import ModelPool, build_workflow
from agentic_orchestrator._cli._config import LoadedConfig, describe_sources, load_run_config
from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._cli._live import run_live
from agentic_orchestrator._cli._plugins import open_runtime, open_tool_source

__all__ = ["RunOptions", "RunProgress", "exit_code", "resume_hint", "run_config"]


@dataclass(frozen=True)
class RunOptions:
    """The command line of one ``agentic run``."""

    config: Path
    task: str
    checkpoint_dir: Path | None = None
    resume: str | None = None
    json_events: bool = False
    quiet: bool = False
    runtime: str | None = None
    max_supersteps: int | None = None
    model: str | None = None


@dataclass
class RunProgress:
    """What an interrupted run leaves behind for the resume hint (filled while it runs)."""

    run_id: str | None = None
    checkpointed: bool = False
    on_runtime: bool = False
    """The run went to a durable runtime, which keeps its checkpoints itself."""
    notes: list[str] = field(default_factory=list[str])

    def started_on_runtime(self, run_id: str) -> None:
        """A run on a durable runtime started: it can be resumed by this id from now on."""
        self.run_id, self.on_runtime = run_id, True


async def run_config(
    options: RunOptions,
    console: Console,
    progress: RunProgress,
    *,
    environ: Mapping[str, str] = os.environ,
) -> WorkflowRunResult:
    """Load, build and run ``options.config``; raises ``ConfigError``/``UsageError`` first."""
    loaded = load_run_config(options.config)
    store = FileCheckpointStore(options.checkpoint_dir) if options.checkpoint_dir else None
    models = ModelPool(loaded, override=options.model, environ=environ)
    async with AsyncExitStack() as stack:
        run_kwargs: dict[str, Any] = {}
        runtime = None
        if options.runtime:
            runtime = open_runtime(options.runtime)
            stack.push_async_callback(_close, runtime)
            run_kwargs["runtime"] = runtime
        driven = isinstance(runtime, RunDriver)
        if driven and store is not None:
            # A durable runtime keeps (and fences) its own checkpoints; a second store would be
            # one it cannot resume from. Refuse, naming the call that is safe.
            raise UsageError(
                f"--checkpoint-dir cannot be used with --runtime {options.runtime}: runs there "
                "keep their checkpoints in the runtime's own store, resumable from any process; "
                f"drop --checkpoint-dir (resume with --runtime {options.runtime} --resume RUN_ID)"
            )
        if options.resume:
            where = await _runtime_store(runtime) if driven else store
            checkpoint_id = await _resume_point(options, where)
            progress.run_id, progress.checkpointed = options.resume, True
        else:
            checkpoint_id = None
        tools = await _open_mcp(loaded, stack, console, quiet=options.quiet or options.json_events)
        workflow = build_workflow(loaded, models, tools)
        await _load_local_models(models, console, quiet=options.quiet or options.json_events)
        if store is not None:
            run_kwargs["checkpoint_store"] = _RecordingStore(store, progress)
        elif driven:
            run_kwargs["on_run_id"] = progress.started_on_runtime
        if options.max_supersteps is not None:
            run_kwargs["max_supersteps"] = options.max_supersteps
        if checkpoint_id is not None:
            run_kwargs["checkpoint_id"] = checkpoint_id
        if not (options.quiet or options.json_events):
            console.print(f"model: {', '.join(models.labels)}", style="dim", markup=False)
        message = None if checkpoint_id is not None else options.task
        return await run_live(
            workflow,
            message,
            console=console,
            title=f"{loaded.config.name} ({loaded.config.pattern.type})",
            quiet=options.quiet,
            json_events=options.json_events,
            show_graph=checkpoint_id is None,
            **run_kwargs,
        )


class _RecordingStore:
    """The run's checkpoint store, noting which run saved: the resume hint names it."""

    def __init__(self, store: FileCheckpointStore, progress: RunProgress) -> None:
        self._store = store
        self._progress = progress

    async def save(self, checkpoint: Checkpoint) -> str:
        saved = await self._store.save(checkpoint)
        self._progress.run_id = checkpoint.run_id
        self._progress.checkpointed = True
        return saved

    async def load(self, checkpoint_id: str) -> Checkpoint | None:
        return await self._store.load(checkpoint_id)

    async def list(
        self, *, workflow_id: str | None = None, run_id: str | None = None
    ) -> builtins.list[CheckpointMetadata]:
        return await self._store.list(workflow_id=workflow_id, run_id=run_id)

    async def latest(self, run_id: str) -> Checkpoint | None:
        return await self._store.latest(run_id)

    async def delete(self, checkpoint_id: str) -> bool:
        return await self._store.delete(checkpoint_id)

    async def delete_all(self, run_id: str) -> int:
        return await self._store.delete_all(run_id)

    async def cleanup_keep_last(self, run_id: str, n: int) -> int:
        return await self._store.cleanup_keep_last(run_id, n)


async def _resume_point(options: RunOptions, store: CheckpointStore | None) -> str:
    run_id = options.resume or ""
    if store is None:
        raise UsageError("--resume needs --checkpoint-dir (the directory the run saved into)")
    latest = await store.latest(run_id)
    if latest is None:
        where = options.checkpoint_dir or f"the store of --runtime {options.runtime}"
        raise UsageError(
            f"--resume {run_id}: no checkpoint of that run in {where} (see: agentic runs DIR)"
        )
    return latest.id


async def _runtime_store(runtime: object) -> CheckpointStore | None:
    """The checkpoint store of a durable runtime (``NatsRuntime.checkpoint_store()``)."""
    store = getattr(runtime, "checkpoint_store", None)
    if not callable(store):
        return None
    found = store()
    return cast("CheckpointStore", await found if inspect.isawaitable(found) else found)


async def _open_mcp(
    loaded: LoadedConfig, stack: AsyncExitStack, console: Console, *, quiet: bool
) -> Mapping[str, Sequence[Tool]]:
    used = {
        tool.removeprefix("mcp:")
        for agent in loaded.config.agents
        for tool in agent.tools
        if tool.startswith("mcp:")
    }
    if not used:
        return {}
    source = open_tool_source("mcp")
    servers = describe_sources(loaded, used)
    with (
        console.status(f"connecting MCP servers: {', '.join(sorted(used))}")
        if _spin(console, quiet)
        else nullcontext()
    ):
        try:
            return await stack.enter_async_context(source(servers))
        except (UsageError, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - a server that cannot start: name it, no trace
            named = [name for name in sorted(used) if repr(name) in str(exc)]
            path = ("mcp", "servers", (named or sorted(used))[0])
            raise loaded.error(path, f"{type(exc).__name__}: {exc}") from None


async def _load_local_models(models: ModelPool, console: Console, *, quiet: bool) -> None:
    """Load in-process models now, under a spinner, rather than silently in the first step."""
    local = [c for c in models.clients if getattr(c, "provider", "") == "local"]
    if not local:
        return
    with console.status("loading the local model") if _spin(console, quiet) else nullcontext():
        for client in local:
            await client.health_check()


def _spin(console: Console, quiet: bool) -> bool:
    return console.is_terminal and not quiet


async def _close(runtime: object) -> None:
    close = getattr(runtime, "close", None)
    if callable(close):
        done = close()
        if inspect.isawaitable(done):
            await done


def resume_hint(options: RunOptions, progress: RunProgress) -> str:
    """What an interrupted run prints: the command resuming it, or why it cannot be resumed."""
    if options.checkpoint_dir is None and progress.on_runtime and progress.run_id is not None:
        command = ["agentic", "run", str(options.config), options.task]
        command += ["--runtime", options.runtime or "", "--resume", progress.run_id]
        return f"interrupted; resume with: {shlex.join(command)}"
    if options.checkpoint_dir is None and options.runtime and progress.run_id is None:
        return "interrupted before the run started; run the command again"
    if options.checkpoint_dir is None:
        return "interrupted; no checkpoints were kept (run with --checkpoint-dir DIR to resume)"
    if progress.run_id is None or not progress.checkpointed:
        return "interrupted before the first checkpoint; run the command again"
    command = [
        "agentic",
        "run",
        str(options.config),
        options.task,
        "--checkpoint-dir",
        str(options.checkpoint_dir),
        "--resume",
        progress.run_id,
    ]
    return f"interrupted; resume with: {shlex.join(command)}"


def exit_code(result: WorkflowRunResult) -> int:
    """0 completed, 1 failed or cancelled, 3 waiting for input (answers cannot be given here)."""
    if result.status is WorkflowRunState.COMPLETED:
        return 0
    if result.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS:
        return 3
    return 1
