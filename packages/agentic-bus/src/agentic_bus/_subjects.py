"""Subjects: every NATS subject agentic uses, built in one place from escaped tokens."""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass

__all__ = ["Subjects", "subject_token"]

_SAFE_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,64}")
_SAFE_PREFIX = re.compile(r"[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64})*")
_SAFE_KIND = re.compile(r"=?[A-Za-z0-9_-]{1,64}(\.=?[A-Za-z0-9_-]{1,64})*")


def subject_token(value: str) -> str:
    """``value`` as one subject token that can never inject another.

    An id of letters, digits, ``_`` and ``-`` (at most 64) is kept as it is; anything else (a
    ``.``, ``*``, ``>``, a space, a long id) becomes ``=`` and 26 lowercase base32 characters of
    its SHA-256. ``=`` cannot start a kept id, so two ids never share a token. The full id
    always travels in the message body.
    """
    if _SAFE_TOKEN.fullmatch(value):
        return value
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).digest()
    return "=" + base64.b32encode(digest).decode("ascii").lower()[:26]


@dataclass(frozen=True, slots=True)
class Subjects:
    """The subject names of the seeds, under one prefix (``agentic`` by default).

    Every id is passed through ``subject_token``, so a user id holding ``.``, ``*``, ``>`` or a
    space names exactly one token and never a wildcard or a deeper subject.

    Example:
        ```python
        subjects = Subjects()
        subjects.workflow("wf-1", "completed")  # "agentic.workflow.wf-1.completed"
        subjects.request("wf-1", "r.1")  # "agentic.workflow.wf-1.request.=..."
        ```
    """

    prefix: str = "agentic"

    def __post_init__(self) -> None:
        if not _SAFE_PREFIX.fullmatch(self.prefix):
            raise ValueError(
                f"subject prefix must be dot-separated tokens of [A-Za-z0-9_-], got {self.prefix!r}"
            )

    # -- agents ---------------------------------------------------------------------------------

    def agent(self, agent_id: str, kind: str) -> str:
        """``agentic.agent.{id}.{kind}``: ``message``, ``response``, ``tool_call``, ``run``, ..."""
        return f"{self.prefix}.agent.{subject_token(agent_id)}.{_kind(kind)}"

    def agent_all(self, agent_id: str) -> str:
        """Every subject of one agent (``agentic.agent.{id}.>``)."""
        return f"{self.prefix}.agent.{subject_token(agent_id)}.>"

    # -- workflows, executors, edges ------------------------------------------------------------

    def workflow(self, workflow_id: str, kind: str) -> str:
        """``agentic.workflow.{id}.{kind}``: ``started``, ``superstep``, ``output``, ..."""
        return f"{self.prefix}.workflow.{subject_token(workflow_id)}.{_kind(kind)}"

    def workflow_all(self, workflow_id: str) -> str:
        """Every subject of one workflow or run (``agentic.workflow.{id}.>``)."""
        return f"{self.prefix}.workflow.{subject_token(workflow_id)}.>"

    def workflows(self) -> str:
        """Every workflow subject (the ``AGENTIC_EVENTS`` stream's: events, committed log)."""
        return f"{self.prefix}.workflow.>"

    def executor(self, executor_id: str, kind: str) -> str:
        """``agentic.executor.{id}.{kind}``: ``started``, ``completed``, ``failed``, ..."""
        return f"{self.prefix}.executor.{subject_token(executor_id)}.{_kind(kind)}"

    def executor_event(self, executor_id: str, event_type: str) -> str:
        """``agentic.executor.{id}.event.{type}``: a custom event an executor added."""
        executor = subject_token(executor_id)
        return f"{self.prefix}.executor.{executor}.event.{subject_token(event_type)}"

    def edge_activated(self, edge_id: str) -> str:
        """``agentic.edge.{id}.activated``."""
        return f"{self.prefix}.edge.{subject_token(edge_id)}.activated"

    def request(self, workflow_id: str, request_id: str) -> str:
        """``agentic.workflow.{id}.request.{request_id}``: a pending human-in-the-loop request."""
        return f"{self.workflow(workflow_id, 'request')}.{subject_token(request_id)}"

    def requests(self, workflow_id: str | None = None) -> str:
        """Every pending request of one workflow (or of all: ``agentic.workflow.*.request.*``)."""
        workflow = "*" if workflow_id is None else subject_token(workflow_id)
        return f"{self.prefix}.workflow.{workflow}.request.*"

    # -- the distributed runtime ----------------------------------------------------------------

    def tasks(self) -> str:
        """Every task subject (the ``AGENTIC_TASKS`` stream's)."""
        return f"{self.prefix}.task.>"

    def pool_tasks(self, pool: str) -> str:
        """The tasks of one worker pool (a pool consumer's filter)."""
        return f"{self.prefix}.task.{subject_token(pool)}.>"

    def run_tasks(self, run_id: str) -> str:
        """The tasks of one run, in every pool (to purge them)."""
        return f"{self.prefix}.task.*.{subject_token(run_id)}.>"

    def superstep_tasks(self, run_id: str, superstep: int) -> str:
        """The tasks of one superstep of a run, in every pool (to purge them)."""
        return f"{self.prefix}.task.*.{subject_token(run_id)}.{int(superstep)}.*"

    def task(self, pool: str, run_id: str, superstep: int, executor_id: str) -> str:
        """``agentic.task.{pool}.{run}.{superstep}.{executor}``."""
        return (
            f"{self.prefix}.task.{subject_token(pool)}.{subject_token(run_id)}."
            f"{int(superstep)}.{subject_token(executor_id)}"
        )

    def results(self) -> str:
        """Every result subject (the ``AGENTIC_RESULTS`` stream's)."""
        return f"{self.prefix}.result.>"

    def run_results(self, run_id: str) -> str:
        """The results of one run."""
        return f"{self.prefix}.result.{subject_token(run_id)}.>"

    def superstep_results(self, run_id: str, superstep: int) -> str:
        """The results of one superstep of a run (what its coordinator listens to)."""
        return f"{self.prefix}.result.{subject_token(run_id)}.{int(superstep)}.>"

    def result(
        self,
        run_id: str,
        superstep: int,
        executor_id: str,
        attempt: int,
        index: int | None = None,
    ) -> str:
        """``agentic.result.{run}.{superstep}.{executor}.{attempt}``: one per task, ever; a
        branch of a dynamic map adds its index (``....{attempt}.{index}``)."""
        subject = (
            f"{self.prefix}.result.{subject_token(run_id)}.{int(superstep)}."
            f"{subject_token(executor_id)}.{int(attempt)}"
        )
        return subject if index is None else f"{subject}.{int(index)}"

    def committed(self, run_id: str) -> str:
        """``agentic.workflow.{run}.committed``: one message per committed superstep."""
        return self.workflow(run_id, "committed")

    def live(self, run_id: str, executor_id: str) -> str:
        """``agentic.live.{run}.{executor}``: a worker's streaming updates to the coordinator
        (core NATS, best effort, never stored: the coordinator emits them as events)."""
        return f"{self.prefix}.live.{subject_token(run_id)}.{subject_token(executor_id)}"

    def live_all(self, run_id: str) -> str:
        """Every streaming update of one run (``agentic.live.{run}.>``)."""
        return f"{self.prefix}.live.{subject_token(run_id)}.>"

    def response(self, run_id: str, request_id: str) -> str:
        """``agentic.response.{run}.{request_id}``: where an answer to a pending request goes
        (request/reply with the coordinator waiting for it; never stored)."""
        return f"{self.prefix}.response.{subject_token(run_id)}.{subject_token(request_id)}"

    def responses(self, run_id: str) -> str:
        """Every answer to one run's requests (``agentic.response.{run}.*``)."""
        return f"{self.prefix}.response.{subject_token(run_id)}.*"

    def audit(self, run_id: str, kind: str) -> str:
        """``agentic.audit.{run}.{kind}``: a decision record (the ``AGENTIC_AUDIT`` stream's)."""
        return f"{self.prefix}.audit.{subject_token(run_id)}.{subject_token(kind)}"

    def audits(self) -> str:
        """Every decision record (the ``AGENTIC_AUDIT`` stream's subjects)."""
        return f"{self.prefix}.audit.>"


def _kind(kind: str) -> str:
    """A fixed subject suffix: one or more safe tokens (``superstep.completed`` is two)."""
    if not _SAFE_KIND.fullmatch(kind):
        raise ValueError(
            "subject kind must be dot-separated tokens of [A-Za-z0-9_-] (or subject_token()s), "
            f"got {kind!r}"
        )
    return kind
