"""``agentic viewer``: the run viewer (a web page of runs, live) on 127.0.0.1.

Runs come from a checkpoint directory, a store URL (``redis://``, ``nats://``) and NATS events;
``--workflow`` (``MODULE:FACTORY`` or a run's TOML file) lets the page draw their graphs, start
runs and answer their pending requests. Serves until Ctrl-C (exit 0). The token comes from an
environment variable (``$AGENTIC_VIEWER_TOKEN``, or ``--token-env``), never from the command
line, where other users of the machine could read it.
"""

from __future__ import annotations

import os
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import typer
from rich.console import Console

from agentic_core import ServerGuard, ServerGuardError, Workflow
from agentic_orchestrator._cli._build import ModelPool, build_workflow
from agentic_orchestrator._cli._config import load_run_config
from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._cli._graph import load_workflow
from agentic_orchestrator._cli._run import _load_local_models, _open_mcp  # pyright: ignore[reportPrivateUsage]
from agentic_orchestrator._viewer._errors import ViewerError
from agentic_orchestrator._viewer._extra import require_viewer_extra
from agentic_orchestrator._viewer._run_viewer import RunViewer, StoreSpec

__all__ = ["TOKEN_VARIABLE", "ViewerOptions", "serve_viewer"]

TOKEN_VARIABLE = "AGENTIC_VIEWER_TOKEN"  # noqa: S105 - the name of a variable, not a secret
"""Where ``agentic viewer`` reads its token unless ``--token-env`` names another variable."""


@dataclass(frozen=True)
class ViewerOptions:
    """The command line of one ``agentic viewer``."""

    checkpoint_dir: Path | None = None
    store: str | None = None
    nats: str | None = None
    workflows: list[str] = field(default_factory=list[str])
    host: str = "127.0.0.1"
    port: int = 8765
    allowed_hosts: list[str] = field(default_factory=list[str])
    max_body_bytes: int = ServerGuard.DEFAULT_MAX_BODY_BYTES
    token_env: str | None = None
    """The variable holding the token (None: ``$AGENTIC_VIEWER_TOKEN`` if set)."""


async def serve_viewer(options: ViewerOptions, console: Console) -> int:
    """Build the viewer ``options`` describe, print its URL and serve until cancelled."""
    try:
        require_viewer_extra()
    except ViewerError as exc:
        raise UsageError(str(exc)) from None
    variable = options.token_env or TOKEN_VARIABLE
    token = os.environ.get(variable) or None
    if token is None and options.token_env is not None:
        raise UsageError(f"--token-env {variable}: ${variable} is not set")
    try:  # before loading workflows (which may start MCP servers): the address is checked now
        guard = ServerGuard(_unserved, token=token, allowed_hosts=options.allowed_hosts)
        guard.check_bind(options.host, option=f"${variable}")
    except ServerGuardError as exc:
        raise UsageError(f"--host {options.host}: {exc}") from None
    stores: list[StoreSpec] = []
    if options.checkpoint_dir is not None:
        # A new directory is fine (as with `agentic run`): the runs started here are saved there.
        if options.checkpoint_dir.exists() and not options.checkpoint_dir.is_dir():
            raise UsageError(f"--checkpoint-dir {options.checkpoint_dir} is not a directory")
        stores.append(options.checkpoint_dir)
    if options.store:
        stores.append(options.store)
    if options.nats and not any(str(s).startswith("nats://") for s in stores):
        stores.append(options.nats)  # runs listed from the NATS KV checkpoints, followed live
    async with AsyncExitStack() as stack:
        workflows = [await _workflow(reference, stack, console) for reference in options.workflows]
        try:
            viewer = RunViewer(
                workflows,
                checkpoint_store=stores,
                nats_url=options.nats,
                allowed_hosts=options.allowed_hosts,
                token=token,
                max_body_bytes=options.max_body_bytes,
            )
        except ViewerError as exc:
            raise UsageError(str(exc)) from None
        url = f"http://{_url_host(options.host)}:{options.port}/"
        login = f"; token from ${variable}" if token else ""
        typer.echo(f"agentic viewer: {url}  (Ctrl-C stops it{login})")
        await viewer.serve(host=options.host, port=options.port)
    return 0


async def _unserved(*_: object) -> None:
    """The app of the guard that only checks the address (it never serves)."""


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


async def _workflow(reference: str, stack: AsyncExitStack, console: Console) -> Workflow:
    """``MODULE:FACTORY``, or a run's TOML file built as ``agentic run`` builds it."""
    if not reference.endswith(".toml"):
        return load_workflow(reference)
    loaded = load_run_config(reference)  # a missing file: ConfigError naming it
    models = ModelPool(loaded)
    tools = await _open_mcp(loaded, stack, console, quiet=True)
    workflow = build_workflow(loaded, models, tools)
    await _load_local_models(models, console, quiet=True)
    return workflow
