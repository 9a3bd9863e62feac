"""Reading a remote agent's answer: A2A events (a ``Message``, a ``Task``, status and artifact
updates) folded into the text streamed so far and, at the end, the answer or the error.

The answer's text is its artifacts' text (chunks appended in order), else the text of the
message the task ended with (``completed`` or ``input-required``), else that of a direct
``Message`` reply. A task that ends ``failed``, ``rejected``, ``canceled`` or waits in
``auth-required`` is an ``A2ATaskError``; an answer that stops while the task is still
``submitted`` or ``working`` an ``A2AConnectionError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from a2a.types import Part, StreamResponse, TaskState

from agentic_bus._a2a._client_parts import text_of
from agentic_bus._a2a._errors import A2AConnectionError, A2ATaskError

__all__ = ["Answer", "AnswerFold", "state_name"]

_ENDED = frozenset(
    {
        TaskState.TASK_STATE_COMPLETED,
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_INPUT_REQUIRED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)
_FAILED = frozenset(
    {
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
        TaskState.TASK_STATE_AUTH_REQUIRED,
    }
)


def state_name(state: TaskState | None) -> str | None:
    """A2A's name of a task state: ``"input-required"`` for ``TASK_STATE_INPUT_REQUIRED``."""
    if state is None:
        return None
    return TaskState.Name(state).removeprefix("TASK_STATE_").lower().replace("_", "-")


@dataclass
class Answer:
    """What a remote agent answered: text, data, and the task it belongs to."""

    text: str
    others: list[Part]
    """The parts that are not text (data parts...), in order."""
    task_id: str | None
    context_id: str | None
    input_required: bool
    asked: list[Part]
    """The parts of the message a task in ``input-required`` asks with."""
    unsent_text: str
    """The part of ``text`` no streamed update carried yet (a status message's text)."""


@dataclass
class AnswerFold:
    """Folds the events of one answer; ``add`` gives the text each adds, ``finish`` the rest."""

    where: str
    """Who answers, for messages: ``A2A agent 'name' at URL``."""
    task_id: str | None = None
    context_id: str | None = None
    state: TaskState | None = None
    _artifacts: dict[str, list[Part]] = field(default_factory=dict[str, list[Part]])
    _status: list[Part] = field(default_factory=list[Part])
    _message: list[Part] | None = None

    @property
    def ended(self) -> bool:
        """Whether the task reached an end (or an interruption): nothing more will come."""
        return self._message is not None or self.state in _ENDED

    def add(self, event: StreamResponse) -> str:
        """Take one event; the new answer text it carries (``""`` when none)."""
        kind = event.WhichOneof("payload")
        if kind == "message":
            message = event.message
            self._ids(message.task_id, message.context_id)
            self._message = list(message.parts)
            return text_of(message.parts)
        if kind == "task":
            task = event.task
            self._ids(task.id, task.context_id)
            self._status_of(task.status.state, task.status)
            added = ""
            for artifact in task.artifacts:
                if artifact.artifact_id not in self._artifacts:  # not streamed already
                    self._artifacts[artifact.artifact_id] = list(artifact.parts)
                    added += text_of(artifact.parts)
            return added
        if kind == "status_update":
            update = event.status_update
            self._ids(update.task_id, update.context_id)
            self._status_of(update.status.state, update.status)
            return ""
        if kind == "artifact_update":
            update = event.artifact_update
            self._ids(update.task_id, update.context_id)
            artifact = update.artifact
            known = self._artifacts.get(artifact.artifact_id)
            if update.append and known is not None:
                known.extend(artifact.parts)
            else:
                self._artifacts[artifact.artifact_id] = list(artifact.parts)
            return text_of(artifact.parts)
        raise A2AConnectionError(f"{self.where} sent something that is not an A2A event ({kind})")

    def finish(self) -> Answer:
        """The answer, once the events are over; raises for a task that did not succeed."""
        if self._message is not None:
            return self._message_answer(self._message)
        state = self.state
        if state in _FAILED:
            why = text_of(self._status)
            raise A2ATaskError(
                f"{self.where}: task {self.task_id} ended {state_name(state)}"
                + (f": {why}" if why else ""),
                state=state_name(state),
                task_id=self.task_id,
            )
        if state not in (TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_INPUT_REQUIRED):
            raise A2AConnectionError(
                f"{self.where} stopped answering while task {self.task_id} was "
                f"{state_name(state) or 'not started'}"
            )
        parts = [part for parts in self._artifacts.values() for part in parts]
        streamed = text_of(parts)
        said = text_of(self._status)  # the message the task ended (or paused) with
        asking = state == TaskState.TASK_STATE_INPUT_REQUIRED
        text = said if asking and said else streamed or said
        return Answer(
            text=text,
            others=_not_text([*parts, *([] if asking else self._status)]),
            task_id=self.task_id,
            context_id=self.context_id,
            input_required=asking,
            asked=list(self._status) if asking else [],
            unsent_text="" if text == streamed else text,
        )

    def _message_answer(self, parts: list[Part]) -> Answer:
        return Answer(
            text=text_of(parts),
            others=_not_text(parts),
            task_id=self.task_id,
            context_id=self.context_id,
            input_required=False,
            asked=[],
            unsent_text="",
        )

    def _ids(self, task_id: str, context_id: str) -> None:
        self.task_id = task_id or self.task_id
        self.context_id = context_id or self.context_id

    def _status_of(self, state: TaskState, status: Any) -> None:
        self.state = state
        if state in _ENDED and status.HasField("message"):
            self._status = list(status.message.parts)


def _not_text(parts: list[Part]) -> list[Part]:
    return [part for part in parts if not part.HasField("text")]
