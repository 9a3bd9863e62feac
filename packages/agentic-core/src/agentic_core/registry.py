"""Resolve pluggable implementations by name through entry points.

Each agentic package registers what it implements under an entry-point group
(``agentic.chat_clients``, ``agentic.sandboxes``, ``agentic.state_stores``, ...). Core never
imports a sibling package: it finds them here, so a user installs only what they use.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points
from typing import Any

from agentic_core._errors import AgentCoreError

__all__ = ["RegistryError", "available", "load"]

# Which distribution provides each group: named in "not installed" errors.
_PROVIDERS: dict[str, str] = {
    "agentic.chat_clients": "agentic-llm",
    "agentic.sandboxes": "agentic-sandbox",
    "agentic.state_stores": "agentic-storage or agentic-bus",
    "agentic.checkpoint_stores": "agentic-storage or agentic-bus",
    "agentic.vector_stores": "agentic-storage",
    "agentic.runtimes": "agentic-bus",
    "agentic.tool_sources": "agentic-mcp",
    "agentic.commands": "agentic-bus",
    "agentic.event_sources": "agentic-bus",
}


class RegistryError(AgentCoreError):
    """No installed package provides the requested name, or its entry point fails to load."""


def _group(group: str) -> dict[str, EntryPoint]:
    return {ep.name: ep for ep in entry_points(group=group)}


def available(group: str) -> list[str]:
    """The names registered under ``group`` by the installed packages, sorted."""
    return sorted(_group(group))


def load(group: str, name: str) -> Any:
    """The object registered as ``name`` under ``group`` (a class or factory, usually)."""
    found = _group(group)
    entry = found.get(name)
    if entry is None:
        provider = _PROVIDERS.get(group, "the package that provides it")
        known = ", ".join(sorted(found)) or "none"
        raise RegistryError(
            f"no {name!r} registered under {group!r} (installed: {known}); "
            f"install {provider} (e.g. pip install {provider.split()[0]})"
        )
    try:
        return entry.load()
    except (ImportError, AttributeError) as exc:
        raise RegistryError(
            f"{name!r} under {group!r} points to {entry.value!r}, which cannot be loaded: {exc}"
        ) from exc
