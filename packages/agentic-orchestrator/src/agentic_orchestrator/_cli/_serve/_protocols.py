"""The protocols' apps: the OpenAI endpoint of this package, MCP and A2A through entry points.

agentic-orchestrator never imports a sibling: MCP is agentic-mcp's ``mcp`` entry of the
``agentic.servers`` group, A2A agentic-bus's ``a2a`` entry, and ``--state URL`` a core
``StateStore`` from the ``agentic.state_stores`` group (``redis://`` agentic-storage,
``nats://`` agentic-bus). The entries' contracts:

- ``mcp(targets, *, token, allowed_hosts, max_body_bytes, path)``: an ASGI app serving every
  target as an MCP tool over streamable HTTP at ``path`` (its lifespan must run);
- ``a2a(target, *, state_store, token, allowed_hosts, max_body_bytes, url)``: an ASGI app
  serving one target over A2A at its root, its agent card at
  ``/.well-known/agent-card.json`` (readable without the token), ``url`` in the card.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from agentic_core import Agent, StateStore, Workflow
from agentic_core.registry import RegistryError, available, load
from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._cli._plugins import build_from_url
from agentic_orchestrator._cli._serve._lifespan import ASGIApp
from agentic_orchestrator._cli._serve._mounts import Mount

__all__ = [
    "AGENT_CARD_PATH",
    "PREFIXES",
    "PROTOCOLS",
    "Guarding",
    "ProtocolName",
    "installed_protocols",
    "open_state_store",
    "protocol_mount",
]

ProtocolName = Literal["openai", "mcp", "a2a"]
PROTOCOLS: tuple[ProtocolName, ...] = ("openai", "mcp", "a2a")
SERVERS = "agentic.servers"
STATE_STORES = "agentic.state_stores"
PREFIXES: dict[str, str] = {"openai": "/v1", "mcp": "/mcp", "a2a": "/a2a", "ui": "/ui"}
AGENT_CARD_PATH = "/.well-known/agent-card.json"
_EXTRAS = {
    "openai": "agentic-orchestrator[viewer]",
    "mcp": "agentic-orchestrator[mcp]",
    "a2a": "agentic-bus[a2a]",
    "redis": "agentic-storage",
    "nats": "agentic-bus",
}
_SCHEMES = {"rediss": "redis", "unix": "redis", "tls": "nats"}

Target = Agent | Workflow


@dataclass(frozen=True)
class Guarding:
    """What every app's ``ServerGuard`` is given: one token, one host list, one body limit."""

    token: str | None
    allowed_hosts: tuple[str, ...]
    max_body_bytes: int

    def __repr__(self) -> str:  # the token is never shown
        token = "set" if self.token else "none"
        return f"Guarding(token={token}, allowed_hosts={list(self.allowed_hosts)})"


def installed_protocols() -> list[ProtocolName]:
    """The protocols this installation can serve (``agentic serve`` without a protocol flag)."""
    found: list[ProtocolName] = []
    if importlib.util.find_spec("starlette") is not None:
        found.append("openai")
    registered = set(available(SERVERS))
    found.extend(p for p in ("mcp", "a2a") if p in registered and _loadable(p))
    return found


def _loadable(protocol: str) -> bool:
    """Whether the ``agentic.servers`` entry loads (agentic-bus without its ``[a2a]`` extra
    registers ``a2a`` but cannot serve it)."""
    try:
        load(SERVERS, protocol)  # imports the SDK it serves on: an ImportError says no
    except RegistryError:
        return False
    return True


def protocol_mount(
    protocol: ProtocolName,
    targets: Mapping[str, Target],
    main: Workflow,
    guarding: Guarding,
    *,
    public_url: str,
    state_store: StateStore | None = None,
) -> Mount:
    """The mounted app serving ``targets`` (A2A: ``main`` only) over ``protocol``.

    ``public_url`` is the server's base URL as clients reach it (``http://host:port``).

    Raises:
        UsageError: the protocol is not installed, or its app refuses the targets or options.
    """
    try:
        if protocol == "openai":
            from agentic_orchestrator._openai._app import create_openai_app

            app: Any = create_openai_app(
                targets,
                token=guarding.token,
                allowed_hosts=guarding.allowed_hosts,
                max_body_bytes=guarding.max_body_bytes,
            )
            return Mount("openai", PREFIXES["openai"], cast("ASGIApp", app))
        factory = _server_factory(protocol)
        if protocol == "mcp":
            app = factory(
                list(targets.values()),
                token=guarding.token,
                allowed_hosts=guarding.allowed_hosts,
                max_body_bytes=guarding.max_body_bytes,
                path=PREFIXES["mcp"],
            )
            return Mount("mcp", PREFIXES["mcp"], cast("ASGIApp", app))
        app = factory(
            main,
            state_store=state_store,
            token=guarding.token,
            allowed_hosts=guarding.allowed_hosts,
            max_body_bytes=guarding.max_body_bytes,
            url=f"{public_url}{PREFIXES['a2a']}",
        )
        return Mount(
            "a2a",
            PREFIXES["a2a"],
            cast("ASGIApp", app),
            strip=True,
            root_paths=(AGENT_CARD_PATH,),
            close=_closer(app),
        )
    except UsageError:
        raise
    except Exception as exc:  # noqa: BLE001 - any package's refusal: one line, no traceback
        raise UsageError(f"--{protocol}: {type(exc).__name__}: {exc}") from None


def _closer(app: object) -> Callable[[], Awaitable[None]] | None:
    """How to stop the work an app runs beyond its requests: its ``aclose()``, or its request
    handler's (``A2AApp.handler``: the A2A tasks still running)."""
    for owner in (app, getattr(app, "handler", None)):
        close = getattr(owner, "aclose", None)
        if callable(close):
            return cast("Callable[[], Awaitable[None]]", close)
    return None


def _server_factory(protocol: str) -> Callable[..., Any]:
    try:
        return cast("Callable[..., Any]", load(SERVERS, protocol))
    except RegistryError as exc:
        if protocol in available(SERVERS):  # registered, but it does not load
            raise UsageError(f"--{protocol}: {exc}") from None
        raise UsageError(
            f"--{protocol}: serving {protocol.upper()} needs the package providing it; "
            f"pip install '{_EXTRAS[protocol]}'"
        ) from None


def open_state_store(url: str) -> StateStore:
    """The core ``StateStore`` ``url`` names, from the installed ``agentic.state_stores``.

    Raises:
        UsageError: not a URL, no store installed for its scheme, or the store refuses it
            (every message shows the URL with its credentials masked).
    """
    return build_from_url(
        STATE_STORES,
        url,
        option="--state",
        kind="state store",
        protocol=StateStore,
        example="redis://127.0.0.1:6379/0 or nats://127.0.0.1:4222",
        aliases=_SCHEMES,
        extras=_EXTRAS,
    )
