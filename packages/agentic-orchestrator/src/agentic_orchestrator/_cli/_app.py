"""The ``agentic`` command: demo, run, graph, runs, viewer, serve, plus subcommands other
packages add."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Coroutine, Generator
from contextlib import contextmanager
from enum import StrEnum
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from rich.console import Console

from agentic_core import AgenticError, ServerGuard, configure_logging
from agentic_orchestrator._cli._errors import CLIError, ConfigError
from agentic_orchestrator._cli._graph import load_workflow, show_graph
from agentic_orchestrator._cli._plugins import command_names, load_command
from agentic_orchestrator._cli._run import (
    RunOptions,
    RunProgress,
    exit_code,
    resume_hint,
    run_config,
)
from agentic_orchestrator._cli._runs import list_runs, run_details, show_run, show_runs
from agentic_orchestrator._cli._serve._protocols import ProtocolName
from agentic_orchestrator._cli._serve_command import (
    DEFAULT_PORT,
    ServeOptions,
    serve_config,
)
from agentic_orchestrator._cli._serve_command import TOKEN_VARIABLE as SERVE_TOKEN_VARIABLE
from agentic_orchestrator._cli._viewer_command import TOKEN_VARIABLE, ViewerOptions, serve_viewer

__all__ = ["app", "main"]

LOG_LEVEL_VARIABLE = "AGENTIC_LOG_LEVEL"
_INTERRUPTED = 130
"""What a shell reports for a program ended by SIGINT (128 + 2)."""

app = typer.Typer(
    name="agentic",
    help="Run multi-agent workflows: a demo, TOML-configured runs, graphs and checkpoints.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _console() -> Console:
    # Made per command (not at import) so it writes to the stdout of the moment; Rich turns
    # colours and live regions off by itself when that is not a terminal.
    return Console(highlight=False)


def _errors() -> Console:
    return Console(stderr=True, soft_wrap=True, highlight=False)


@contextmanager
def _reported() -> Generator[None]:
    """Known failures become one line on stderr and an exit code, never a traceback."""
    try:
        yield
    except ConfigError as exc:
        _errors().print(str(exc), markup=False)
        raise typer.Exit(exc.exit_code) from None
    except CLIError as exc:
        _errors().print(f"agentic: {exc}", markup=False)
        raise typer.Exit(exc.exit_code) from None
    except AgenticError as exc:
        _errors().print(f"agentic: {type(exc).__name__}: {exc}", markup=False)
        raise typer.Exit(1) from None


def _run_async(coroutine: Coroutine[Any, Any, int], *, hint: Callable[[], str]) -> int:
    try:
        return asyncio.run(coroutine)
    except KeyboardInterrupt:
        _errors().print(hint(), markup=False)
        return _INTERRUPTED


def _show_version(value: bool) -> None:
    if value:
        try:
            number = version("agentic-orchestrator")
        except PackageNotFoundError:  # pragma: no cover - running from a bare source tree
            number = "unknown"
        typer.echo(f"agentic {number}")
        raise typer.Exit


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Run multi-agent workflows: a demo, TOML-configured runs, graphs and checkpoints."""


@app.command()
def demo(
    model: Annotated[
        str | None,
        typer.Option(help="Model spec (openai:gpt-4o-mini, local, ...); default: the best found."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the results.")] = False,
) -> None:
    """Run the offline multi-agent demo on the best model available."""
    with _reported():
        # Imported here: the demo pulls in the model registry and the sandbox.
        from agentic_orchestrator._cli._demo._run import run_demo

        code = _run_async(
            run_demo(console=_console(), model=model, quiet=quiet), hint=lambda: "interrupted"
        )
    raise typer.Exit(code)


@app.command()
def run(
    config: Annotated[Path, typer.Argument(help="The run's TOML file (agents, models, pattern).")],
    task: Annotated[str, typer.Argument(help="The task given to the workflow.")],
    checkpoint_dir: Annotated[
        Path | None, typer.Option(help="Save a checkpoint after every superstep here.")
    ] = None,
    resume: Annotated[
        str | None,
        typer.Option(metavar="RUN_ID", help="Resume this run from its last checkpoint."),
    ] = None,
    json_events: Annotated[
        bool, typer.Option("--json", help="Write one JSON line per event, nothing else.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the results.")] = False,
    runtime: Annotated[
        str | None,
        typer.Option(help="Run supersteps on workers: nats://HOST:PORT (needs agentic-bus)."),
    ] = None,
    max_supersteps: Annotated[
        int | None, typer.Option(min=1, help="Stop a run longer than this many supersteps.")
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="Use this model for every agent (a spec, or python:MODULE:FACTORY)."),
    ] = None,
) -> None:
    """Run the workflow CONFIG describes on TASK."""
    options = RunOptions(
        config=config,
        task=task,
        checkpoint_dir=checkpoint_dir,
        resume=resume,
        json_events=json_events,
        quiet=quiet,
        runtime=runtime,
        max_supersteps=max_supersteps,
        model=model,
    )
    progress = RunProgress()
    console = _console()

    async def go() -> int:
        result = await run_config(options, console, progress)
        code = exit_code(result)
        if code == 3:
            waiting = ", ".join(r.request_id for r in result.pending_requests)
            _errors().print(f"agentic: the run waits for answers to requests: {waiting}")
        return code

    with _reported():
        code = _run_async(go(), hint=lambda: resume_hint(options, progress))
    raise typer.Exit(code)


class _GraphFormat(StrEnum):
    MERMAID = "mermaid"
    TEXT = "text"


@app.command()
def graph(
    factory: Annotated[
        str, typer.Argument(metavar="MODULE:FACTORY", help="A Workflow, or a function making one.")
    ],
    fmt: Annotated[
        _GraphFormat, typer.Option("--format", help="mermaid (a flowchart) or text (a tree).")
    ] = _GraphFormat.MERMAID,
) -> None:
    """Print a workflow's graph."""
    with _reported():
        show_graph(_console(), load_workflow(factory), "mermaid" if fmt == "mermaid" else "text")


@app.command()
def runs(
    directory: Annotated[Path, typer.Argument(help="A --checkpoint-dir of agentic run.")],
    run_id: Annotated[
        str | None, typer.Option("--run", metavar="RUN_ID", help="Show one run in detail.")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """List the runs checkpointed in DIRECTORY."""
    console = _console()
    if not console.is_terminal:
        console.width = max(console.width, 132)  # run ids whole in a pipe or a log
    with _reported():
        if run_id is None:
            summaries = asyncio.run(list_runs(directory))
            if json_output:
                data = [s.model_dump(mode="json") for s in summaries]
                console.out(json.dumps(data, indent=2), highlight=False)
            else:
                show_runs(console, summaries)
            return
        summary, history = asyncio.run(run_details(directory, run_id))
        if json_output:
            data = {
                "run": summary.model_dump(mode="json"),
                "checkpoints": [m.model_dump(mode="json") for m in history],
            }
            console.out(json.dumps(data, indent=2), highlight=False)
        else:
            show_run(console, summary, history)


@app.command()
def viewer(
    checkpoint_dir: Annotated[
        Path | None, typer.Option(help="List the runs checkpointed in this directory.")
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(metavar="URL", help="List the runs of a checkpoint store: redis://, nats://."),
    ] = None,
    nats: Annotated[
        str | None,
        typer.Option(metavar="URL", help="Follow runs live from NATS events (needs agentic-bus)."),
    ] = None,
    workflow: Annotated[
        list[str] | None,
        typer.Option(
            metavar="MODULE:FACTORY|RUN.toml",
            help="A workflow to draw, start and resume (repeatable).",
        ),
    ] = None,
    host: Annotated[
        str, typer.Option(help="Address to serve on (other than loopback: needs a token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to serve on.")] = 8765,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="A host name to answer for besides loopback ones, e.g. behind a proxy "
            "(repeatable; *.example.com for subdomains).",
        ),
    ] = None,
    token_env: Annotated[
        str | None,
        typer.Option(
            metavar="VAR",
            help="The environment variable holding the token requests must carry "
            f"(default: {TOKEN_VARIABLE}, if set).",
        ),
    ] = None,
    max_body: Annotated[
        int,
        typer.Option(metavar="BYTES", min=1, help="The largest request body accepted."),
    ] = ServerGuard.DEFAULT_MAX_BODY_BYTES,
) -> None:
    """Serve the run viewer: runs, graphs, events and pending requests, live in a browser."""
    options = ViewerOptions(
        checkpoint_dir=checkpoint_dir,
        store=store,
        nats=nats,
        workflows=list(workflow or []),
        host=host,
        port=port,
        allowed_hosts=list(allow_host or []),
        max_body_bytes=max_body,
        token_env=token_env,
    )
    with _reported():
        # Ctrl-C is the way to stop it: a clean exit (0), not an interruption.
        code = _run_async(serve_viewer(options, _errors()), hint=lambda: "agentic viewer: stopped")
    raise typer.Exit(0 if code == _INTERRUPTED else code)


@app.command()
def serve(
    config: Annotated[Path, typer.Argument(help="The run's TOML file (agents, models, pattern).")],
    a2a: Annotated[
        bool, typer.Option("--a2a", help="Serve A2A at /a2a (needs the a2a extra of agentic-bus).")
    ] = False,
    mcp: Annotated[
        bool, typer.Option("--mcp", help="Serve MCP (streamable HTTP) at /mcp (needs agentic-mcp).")
    ] = False,
    openai: Annotated[
        bool, typer.Option("--openai", help="Serve the OpenAI-compatible endpoint at /v1.")
    ] = False,
    ui: Annotated[bool, typer.Option("--ui", help="Serve the run viewer at /ui/ too.")] = False,
    state: Annotated[
        str | None,
        typer.Option(metavar="URL", help="Keep A2A task state in redis://... or nats://..."),
    ] = None,
    host: Annotated[
        str, typer.Option(help="Address to serve on (other than loopback: needs a token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to serve on.")] = DEFAULT_PORT,
    token_env: Annotated[
        str | None,
        typer.Option(
            metavar="VAR",
            help="The environment variable holding the bearer token requests must carry "
            f"(default: {SERVE_TOKEN_VARIABLE}, if set).",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="A host name to answer for besides loopback ones, e.g. behind a proxy "
            "(repeatable; *.example.com for subdomains).",
        ),
    ] = None,
    max_body_bytes: Annotated[
        int,
        typer.Option(metavar="BYTES", min=1, help="The largest request body accepted."),
    ] = ServerGuard.DEFAULT_MAX_BODY_BYTES,
    model: Annotated[
        str | None,
        typer.Option(help="Use this model for every agent (a spec, or python:MODULE:FACTORY)."),
    ] = None,
) -> None:
    """Serve CONFIG's pattern and agents over OpenAI (/v1), MCP (/mcp) and A2A (/a2a).

    With no protocol flag, every installed protocol is served.
    """
    chosen = [name for name, on in (("openai", openai), ("mcp", mcp), ("a2a", a2a)) if on]
    options = ServeOptions(
        config=config,
        protocols=cast("list[ProtocolName]", chosen),
        ui=ui,
        state=state,
        host=host,
        port=port,
        allowed_hosts=list(allow_host or []),
        max_body_bytes=max_body_bytes,
        token_env=token_env,
        model=model,
    )
    with _reported():
        # Ctrl-C is the way to stop it: a clean exit (0), not an interruption.
        code = _run_async(serve_config(options, _errors()), hint=lambda: "agentic serve: stopped")
    raise typer.Exit(0 if code == _INTERRUPTED else code)


def _plugin_command(name: str) -> Callable[[typer.Context], None]:
    def command(ctx: typer.Context) -> None:
        with _reported():
            handler = load_command(name)
        raise typer.Exit(handler(list(ctx.args)))

    command.__doc__ = f"The {name!r} command of an installed package (its own --help)."
    return command


def _add_plugin_commands() -> None:
    taken = {"demo", "run", "graph", "runs", "viewer", "serve"}
    for name in command_names():
        if name in taken:
            continue  # a package cannot replace a built-in command
        app.command(
            name,
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
            add_help_option=False,
        )(_plugin_command(name))


_add_plugin_commands()


def main() -> None:
    """The ``agentic`` console script.

    Logs go to stderr at ``AGENTIC_LOG_LEVEL`` (default WARNING), so stdout holds only what a
    command prints (results, ``--json`` events). Configured here, not in ``app``, because
    logging is the program's to set up, not a library's (tests drive ``app`` in-process).
    """
    level = os.environ.get(LOG_LEVEL_VARIABLE, "").strip() or "WARNING"
    try:
        configure_logging(level=level)
    except ValueError:
        configure_logging(level="WARNING")
        _errors().print(f"agentic: {LOG_LEVEL_VARIABLE}={level!r} is no log level; using WARNING")
    app(prog_name="agentic")
