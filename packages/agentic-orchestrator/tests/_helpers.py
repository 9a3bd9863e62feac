"""Test doubles shared by the pattern tests: deterministic agents and checkpoint replays."""

from __future__ import annotations

from collections.abc import Sequence

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    InMemoryCheckpointStore,
    Role,
    Workflow,
    WorkflowRunResult,
)
from agentic_core.testing import FunctionChatClient


def echo_agent(name: str, *, description: str | None = None) -> ChatAgent:
    """An agent whose reply names itself and the number of messages it was shown.

    Deterministic in what it sees, so a resumed run answers exactly as the uninterrupted one.
    """

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        del options
        return f"{name} saw {len(messages)}"

    return ChatAgent(FunctionChatClient(reply), name=name, description=description)


def spoken_lines(conversation: Sequence[ChatMessage]) -> list[str]:
    """``author: text`` per message (ids differ between runs; this does not)."""
    return [f"{m.author_name or m.role.value}: {m.text}" for m in conversation]


def assistant_texts(messages: Sequence[ChatMessage]) -> list[str]:
    """The assistant messages' texts."""
    return [m.text for m in messages if m.role is Role.ASSISTANT]


async def resume_from_middle(
    workflow: Workflow, result: WorkflowRunResult, store: InMemoryCheckpointStore
) -> WorkflowRunResult:
    """Resume ``result``'s run from a checkpoint half way through it."""
    history = await workflow.get_run_history(result.run_id, checkpoint_store=store)
    assert len(history) >= 3, f"too few checkpoints to resume mid-run: {len(history)}"
    middle = history[len(history) // 2]
    return await workflow.run(checkpoint_id=middle.id, checkpoint_store=store)
