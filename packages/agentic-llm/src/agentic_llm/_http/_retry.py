"""When to retry a request and how long to wait first (pure functions, no I/O)."""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from agentic_llm._json import as_list, as_object

# 408 (request timeout) and 409 (lock conflict) are transient too; OpenAI's own SDK retries them.
_RETRYABLE_4XX = frozenset({408, 409, 429})


def is_retryable_status(status: int) -> bool:
    """Whether a response with ``status`` may succeed if sent again: 408, 409, 429 and 5xx."""
    return status in _RETRYABLE_4XX or status >= 500


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter, honouring the server's ``Retry-After``.

    The n-th retry (``attempt`` 0, 1, ...) waits a random time in
    ``[0, min(max_backoff_s, initial_backoff_s * 2**attempt)]`` ("full jitter": concurrent
    clients spread out instead of retrying in lockstep). When the server says how long to wait,
    that wait is used instead, capped at ``max_backoff_s``.
    """

    max_retries: int = 3
    initial_backoff_s: float = 0.5
    max_backoff_s: float = 30.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {self.max_retries}")
        if self.initial_backoff_s < 0 or self.max_backoff_s < 0:
            raise ValueError("backoff times must be >= 0")

    def delay_s(
        self, attempt: int, retry_after_s: float | None = None, *, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after_s is not None:
            return min(max(retry_after_s, 0.0), self.max_backoff_s)
        ceiling = min(self.max_backoff_s, self.initial_backoff_s * 2**attempt)
        # Jitter is not security-sensitive: the module-level PRNG is fine.
        return (rng or _rng).uniform(0.0, ceiling)


_rng = random.Random()  # noqa: S311 - backoff jitter, not cryptography


def parse_retry_after(headers: httpx.Headers, *, now: datetime | None = None) -> float | None:
    """The wait a response asks for, in seconds, or ``None`` when it does not say.

    Reads ``retry-after-ms`` (OpenAI, Azure) first, then ``Retry-After`` as delta-seconds or
    as an HTTP date (RFC 9110 section 10.2.3). A date in the past means "now" (0.0).
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; be lenient with zone-less ones
        when = when.replace(tzinfo=UTC)
    return max((when - (now or datetime.now(UTC))).total_seconds(), 0.0)


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")
_RETRY_INFO = "google.rpc.RetryInfo"


def parse_retry_info(body: str) -> float | None:
    """The wait a Google API error body asks for, in seconds, or ``None`` when it does not say.

    Gemini puts it in ``error.details[]``, as the ``retryDelay`` of the detail whose ``@type``
    is ``type.googleapis.com/google.rpc.RetryInfo``, in protobuf's JSON form of a Duration
    (``"37s"``, ``"1.5s"``, ``"0.250s"``).
    """
    if _RETRY_INFO not in body:
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    for detail in as_list(as_object(as_object(payload).get("error")).get("details")):
        fields = as_object(detail)
        if not str(fields.get("@type") or "").endswith(_RETRY_INFO):
            continue
        match = _DURATION.match(str(fields.get("retryDelay") or ""))
        if match:
            return float(match.group(1))
    return None
