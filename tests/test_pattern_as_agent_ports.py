"""Microsoft Agent Framework's patterns used as agents, ported: the samples
``03-workflows/agents/sequential_workflow_as_agent.py`` and
``03-workflows/agents/concurrent_workflow_as_agent.py``, and the orchestrations tests
``test_sequential.py::test_sequential_as_agent_returns_only_last_agent_response`` and
``test_orchestration_intermediate_vs_terminal.py::test_sequential_as_agent_output_from_all_text``.

Their Foundry client (samples) and ``_EchoAgent`` (tests, answering ``f"{name} reply"``) are
our ``ScriptedChatClient``; MAF's ``Message`` is our ``ChatMessage``.
"""

from __future__ import annotations

from agentic_core import Agent, AgentResponse, ChatMessage, Role
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import ConcurrentBuilder, SequentialBuilder


def _echo_agent(name: str) -> Agent:
    """MAF's ``_EchoAgent``: one assistant message, ``f"{name} reply"``."""
    return ScriptedChatClient([f"{name} reply"]).as_agent(name=name)


def _conversation(messages: list[ChatMessage]) -> list[str]:
    """What the samples print: ``NN [name]`` and the text of each message."""
    lines: list[str] = []
    for i, msg in enumerate(messages, start=1):
        name = msg.author_name or msg.role
        lines.append(f"{i:02d} [{name}] {msg.text}")
    return lines


# -- samples/03-workflows/agents/sequential_workflow_as_agent.py -------------------------------


async def test_sequential_workflow_as_agent_sample() -> None:
    # 1) Create agents
    writer_client = ScriptedChatClient(["Go electric, save big."])
    reviewer_client = ScriptedChatClient(
        ["Catchy and straightforward! The tagline emphasizes both the electric aspect and the "
         "affordability of the eBike."]
    )  # fmt: skip
    writer = writer_client.as_agent(
        "You are a concise copywriter. Provide a single, punchy marketing sentence based on the "
        "prompt.",
        name="writer",
    )
    reviewer = reviewer_client.as_agent(
        "You are a thoughtful reviewer. Give brief feedback on the previous assistant message.",
        name="reviewer",
    )

    # 2) Build sequential workflow: writer -> reviewer
    workflow = SequentialBuilder(participants=[writer, reviewer]).build()

    # 3) Treat the workflow itself as an agent for follow-up invocations
    agent = workflow.as_agent()
    prompt = "Write a tagline for a budget-friendly eBike."
    agent_response = await agent.run(prompt)

    # Sample Output: ONLY the final agent's response (the "answer").
    assert agent_response.messages
    assert _conversation(agent_response.messages) == [
        "01 [reviewer] Catchy and straightforward! The tagline emphasizes both the electric "
        "aspect and the affordability of the eBike."
    ]
    # The reviewer saw the prompt and the writer's line, once each.
    (sent, _options) = reviewer_client.calls[0]
    assert [(m.role, m.author_name, m.text) for m in sent[1:]] == [
        (Role.USER, None, prompt),
        (Role.ASSISTANT, "writer", "Go electric, save big."),
    ]


# -- samples/03-workflows/agents/concurrent_workflow_as_agent.py -------------------------------


async def test_concurrent_workflow_as_agent_sample() -> None:
    # 1) Create three domain agents
    researcher_client = ScriptedChatClient(["Urban commuters want cheap, reliable e-bikes."])
    marketer_client = ScriptedChatClient(["Your city, your ride, your budget."])
    legal_client = ScriptedChatClient(["Disclose battery range limits and local e-bike rules."])
    researcher = researcher_client.as_agent(
        "You're an expert market and product researcher. Given a prompt, provide concise, "
        "factual insights, opportunities, and risks.",
        name="researcher",
    )
    marketer = marketer_client.as_agent(
        "You're a creative marketing strategist. Craft compelling value propositions and target "
        "messaging aligned to the prompt.",
        name="marketer",
    )
    legal = legal_client.as_agent(
        "You're a cautious legal/compliance reviewer. Highlight constraints, disclaimers, and "
        "policy concerns based on the prompt.",
        name="legal",
    )

    # 2) Build a concurrent workflow
    workflow = ConcurrentBuilder(participants=[researcher, marketer, legal]).build()

    # 3) Expose the concurrent workflow as an agent for easy reuse
    agent = workflow.as_agent()
    prompt = "We are launching a new budget-friendly electric bike for urban commuters."

    agent_response = await agent.run(prompt)
    # The agent_response contains messages from all participants.
    printed = [f"{message.author_name}: {message.text}" for message in agent_response.messages]
    assert printed == [
        "researcher: Urban commuters want cheap, reliable e-bikes.",
        "marketer: Your city, your ride, your budget.",
        "legal: Disclose battery range limits and local e-bike rules.",
    ]
    # Each participant got the prompt alone (fan-out), not the others' answers.
    for client in (researcher_client, marketer_client, legal_client):
        (sent, _options) = client.calls[0]
        assert [m.text for m in sent if m.role == Role.USER] == [prompt]
        assert not [m for m in sent if m.role == Role.ASSISTANT]


# -- packages/orchestrations/tests/test_sequential.py ------------------------------------------


async def test_sequential_as_agent_returns_only_last_agent_response() -> None:
    """`workflow.as_agent().run(prompt)` returns ONLY the last agent's messages — not the user
    input or earlier agents' replies. This is the core fix for the orchestration-as-agent
    output contract."""
    a1 = _echo_agent("A1")
    a2 = _echo_agent("A2")

    agent = SequentialBuilder(participants=[a1, a2]).build().as_agent()
    response = await agent.run("hello as_agent")

    assert isinstance(response, AgentResponse)
    # Only the last agent's reply — no user prompt, no agent1 messages.
    assert all(m.role == Role.ASSISTANT for m in response.messages)
    combined = " ".join(m.text for m in response.messages)
    assert "A2 reply" in combined
    assert "A1 reply" not in combined
    assert "hello as_agent" not in combined


# -- packages/orchestrations/tests/test_orchestration_intermediate_vs_terminal.py --------------


async def test_sequential_as_agent_output_from_all_text() -> None:
    """output_from makes designated participant replies normal response text content."""
    a = _echo_agent("A")
    b = _echo_agent("B")
    c = _echo_agent("C")

    workflow = SequentialBuilder(participants=[a, b, c], output_from=["A", "B", "C"]).build()
    agent = workflow.as_agent("seq")

    response = await agent.run("hi")
    text = " ".join(m.text for m in response.messages)
    assert "A reply" in text
    assert "B reply" in text
    assert "C reply" in text
