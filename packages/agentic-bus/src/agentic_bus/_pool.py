"""Worker pools: their delivery settings, default names and durable consumers.

A pool is the set of workers that take one kind of task from ``AGENTIC_TASKS`` (``_streams``)
through one durable pull consumer. Coordinators and workers declare it alike, so whichever
starts first creates it and the others bind.
"""

from __future__ import annotations

from dataclasses import dataclass

from nats.js import api
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError

from agentic_bus._streams import TASKS_STREAM
from agentic_bus._subjects import Subjects, subject_token
from agentic_core import WorkflowGraph

__all__ = ["PoolSettings", "consumer_name", "ensure_pool_consumer", "pool_of"]


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
