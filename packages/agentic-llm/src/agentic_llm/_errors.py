"""The exception hierarchy of agentic_llm: one root, one class per thing a caller handles apart.

::

    LLMError                          provider, status, body
    ├── AuthenticationError           401, or no API key where one is needed
    │   └── PermissionDeniedError     403
    ├── RateLimitError                429 after the retries (retry_after_s)
    ├── LLMTimeoutError               connect/read timeout (also a builtin TimeoutError)
    ├── LLMConnectionError            the server cannot be reached
    └── ProviderError                 5xx after the retries, an unusable answer, a broken stream
        └── InvalidRequestError       400, 404, 422: the request is wrong, retrying cannot help
            └── ContextLengthError    the prompt is too long for the model (or 413)

Messages name the provider (and its base URL), the HTTP status and the provider's own error
message. They never contain an API key: the HTTP layer redacts keys before building them.
"""

from __future__ import annotations

from typing import Any

from agentic_core import AgenticError


class LLMError(AgenticError):
    """Root of every error raised by agentic_llm.

    ``provider`` names the API ("openai", ...), ``status`` is the HTTP status when there was a
    response (else ``None``) and ``body`` the response body as text (redacted, maybe cut short).
    """

    def __init__(
        self, message: str, *, provider: str = "", status: int | None = None, body: str = ""
    ) -> None:
        super().__init__(message)
        self.provider = provider
        self.status = status
        self.body = body

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only attributes survive pickling (errors cross process boundaries on the bus).
        return (_rebuild, (type(self), str(self), dict(self.__dict__)))


def _rebuild(cls: type[LLMError], message: str, state: dict[str, Any]) -> LLMError:
    error = cls.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class AuthenticationError(LLMError):
    """The provider rejected the credentials (401), or no API key was found where one is needed."""


class PermissionDeniedError(AuthenticationError):
    """The credentials are valid but may not use this model or endpoint (403)."""


class RateLimitError(LLMError):
    """Too many requests (429), still refused after the retries, or the quota is exhausted.

    ``retry_after_s`` is the wait the provider asked for, when it said.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str = "",
        status: int | None = 429,
        body: str = "",
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message, provider=provider, status=status, body=body)
        self.retry_after_s = retry_after_s


class LLMTimeoutError(LLMError, TimeoutError):
    """Connecting, or waiting for the answer (or the next chunk of a stream), took too long."""


class LLMConnectionError(LLMError):
    """The server cannot be reached (refused, DNS, TLS, dropped before answering)."""


class ProviderError(LLMError):
    """The provider failed (5xx after the retries) or answered with something unusable:
    an unexpected status, a body that is not the documented shape, a stream cut off mid-way or
    a malformed stream event."""


class InvalidRequestError(ProviderError):
    """The provider rejected the request itself (400, 404, 422): retrying it cannot help."""


class ContextLengthError(InvalidRequestError):
    """The conversation is too long for the model's context window (or the request too large)."""
