"""The run viewer's errors; each carries the HTTP status the web API answers it with."""

from __future__ import annotations

from agentic_orchestrator._errors import OrchestratorError

__all__ = [
    "AnswerRejectedError",
    "CannotResumeError",
    "RunNotFoundError",
    "SourceError",
    "ViewerError",
]


class ViewerError(OrchestratorError):
    """Root of the run viewer's errors (``status_code``: how the web API reports it)."""

    status_code: int = 400


class RunNotFoundError(ViewerError, LookupError):
    """No source knows the run (or the request) named."""

    status_code = 404


class AnswerRejectedError(ViewerError, ValueError):
    """An answer does not validate against its request's response type (or a start message
    against the start executor's input types)."""

    status_code = 400


class CannotResumeError(ViewerError):
    """The viewer cannot resume this run: no workflow matching it, or no store holding it."""

    status_code = 409


class SourceError(ViewerError):
    """A checkpoint store or event source failed (unreachable: 502, corrupt data: 500); the
    message names the source."""

    status_code = 502

    def __init__(self, message: str, *, status_code: int = 502) -> None:
        super().__init__(message)
        self.status_code = status_code
