"""From an HTTP error response to the right ``LLMError`` (pure: no I/O, no state).

Every provider wraps its error message differently; ``provider_error_message`` reads the four
shapes in use, so a new provider usually needs nothing here:

- OpenAI and compatible servers: ``{"error": {"message": ..., "type": ..., "code": ...}}``
- Anthropic: ``{"type": "error", "error": {"type": ..., "message": ...}}``
- Gemini (Google APIs): ``{"error": {"code": 400, "message": ..., "status": ...}}``
- Ollama and others: ``{"error": "..."}`` or ``{"message": "..."}`` or ``{"detail": ...}``
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple, cast

import httpx

from agentic_llm._errors import (
    AuthenticationError,
    ContextLengthError,
    InvalidRequestError,
    LLMError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
)

_BODY_LIMIT = 4000
"""Characters of an error body kept on the exception (bodies can be whole HTML pages)."""

_CONTEXT_CODES = frozenset({"context_length_exceeded", "string_above_max_length"})
_CONTEXT_WORDS = re.compile(
    r"context length|context window|maximum context|prompt is too long|too many tokens"
    r"|exceeds the maximum number of tokens|reduce the length of the messages",
    re.IGNORECASE,
)
_QUOTA_CODES = frozenset({"insufficient_quota"})


class ErrorDetails(NamedTuple):
    """What a provider said about an error: its message and its machine code, when given."""

    message: str
    code: str | None


def provider_error_message(text: str) -> ErrorDetails:
    """The provider's own message (and code) in an error body; the text itself if not JSON."""
    try:
        payload: Any = json.loads(text)
    except ValueError:
        return ErrorDetails(" ".join(text.split())[:500], None)
    if isinstance(payload, list) and payload:  # Google wraps some errors in a list
        payload = cast("list[Any]", payload)[0]
    if not isinstance(payload, dict):
        return ErrorDetails(text.strip()[:500], None)
    body = cast("dict[str, Any]", payload)
    error: Any = body.get("error", body)
    if isinstance(error, str):
        return ErrorDetails(error, None)
    if not isinstance(error, dict):
        return ErrorDetails(text.strip()[:500], None)
    fields = cast("dict[str, Any]", error)
    message = fields.get("message") or fields.get("detail") or body.get("message") or text
    code = fields.get("code") or fields.get("type") or fields.get("status")
    return ErrorDetails(str(message).strip(), None if code is None else str(code))


def is_quota_exhausted(details: ErrorDetails) -> bool:
    """A 429 that will not pass by waiting (the account is out of credit)."""
    return details.code in _QUOTA_CODES


def error_from_response(
    *,
    provider: str,
    label: str,
    status: int,
    text: str,
    retry_after_s: float | None = None,
    auth_hint: str | None = None,
) -> LLMError:
    """The exception for an error response: ``label`` names the server in the message,
    ``text`` is the (already redacted) body, ``auth_hint`` says how to fix credentials."""
    details = provider_error_message(text)
    reason = httpx.codes.get_reason_phrase(status) or "error"
    message = f"{label} returned HTTP {status} {reason}: {details.message or '(empty body)'}"
    body = text[:_BODY_LIMIT]
    common: dict[str, Any] = {"provider": provider, "status": status, "body": body}
    if status in (401, 403):
        hint = f" ({auth_hint})" if auth_hint else ""
        cls = AuthenticationError if status == 401 else PermissionDeniedError
        return cls(message + hint, **common)
    if status == 429:
        if is_quota_exhausted(details):
            message += " (the quota is exhausted: waiting will not help)"
        elif retry_after_s is not None:
            message += f" (retry after {retry_after_s:g} s)"
        return RateLimitError(message, retry_after_s=retry_after_s, **common)
    too_long = details.code in _CONTEXT_CODES or _CONTEXT_WORDS.search(details.message)
    if status == 413 or (too_long and 400 <= status < 500):
        return ContextLengthError(message, **common)
    if status in (400, 404, 422):
        if status == 404:
            message += " (check the model name and the base URL)"
        return InvalidRequestError(message, **common)
    return ProviderError(message, **common)
