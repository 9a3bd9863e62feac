"""What coordinators and workers declare alike: the task and result streams, pool consumers.

Every process declares the same objects with the same settings, so whichever starts first
creates them and the others bind (see ``_jetstream``).
"""

from __future__ import annotations

from dataclasses import dataclass

from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from agentic_bus._jetstream import ensure_stream
from agentic_bus._subjects import Subjects, subject_token
from agentic_core import WorkflowGraph

__all__ = [
    "ADVISORIES_STREAM",
    "DUPLICATE_WINDOW_S",
    "EVENTS_MAX_AGE_S",
    "EVENTS_STREAM",
    "MAX_DELIVERIES_ADVISORY",
    "MAX_MSG_SIZE",
    "RESULTS_STREAM",
    "TASKS_STREAM",
    "PoolSettings",
    "consumer_name",
    "declare_events_stream",
    "declare_streams",
    "ensure_pool_consumer",
    "events_stream_config",
    "pool_of",
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
ADVISORIES_STREAM = "AGENTIC_ADVISORIES"
MAX_DELIVERIES_ADVISORY = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES"


def events_stream_config(
    subjects: Subjects, max_age_s: float = EVENTS_MAX_AGE_S
) -> api.StreamConfig:
    """``AGENTIC_EVENTS``: every ``agentic.workflow.>`` message (events, committed supersteps)."""
    return api.StreamConfig(
        name=EVENTS_STREAM,
        subjects=[f"{subjects.prefix}.workflow.>"],
        retention=api.RetentionPolicy.LIMITS,
        storage=api.StorageType.FILE,
        max_age=max_age_s,
        duplicate_window=DUPLICATE_WINDOW_S,
        max_msg_size=MAX_MSG_SIZE,
    )


@dataclass(frozen=True, slots=True)
class PoolSettings:
    """Delivery settings of a pool's consumer (the same in every process of a deployment).

    ``ack_wait_s``: a task not acked nor heartbeated for this long is redelivered (a worker
    that died). ``max_deliver``: deliveries before the task counts as poison. Workers send a
    heartbeat every ``ack_wait_s / 4``.
    """

    ack_wait_s: float = 10.0
    max_deliver: int = 3
    max_ack_pending: int = 10_000
    results_max_age_s: float = 24 * 3600.0

    def __post_init__(self) -> None:
        if not self.ack_wait_s > 0:
            raise ValueError(f"ack_wait_s must be positive, got {self.ack_wait_s!r}")
        if self.max_deliver < 1:
            raise ValueError(f"max_deliver must be at least 1, got {self.max_deliver!r}")

    @property
    def heartbeat_s(self) -> float:
        """How often a worker extends a running task's ``ack_wait``."""
        return self.ack_wait_s / 4


def pool_of(workflow: WorkflowGraph, build: str | None = None) -> str:
    """The default pool of ``workflow``: its name and fingerprint (workers of another graph
    never see its tasks), plus an optional build id."""
    base = f"{subject_token(workflow.name)}-{workflow.fingerprint()[:12]}"
    name = base if build is None else f"{base}-{build}"
    return subject_token(name)


def consumer_name(pool: str, subjects: Subjects) -> str:
    """The durable consumer of ``pool`` (under another subject prefix, another consumer: two
    deployments sharing the streams never share a pool)."""
    if subjects.prefix == "agentic":
        return f"pool_{subject_token(pool)}"
    return f"pool_{subject_token(pool)}_{subject_token(subjects.prefix.replace('.', '_'))}"


async def declare_streams(js: JetStreamContext, subjects: Subjects, settings: PoolSettings) -> None:
    """The work queue of tasks and the first-writer-wins stream of results."""
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
    await ensure_stream(
        js,
        api.StreamConfig(
            name=RESULTS_STREAM,
            subjects=[subjects.results()],
            retention=api.RetentionPolicy.LIMITS,
            storage=api.StorageType.FILE,
            max_age=settings.results_max_age_s,
            duplicate_window=DUPLICATE_WINDOW_S,
            max_msg_size=MAX_MSG_SIZE,
        ),
    )
    # The server's "task delivered max_deliver times" advisories, kept: a coordinator that was
    # down when a task turned poison finds out when it resumes the run.
    await ensure_stream(
        js,
        api.StreamConfig(
            name=ADVISORIES_STREAM,
            subjects=[f"{MAX_DELIVERIES_ADVISORY}.{TASKS_STREAM}.>"],
            retention=api.RetentionPolicy.LIMITS,
            storage=api.StorageType.FILE,
            max_age=settings.results_max_age_s,
        ),
    )


async def declare_events_stream(js: JetStreamContext, subjects: Subjects) -> None:
    """``AGENTIC_EVENTS`` (workflow events and the committed log)."""
    await ensure_stream(js, events_stream_config(subjects))


async def ensure_pool_consumer(
    js: JetStreamContext, subjects: Subjects, pool: str, settings: PoolSettings
) -> api.ConsumerInfo:
    """The pool's durable pull consumer (created with ``settings`` if it is missing)."""
    durable = consumer_name(pool, subjects)
    try:
        return await js.consumer_info(TASKS_STREAM, durable)
    except NotFoundError:
        pass
    config = api.ConsumerConfig(
        durable_name=durable,
        filter_subject=subjects.pool_tasks(pool),
        ack_policy=api.AckPolicy.EXPLICIT,
        deliver_policy=api.DeliverPolicy.ALL,
        ack_wait=settings.ack_wait_s,
        max_deliver=settings.max_deliver,
        max_ack_pending=settings.max_ack_pending,
        max_waiting=512,
    )
    return await js.add_consumer(TASKS_STREAM, config)  # pyright: ignore[reportUnknownMemberType]
