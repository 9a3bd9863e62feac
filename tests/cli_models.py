"""Scripted models and tools for the ``agentic`` command's tests (``--model python:...``).

``agentic run CONFIG "task" --model python:tests.cli_models:scripted`` runs any config offline:
each agent answers ``<first word of its instructions>: <the task>``. ``slow`` is the same model,
except that an agent whose instructions contain ``SLOW`` blocks for an hour once the
``AGENTIC_TEST_BLOCK_FILE`` variable names a file: it creates that file first, so a test knows
the run is mid-superstep and can interrupt it (no timing involved).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    Workflow,
)
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import SequentialBuilder

__all__ = ["config_workflow", "pair_workflow", "scripted", "slow", "tool_caller", "word_count"]


def _answer(messages: list[ChatMessage]) -> str:
    system = next((m.text for m in messages if m.role is Role.SYSTEM), "")
    asked = next((m.text for m in messages if m.role is Role.USER), "")
    tag = (system.split() or ["agent"])[0].strip(".:,")
    return f"{tag}: {asked}"


def scripted() -> FunctionChatClient:
    """Answers at once, deterministically, streamed in small chunks."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        return _answer(messages)

    return FunctionChatClient(reply, model="scripted", chunk_size=4)


def slow() -> FunctionChatClient:
    """Like :func:`scripted`, but ``SLOW`` agents block when ``AGENTIC_TEST_BLOCK_FILE`` is set."""

    async def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        marker = os.environ.get("AGENTIC_TEST_BLOCK_FILE")
        system = next((m.text for m in messages if m.role is Role.SYSTEM), "")
        if marker and "SLOW" in system:
            Path(marker).write_text("blocked\n", encoding="utf-8")
            await asyncio.sleep(3600)
        return _answer(messages)

    return FunctionChatClient(reply, model="slow", chunk_size=4)


def tool_caller() -> FunctionChatClient:
    """Calls the first offered tool named ``*add`` with ``a=2, b=40``, then reports the result:
    ``sum: <what the tool returned>`` (``no add tool`` when none is offered)."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str | ChatMessage:
        results = [c for m in messages for c in m.contents if isinstance(c, FunctionResultContent)]
        if results:
            return f"sum: {results[-1].result}"
        adders = [t.name for t in (options.tools if options else []) if t.name.endswith("add")]
        if not adders:
            return "no add tool"
        call = FunctionCallContent(call_id="c1", name=adders[0], arguments={"a": 2, "b": 40})
        return ChatMessage.assistant(contents=[call])

    return FunctionChatClient(reply, model="tool-caller")


def config_workflow() -> Workflow:
    """The workflow of the run file ``AGENTIC_TEST_CONFIG`` names, on :func:`scripted` (for an
    ``agentic worker`` serving ``agentic run FILE --runtime nats://...``)."""
    from agentic_orchestrator._cli._build import ModelPool, build_workflow
    from agentic_orchestrator._cli._config import load_run_config

    loaded = load_run_config(os.environ["AGENTIC_TEST_CONFIG"])
    return build_workflow(loaded, ModelPool(loaded, override="python:tests.cli_models:scripted"))


def word_count(text: str) -> int:
    """How many words ``text`` has."""
    return len(text.split())


def pair_workflow() -> Workflow:
    """A writer then an editor on the scripted model (for ``agentic graph``)."""
    client = scripted()
    writer = ChatAgent(client, "Writer. Draft.", name="writer")
    editor = ChatAgent(client, "Editor. Edit.", name="editor")
    return SequentialBuilder(participants=[writer, editor], name="pair").build()
