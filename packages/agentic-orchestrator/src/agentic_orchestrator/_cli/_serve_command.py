"""``agentic serve CONFIG.toml``: a run file's pattern and agents served over HTTP protocols.

One process, one ``host:port``, one path per protocol: the OpenAI-compatible endpoint at
``/v1``, MCP (streamable HTTP) at ``/mcp``, A2A at ``/a2a`` with its agent card at
``/.well-known/agent-card.json``, and with ``--ui`` the run viewer at ``/ui/``. The workflow is
built as ``agentic run`` builds it (``load_run_config``, ``ModelPool``, ``build_workflow``, the
run file's MCP tools opened for the server's life); the pattern is served under the run's
``name``, each agent under its own.

Every app is behind a ``ServerGuard`` with the same settings: loopback names, the bound address
and ``--allow-host`` names only (421 otherwise), JSON writes, ``--max-body-bytes``, and the
bearer token read from ``--token-env VAR`` (default ``$AGENTIC_SERVE_TOKEN``, if set), never
from the command line; an address other than loopback is refused before serving without one.
Each request is an OpenTelemetry span continuing the caller's ``traceparent`` and a
``serve.request`` log line. Serves until Ctrl-C (exit 0).
"""

from __future__ import annotations

import contextlib
import errno
import inspect
import os
import socket
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import structlog
import typer
from rich.console import Console

from agentic_core import Agent, ServerGuard, ServerGuardError, Workflow, serve_asgi
from agentic_orchestrator._cli._build import ModelPool, build_agents, build_workflow
from agentic_orchestrator._cli._config import load_run_config
from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._cli._run import _load_local_models, _open_mcp  # pyright: ignore[reportPrivateUsage]
from agentic_orchestrator._cli._serve._mounts import Mount, ServedApps
from agentic_orchestrator._cli._serve._protocols import (
    AGENT_CARD_PATH,
    PREFIXES,
    Guarding,
    ProtocolName,
    installed_protocols,
    open_state_store,
    protocol_mount,
)
from agentic_orchestrator._cli._serve._tracing import RequestTracing

if TYPE_CHECKING:
    from agentic_core import StateStore

__all__ = ["DEFAULT_PORT", "TOKEN_VARIABLE", "ServeOptions", "serve_config"]

TOKEN_VARIABLE = "AGENTIC_SERVE_TOKEN"  # noqa: S105 - the name of a variable, not a secret
"""Where ``agentic serve`` reads its token unless ``--token-env`` names another variable."""
DEFAULT_PORT = 8000

_LABELS = {"openai": "OpenAI", "mcp": "MCP", "a2a": "A2A", "ui": "viewer"}
_WILDCARDS = frozenset({"0.0.0.0", "::", "[::]", ""})  # noqa: S104 - names, not a bind

_log = structlog.get_logger("agentic_orchestrator.serve")


@dataclass(frozen=True)
class ServeOptions:
    """The command line of one ``agentic serve``."""

    config: Path
    protocols: Sequence[ProtocolName] = ()
    """The protocols asked for (none: every one installed)."""
    ui: bool = False
    state: str | None = None
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    allowed_hosts: list[str] = field(default_factory=list[str])
    max_body_bytes: int = ServerGuard.DEFAULT_MAX_BODY_BYTES
    token_env: str | None = None
    """The variable holding the token (None: ``$AGENTIC_SERVE_TOKEN`` if set)."""
    model: str | None = None
    """``--model``: one model for every agent, as with ``agentic run``."""


async def serve_config(options: ServeOptions, console: Console) -> int:
    """Build what ``options`` describe, print the URLs served and serve until cancelled.

    Everything the command line can get wrong is refused before anything starts: the token
    variable, the address (beyond loopback only with a token), the protocols, the state URL,
    the run file, the port.

    Raises:
        UsageError: a wrong option, a protocol not installed, a busy port (exit code 2).
        ConfigError: the run file is wrong.
    """
    variable = options.token_env or TOKEN_VARIABLE
    token = os.environ.get(variable) or None
    if token is None and options.token_env is not None:
        raise UsageError(f"--token-env {variable}: ${variable} is not set")
    guarding = _guarding(options, token, variable)
    protocols = _protocols(options)
    if options.state and "a2a" not in protocols:
        raise UsageError(
            "--state keeps A2A tasks: it needs A2A served (--a2a; pip install 'agentic-bus[a2a]')"
        )
    _check_port(options.host, options.port)
    loaded = load_run_config(options.config)  # a missing or wrong file: ConfigError naming it
    models = ModelPool(loaded, override=options.model)
    base = f"http://{_url_host(_public_host(options))}:{options.port}"
    async with AsyncExitStack() as stack:
        tools = await _open_mcp(loaded, stack, console, quiet=True)
        workflow = build_workflow(loaded, models, tools)
        targets = _targets(workflow, build_agents(loaded, models, tools))
        await _load_local_models(models, console, quiet=True)
        state_store: StateStore | None = None
        if options.state:
            state_store = open_state_store(options.state)
            stack.push_async_callback(_close, state_store)
        mounts = [
            protocol_mount(p, targets, workflow, guarding, public_url=base, state_store=state_store)
            for p in protocols
        ]
        for mount in mounts:
            if mount.close is not None:
                stack.push_async_callback(mount.close)  # after serving, before the state store
        if options.ui:
            mounts.append(_viewer_mount(workflow, guarding, stack))
        served = ServedApps(
            mounts,
            token=guarding.token,
            allowed_hosts=guarding.allowed_hosts,
            max_body_bytes=guarding.max_body_bytes,
        )
        app = RequestTracing(served, {m.prefix: m.name for m in mounts})
        await stack.enter_async_context(served.lifespan())
        _announce(options, loaded.config.name, list(targets), mounts, base, token, variable)
        await serve_asgi(app, host=options.host, port=options.port)
    return 0


def _guarding(options: ServeOptions, token: str | None, variable: str) -> Guarding:
    """The guards' settings, checked now: the address, the token, the host names."""
    try:
        guard = ServerGuard(
            _unserved,
            token=token,
            allowed_hosts=options.allowed_hosts,
            max_body_bytes=options.max_body_bytes,
        )
        guard.check_bind(options.host, option=f"--token-env VAR, or ${variable}")
    except ServerGuardError as exc:
        raise UsageError(f"--host {options.host}: {exc}") from None
    return Guarding(token, tuple(options.allowed_hosts), options.max_body_bytes)


def _protocols(options: ServeOptions) -> list[ProtocolName]:
    if options.protocols:
        return list(dict.fromkeys(options.protocols))
    found = installed_protocols()
    if not found and not options.ui:
        raise UsageError(
            "no protocol to serve is installed: pip install 'agentic-orchestrator[viewer]' "
            "(OpenAI), 'agentic-orchestrator[mcp]' (MCP) or 'agentic-bus[a2a]' (A2A)"
        )
    return found


def _targets(workflow: Workflow, agents: Mapping[str, Agent]) -> dict[str, Workflow | Agent]:
    """The pattern under the run's name, then each agent under its own (an agent named as the
    run is left out: the name is the pattern's)."""
    targets: dict[str, Workflow | Agent] = {workflow.name: workflow}
    for name, agent in agents.items():
        if name in targets:
            _log.warning("serve.agent_hidden", agent=name, reason="the run has the same name")
            continue
        targets[name] = agent
    return targets


def _viewer_mount(workflow: Workflow, guarding: Guarding, stack: AsyncExitStack) -> Mount:
    """The run viewer of ``workflow`` (draw it, start and follow runs), closed with ``stack``."""
    from agentic_orchestrator._viewer._errors import ViewerError
    from agentic_orchestrator._viewer._run_viewer import RunViewer

    try:
        viewer = RunViewer(
            [workflow],
            token=guarding.token,
            allowed_hosts=guarding.allowed_hosts,
            max_body_bytes=guarding.max_body_bytes,
        )
        app = viewer.app  # ViewerError when the viewer's extra is missing
    except ViewerError as exc:
        raise UsageError(f"--ui: {exc}") from None
    stack.push_async_callback(viewer.aclose)
    return Mount("ui", PREFIXES["ui"], app, strip=True)


def _check_port(host: str, port: int) -> None:
    """Refuse a port in use now, in one line (uvicorn would log and exit)."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    with contextlib.closing(socket.socket(family, socket.SOCK_STREAM)) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            reason = "in use" if exc.errno == errno.EADDRINUSE else exc.strerror or str(exc)
            raise UsageError(
                f"--host {host} --port {port}: cannot serve there ({reason})"
            ) from None


def _public_host(options: ServeOptions) -> str:
    """The host clients use in URLs: the bound one, or for a wildcard address the first
    ``--allow-host`` name (a client's ``Host`` must be one the guard answers for)."""
    if options.host.strip() not in _WILDCARDS:
        return options.host
    named = [h for h in options.allowed_hosts if "*" not in h]
    return named[0] if named else options.host


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _announce(
    options: ServeOptions,
    name: str,
    served: list[str],
    mounts: list[Mount],
    base: str,
    token: str | None,
    variable: str,
) -> None:
    """Print what is served where (the token never: only the variable it comes from)."""
    login = f"; token from ${variable}" if token else ""
    typer.echo(f"agentic serve: {', '.join(served)} on {base}  (Ctrl-C stops it{login})")
    urls: dict[str, str] = {}
    for mount in mounts:
        url = f"{base}{mount.prefix}" + ("/" if mount.name == "ui" else "")
        urls[mount.name] = url
        extra = f"  (agent card: {base}{AGENT_CARD_PATH})" if mount.name == "a2a" else ""
        typer.echo(f"  {_LABELS[mount.name]:<7} {url}{extra}")
    _log.info(
        "serve.started",
        run=name,
        targets=served,
        urls=urls,
        host=options.host,
        port=options.port,
        token_required=token is not None,
        durable_state=options.state is not None,
    )


async def _unserved(*_: object) -> None:
    """The app of the guard that only checks the options (it never serves)."""


async def _close(store: object) -> None:
    for name in ("aclose", "close"):
        close = getattr(store, name, None)
        if callable(close):
            done = close()
            if inspect.isawaitable(done):
                await done
            return
