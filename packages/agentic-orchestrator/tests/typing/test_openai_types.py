# pyright: strict
"""Type-checked (pyright strict) uses of the OpenAI-compatible endpoint; also run as tests."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from agentic_core import Agent, ChatAgent, Workflow
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import SequentialBuilder, create_openai_app, serve_openai

TOKEN = "typing-test-token"  # noqa: S105 - a fake secret


def test_targets_may_be_a_list_or_a_mapping_of_agents_and_workflows() -> None:
    agent: Agent = ChatAgent(ScriptedChatClient(["hi"]), name="a")
    flow: Workflow = SequentialBuilder(participants=[agent], name="flow").build()

    app = create_openai_app([agent, flow], token=TOKEN, max_concurrent_runs=2, run_timeout_s=30)
    named = create_openai_app({"helper": agent, "team": flow}, allowed_hosts=["api.example"])
    asgi: Callable[[Any, Any, Any], Awaitable[None]] = app

    assert sorted(named.models) == ["helper", "team"]
    assert asgi is app
    serving: Coroutine[Any, Any, None] = serve_openai([agent], port=8000, token=TOKEN)
    serving.close()  # never awaited: only typed
