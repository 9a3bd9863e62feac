"""The A2A errors: core's ``AgentError`` family, so callers of any agent catch them alike."""

from __future__ import annotations

from agentic_core import AgentError

__all__ = [
    "A2AConnectionError",
    "A2AError",
    "A2AServeError",
    "A2ATaskError",
    "A2ATimeoutError",
]


class A2AError(AgentError):
    """Base of every A2A error of agentic-bus (the message never carries a token)."""


class A2AConnectionError(A2AError, ConnectionError):
    """The remote A2A agent (its card or its endpoint) cannot be reached or answered garbage.

    The message names the URL, credentials redacted.
    """


class A2ATaskError(A2AError):
    """A remote A2A task ended without a result: ``failed``, ``rejected``, ``canceled`` or
    ``auth-required``; or the server answered a JSON-RPC error (unknown task, bad request).

    ``state`` is the A2A task state name (``"failed"``...) or None for a protocol error;
    ``task_id`` the task's id when there was one.
    """

    def __init__(self, message: str, *, state: str | None = None, task_id: str | None = None):
        super().__init__(message)
        self.state = state
        self.task_id = task_id


class A2AServeError(A2AError, ValueError):
    """``serve_a2a`` cannot serve what it was given (the message says what and why)."""


class A2ATimeoutError(A2ATaskError, TimeoutError):
    """A remote A2A agent did not answer within ``A2AAgent``'s ``timeout_s``: the whole answer
    of ``run``, or the next update of ``run_stream``. Also a ``TimeoutError``; ``state`` is the
    task's last known state (``"working"``...) or None, ``task_id`` its id when one was seen.
    """
