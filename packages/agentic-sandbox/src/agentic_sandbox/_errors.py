"""The exception hierarchy of agentic_sandbox.

::

    SandboxError              the code cannot run as asked (bad file name, unknown language, ...)
    └── SandboxNotReadyError  the sandbox cannot run code here: a tool or the isolation is missing,
                              or the sandbox was stopped

A program that fails, times out or prints too much is not an error: it is an ``ExecutionResult``.
"""

from __future__ import annotations

from agentic_core import AgenticError


class SandboxError(AgenticError):
    """Root of every error raised by agentic_sandbox."""


class SandboxNotReadyError(SandboxError):
    """The sandbox cannot run code on this machine now; the message says what to install or fix."""
