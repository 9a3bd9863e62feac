"""What an ``AgentThread`` of an ``A2AAgent`` remembers of the remote conversation, and which
task the answers of a run go to.

A thread's metadata holds the A2A ``contextId`` (``a2a_context_id``) and, while the remote task
waits for input, that task and its requests (``a2a_pending``: ``{"task_id": ...,
"requests": {request_id: kind}}``). Metadata is what ``AgentThread.serialize()`` and a
workflow's agent executor keep, so both survive a restart. Answers given without a thread are
matched through the agent's memo of requests it surfaced lately; a request id it does not
know is taken as a task id (a plain question's request id is its task's id).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from agentic_bus._a2a._client_parts import RequestKind
from agentic_core import AgentError, AgentThread, BoundedMemo

__all__ = ["CONTEXT_KEY", "PENDING_KEY", "Pending", "PendingRequests"]

CONTEXT_KEY = "a2a_context_id"
"""``AgentThread.metadata`` key: the A2A ``contextId`` of the thread's remote conversation."""
PENDING_KEY = "a2a_pending"
"""``AgentThread.metadata`` key: the task waiting for input and its requests, while one does."""


@dataclass
class Pending:
    """A remote task waiting for input: its id, its context, and its requests by id."""

    task_id: str
    context_id: str = ""
    requests: dict[str, RequestKind] = field(default_factory=dict[str, RequestKind])

    def as_json(self) -> dict[str, Any]:
        """What the thread's metadata keeps."""
        return {"task_id": self.task_id, "requests": dict(self.requests)}


class PendingRequests:
    """Where the answers of a run go: the thread's pending task, else a memo of this agent's."""

    def __init__(self, where: str) -> None:
        self._where = where
        self._recent: BoundedMemo[str, Pending] = BoundedMemo(1024)

    def context_of(self, thread: AgentThread | None) -> str:
        """The thread's A2A context id (``""`` for a new conversation)."""
        return str(thread.metadata.get(CONTEXT_KEY) or "") if thread is not None else ""

    def waiting(self, thread: AgentThread | None) -> Pending | None:
        """The thread's task waiting for input, if any."""
        if thread is None:
            return None
        saved = thread.metadata.get(PENDING_KEY)
        if not isinstance(saved, dict):
            return None
        data = cast("dict[str, Any]", saved)
        requests = cast("dict[str, RequestKind]", dict(data.get("requests") or {}))
        return Pending(str(data["task_id"]), self.context_of(thread), requests)

    def answered(self, answers: Mapping[str, object], thread: AgentThread | None) -> Pending:
        """The pending task ``answers`` (by request id) belong to; raises when they do not."""
        if not answers:
            raise AgentError(f"{self._where}: responses= holds no answer")
        pending = self.waiting(thread)
        if thread is None:
            first = next(iter(answers))
            pending = self._recent.get(first) or Pending(first, "", {first: "input"})
        if pending is None:
            raise AgentError(
                f"{self._where}: no request waits on this thread (answered: {sorted(answers)})"
            )
        unknown = sorted(set(answers) - set(pending.requests))
        if unknown:
            raise AgentError(
                f"{self._where}: {unknown} are not waiting on task {pending.task_id} "
                f"(waiting: {sorted(pending.requests)})"
            )
        return pending

    def forget(self, thread: AgentThread | None) -> None:
        """The thread's waiting task is over (it ended, is unknown, or was given up)."""
        if thread is not None:
            thread.metadata.pop(PENDING_KEY, None)

    def settle(
        self, thread: AgentThread | None, context_id: str | None, pending: Pending | None
    ) -> None:
        """After an answer: the thread's context, and the task waiting now (or none)."""
        if pending is not None:
            for request_id in pending.requests:
                self._recent.remember(request_id, pending)
        if thread is None:
            return
        if context_id:
            thread.metadata[CONTEXT_KEY] = context_id
        if pending is None:
            thread.metadata.pop(PENDING_KEY, None)
        else:
            thread.metadata[PENDING_KEY] = pending.as_json()
