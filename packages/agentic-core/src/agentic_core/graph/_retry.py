"""RetryPolicy: how often an executor invocation is tried, and for how long."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RetryPolicy(BaseModel):
    """How often an executor invocation is tried, with what pause and per-attempt timeout.

    Attempt ``k`` (1-based) waits ``backoff_s * backoff_factor ** (k - 2)`` seconds before it
    starts (no wait for the first). A timeout counts as a failed attempt.
    """

    model_config = ConfigDict(defer_build=True)

    max_attempts: int = Field(default=1, ge=1)
    backoff_s: float = Field(default=0.0, ge=0.0)
    backoff_factor: float = Field(default=2.0, ge=1.0)
    timeout_s: float | None = Field(default=None, gt=0.0)

    def delay_before(self, attempt: int) -> float:
        """Seconds to wait before ``attempt`` (1-based)."""
        if attempt <= 1:
            return 0.0
        return self.backoff_s * self.backoff_factor ** (attempt - 2)
