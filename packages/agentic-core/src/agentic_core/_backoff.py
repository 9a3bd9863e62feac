"""Exponential backoff with jitter and a deadline, for every retry loop of the project."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass

__all__ = ["Backoff", "BackoffSchedule"]

_rng = random.Random()  # noqa: S311 - backoff jitter, not cryptography


@dataclass(frozen=True, slots=True)
class Backoff:
    """How long to wait between attempts: exponential, capped, with jitter.

    The wait after failure ``n`` (0-based) is drawn from
    ``[ceiling * (1 - jitter), ceiling]`` with ``ceiling = min(max_s, initial_s * factor**n)``:
    ``jitter=1.0`` is "full jitter" (clients that failed together do not retry together),
    ``0.0`` none.

    Example::

        schedule = Backoff(initial_s=0.05, max_s=1.0).schedule(timeout_s=30)
        while True:
            try:
                return await publish()
            except ConnectionError as exc:
                if not await schedule.wait():
                    raise BusError(f"could not publish for 30 s: {exc}") from exc
    """

    initial_s: float = 0.05
    max_s: float = 1.0
    factor: float = 2.0
    jitter: float = 1.0

    def __post_init__(self) -> None:
        if self.initial_s < 0 or self.max_s < 0:
            raise ValueError(f"backoff times must be >= 0, got {self.initial_s=}, {self.max_s=}")
        if self.factor < 1:
            raise ValueError(f"backoff factor must be >= 1, got {self.factor}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"backoff jitter must be within [0, 1], got {self.jitter}")

    def delay(self, attempt: int) -> float:
        """The wait after failure ``attempt`` (0 for the first)."""
        try:
            ceiling = min(self.max_s, self.initial_s * self.factor ** max(attempt, 0))
        except OverflowError:
            ceiling = self.max_s
        if not self.jitter:
            return ceiling
        return ceiling * (1.0 - self.jitter * _rng.random())

    def schedule(
        self, *, timeout_s: float | None = None, deadline: float | None = None
    ) -> BackoffSchedule:
        """A fresh series of waits, ending ``timeout_s`` from now or at ``deadline`` (a
        ``time.monotonic()`` value; the earlier of the two), or never when neither is given."""
        if timeout_s is not None:
            by_timeout = time.monotonic() + timeout_s
            deadline = by_timeout if deadline is None else min(deadline, by_timeout)
        return BackoffSchedule(self, deadline)


class BackoffSchedule:
    """One retry loop's waits: counts attempts and knows its deadline."""

    __slots__ = ("attempts", "backoff", "deadline")

    def __init__(self, backoff: Backoff, deadline: float | None) -> None:
        self.backoff = backoff
        self.deadline = deadline
        self.attempts = 0
        """Waits handed out so far."""

    @property
    def time_left_s(self) -> float | None:
        """Seconds until the deadline (0 once passed), or None without one."""
        if self.deadline is None:
            return None
        return max(self.deadline - time.monotonic(), 0.0)

    @property
    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return self.deadline is not None and time.monotonic() >= self.deadline

    def next_delay(self) -> float | None:
        """The next wait (never past the deadline), or None once the deadline has passed."""
        left = self.time_left_s
        if left is not None and left <= 0:
            return None
        delay = self.backoff.delay(self.attempts)
        self.attempts += 1
        return delay if left is None else min(delay, left)

    async def wait(self) -> bool:
        """Sleep the next wait and return True, or return False at once past the deadline."""
        delay = self.next_delay()
        if delay is None:
            return False
        await asyncio.sleep(delay)
        return True

    def reset(self) -> None:
        """Start the waits again from the shortest (after a success); the deadline stays."""
        self.attempts = 0

    def __repr__(self) -> str:
        left = self.time_left_s
        return f"BackoffSchedule({self.backoff!r}, attempts={self.attempts}, left_s={left})"
