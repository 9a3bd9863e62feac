"""The executor invocation running in the current context, for log lines to name.

``CompiledGraph.run_invocation`` sets it (and resets it with the token) around every
invocation, wherever the invocation runs; ``agentic_core.add_run_context`` reads it. Storing the
``Invocation`` itself costs no allocation.

Setting a context variable is the dearest part of that (about a tenth of the engine's cost per
step), so the engine does it only once ``agentic_core._logging`` is loaded: every way to get
``add_run_context`` into a processor chain (``configure_logging`` or the name itself) loads it.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentic_core.protocols._runtime import Invocation

__all__ = ["CURRENT_INVOCATION", "enable", "enabled"]

CURRENT_INVOCATION: ContextVar[Invocation | None] = ContextVar(
    "agentic_current_invocation", default=None
)

enabled = False
"""Whether the engine keeps ``CURRENT_INVOCATION`` (read on every invocation: a plain global)."""


def enable() -> None:
    """Keep ``CURRENT_INVOCATION`` from now on (called as the logging module loads)."""
    global enabled  # noqa: PLW0603 - a process-wide switch, flipped once
    enabled = True
