"""What nats-py raises while a server is away, which of it may pass, and how a message names it."""

from __future__ import annotations

import nats.errors
import nats.js.errors

__all__ = ["NATS_ERRORS", "describe_error", "is_transient"]

NATS_ERRORS = (nats.errors.Error, TimeoutError, OSError)
"""What a publish or a JetStream call may raise while the server is away."""


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` may pass once the server is back (a timeout, JetStream restarting)."""
    if isinstance(exc, nats.js.errors.APIError):
        return isinstance(exc, nats.js.errors.ServiceUnavailableError | nats.js.errors.ServerError)
    return not isinstance(
        exc,
        nats.errors.ConnectionClosedError
        | nats.errors.MaxPayloadError
        | nats.errors.BadSubjectError
        | nats.errors.BadHeaderError
        | nats.errors.AuthorizationError,
    )


def describe_error(exc: BaseException) -> str:
    """``Type: message`` (or the type alone when the message is empty), for logs and errors."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
