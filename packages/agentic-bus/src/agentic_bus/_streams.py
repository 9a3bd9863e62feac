"""Every JetStream stream agentic declares: its name, subjects and settings, in one place.

``AGENTIC_TASKS`` (the work queue of tasks), ``AGENTIC_RESULTS`` (first-writer-wins results),
``AGENTIC_ADVISORIES`` (the server's max-deliveries advisories, kept), ``AGENTIC_EVENTS``
(workflow events and the committed log) and ``AGENTIC_AUDIT`` (decision records). Every process
declares the same objects with the same settings, so whichever starts first creates them and
the others bind (see ``_jetstream``). The subjects come from ``Subjects``.
"""

from __future__ import annotations

from nats.js import api
from nats.js.client import JetStreamContext

from agentic_bus._jetstream import ensure_stream
from agentic_bus._subjects import Subjects

__all__ = [
    "ADVISORIES_STREAM",
    "AUDIT_STREAM",
    "DUPLICATE_WINDOW_S",
    "EVENTS_MAX_AGE_S",
    "EVENTS_STREAM",
    "MAX_MSG_SIZE",
    "RESULTS_STREAM",
    "TASKS_STREAM",
    "audit_stream_config",
    "declare_events_stream",
    "declare_streams",
    "events_stream_config",
    "max_deliveries_advisory",
]

MAX_MSG_SIZE = 2 * 1024 * 1024
"""The largest message any agentic stream takes (claim checks cover anything bigger)."""
DUPLICATE_WINDOW_S = 120.0
"""How long a stream deduplicates ``Nats-Msg-Id``s."""
EVENTS_MAX_AGE_S = 7 * 24 * 3600.0
"""How long events, audit records and the committed log are kept by default."""

TASKS_STREAM = "AGENTIC_TASKS"
RESULTS_STREAM = "AGENTIC_RESULTS"
EVENTS_STREAM = "AGENTIC_EVENTS"
AUDIT_STREAM = "AGENTIC_AUDIT"
ADVISORIES_STREAM = "AGENTIC_ADVISORIES"
_MAX_DELIVERIES_ADVISORY = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"


def max_deliveries_advisory(consumer: str | None = None) -> str:
    """The server's "delivered ``max_deliver`` times" advisory subject for a consumer of
    ``AGENTIC_TASKS`` (every consumer's when ``consumer`` is None)."""
    return f"{_MAX_DELIVERIES_ADVISORY}.{TASKS_STREAM}.{consumer or '>'}"


def events_stream_config(
    subjects: Subjects, max_age_s: float = EVENTS_MAX_AGE_S, *, name: str = EVENTS_STREAM
) -> api.StreamConfig:
    """``AGENTIC_EVENTS``: every ``agentic.workflow.>`` message (events, committed supersteps)."""
    return _record_stream(name, subjects.workflows(), max_age_s)


def audit_stream_config(
    subjects: Subjects, *, name: str = AUDIT_STREAM, max_age_s: float = EVENTS_MAX_AGE_S
) -> api.StreamConfig:
    """``AGENTIC_AUDIT``: every ``agentic.audit.>`` record."""
    return _record_stream(name, subjects.audits(), max_age_s)


def _record_stream(name: str, subject: str, max_age_s: float) -> api.StreamConfig:
    """A stream of records kept ``max_age_s`` (limits, file, ``Nats-Msg-Id``s deduplicated)."""
    return api.StreamConfig(
        name=name,
        subjects=[subject],
        retention=api.RetentionPolicy.LIMITS,
        storage=api.StorageType.FILE,
        max_age=max_age_s,
        duplicate_window=DUPLICATE_WINDOW_S,
        max_msg_size=MAX_MSG_SIZE,
    )


async def declare_streams(
    js: JetStreamContext, subjects: Subjects, *, results_max_age_s: float
) -> None:
    """The work queue of tasks, the first-writer-wins stream of results, and the advisories."""
    await ensure_stream(
        js,
        api.StreamConfig(
            name=TASKS_STREAM,
            subjects=[subjects.tasks()],
            retention=api.RetentionPolicy.WORK_QUEUE,
            storage=api.StorageType.FILE,
            discard=api.DiscardPolicy.NEW,
            duplicate_window=DUPLICATE_WINDOW_S,
            max_msg_size=MAX_MSG_SIZE,
        ),
    )
    await ensure_stream(js, _record_stream(RESULTS_STREAM, subjects.results(), results_max_age_s))
    # The server's "task delivered max_deliver times" advisories, kept: a coordinator that was
    # down when a task turned poison finds out when it resumes the run.
    await ensure_stream(
        js,
        api.StreamConfig(
            name=ADVISORIES_STREAM,
            subjects=[max_deliveries_advisory()],
            retention=api.RetentionPolicy.LIMITS,
            storage=api.StorageType.FILE,
            max_age=results_max_age_s,
        ),
    )


async def declare_events_stream(js: JetStreamContext, subjects: Subjects) -> None:
    """``AGENTIC_EVENTS`` (workflow events and the committed log)."""
    await ensure_stream(js, events_stream_config(subjects))
