"""What other packages add to the command: subcommands, runtimes, tool sources (entry points).

The command never imports a sibling package: ``agentic worker`` is agentic-bus's
``agentic.commands`` entry, ``--runtime nats://`` its ``agentic.runtimes`` entry, ``mcp:`` tools
agentic-mcp's ``agentic.tool_sources`` entry; ``agentic serve`` mounts the ``agentic.servers``
entries (``mcp``, ``a2a``) and builds ``--state URL`` from ``agentic.state_stores``
(``_serve/_protocols``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

from agentic_core import Runtime, Tool, redact_url
from agentic_core.registry import RegistryError, available, load
from agentic_orchestrator._cli._errors import UsageError

__all__ = ["build_from_url", "command_names", "load_command", "open_runtime", "open_tool_source"]

COMMANDS = "agentic.commands"
RUNTIMES = "agentic.runtimes"
TOOL_SOURCES = "agentic.tool_sources"
_EXTRAS = {"nats": "agentic-orchestrator[nats]", "mcp": "agentic-orchestrator[mcp]"}

T = TypeVar("T")

CommandFn = Callable[[list[str]], int]
ToolSource = Callable[
    [Mapping[str, Mapping[str, Any]]], AbstractAsyncContextManager[Mapping[str, Sequence[Tool]]]
]
"""``source(servers)``: an async context that connects ``{name: table}`` and yields each
server's tools by name, disconnecting on exit."""


def command_names() -> list[str]:
    """The subcommands installed packages add (names only: nothing is imported)."""
    return available(COMMANDS)


def load_command(name: str) -> CommandFn:
    """The ``agentic.commands`` entry ``name``: ``fn(argv) -> exit code``."""
    try:
        return cast("CommandFn", load(COMMANDS, name))
    except RegistryError as exc:
        raise UsageError(str(exc)) from None


def open_runtime(url: str) -> Runtime:
    """The runtime for ``url`` (``nats://host:port`` -> agentic-bus's ``NatsRuntime(url)``)."""
    return build_from_url(
        RUNTIMES,
        url,
        option="--runtime",
        kind="runtime",
        protocol=Runtime,
        example="nats://127.0.0.1:4222",
        aliases={"tls": "nats", "ws": "nats", "wss": "nats"},
        extras=_EXTRAS,
    )


def build_from_url(
    group: str,
    url: str,
    *,
    option: str,
    kind: str,
    protocol: type[T],
    example: str,
    aliases: Mapping[str, str] = {},
    extras: Mapping[str, str] = {},
) -> T:
    """``factory(url)`` of the ``group`` entry named by ``url``'s scheme (or its alias), checked
    to be a ``protocol``; every failure is one ``UsageError`` line starting with ``option`` and
    the URL with its credentials masked (``nats://TOKEN@host``: the token never shows)."""
    shown = redact_url(url)
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        scheme = ""
    name = aliases.get(scheme, scheme)
    if not name:
        raise UsageError(f"{option} {shown!r}: expected a URL such as {example}")
    try:
        factory = load(group, name)
    except RegistryError:
        extra = extras.get(name, "the package providing it")
        raise UsageError(
            f"{option} {shown}: no {name!r} {kind} installed (installed: "
            f"{', '.join(available(group)) or 'none'}); pip install '{extra}'"
        ) from None
    try:
        built = factory(url)
    except Exception as exc:  # noqa: BLE001 - a bad URL or option: one line, no traceback
        detail = str(exc).replace(url, shown)
        raise UsageError(f"{option} {shown}: {type(exc).__name__}: {detail}") from None
    if not isinstance(built, protocol):
        raise UsageError(f"{option} {shown}: the {name!r} entry point built no {protocol.__name__}")
    return built


def open_tool_source(name: str) -> ToolSource:
    """The ``agentic.tool_sources`` entry ``name`` (``mcp``)."""
    try:
        return cast("ToolSource", load(TOOL_SOURCES, name))
    except RegistryError:
        extra = _EXTRAS.get(name, "the package providing it")
        raise UsageError(
            f"{name}: tools need the {name!r} tool source; pip install '{extra}'"
        ) from None
