"""SequentialBuilder's chain_only_agent_responses and output_from, as MAF's.

The chain_only tests are ports of microsoft/agent-framework's
``packages/orchestrations/tests/test_sequential.py``; their ``_CapturingAgent`` is a ChatAgent
whose FunctionChatClient records what it was shown. The last test ports the sample
``samples/03-workflows/orchestrations/sequential_chain_only_agent_responses.py``.
"""

from __future__ import annotations

import pytest

from agentic_core import AgentResponse, ChatAgent, ChatMessage, ChatOptions, Role
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import OrchestrationConfigError, SequentialBuilder

from ._helpers import spoken_lines


class _CapturingAgent:
    """Agent that records the messages it received and returns a configurable reply."""

    def __init__(self, *, name: str, reply_text: str = "reply") -> None:
        self.reply_text = reply_text
        self.last_messages: list[ChatMessage] = []
        self.agent = ChatAgent(FunctionChatClient(self._reply), name=name)

    def _reply(self, messages: list[ChatMessage], options: ChatOptions | None) -> str:
        self.last_messages = list(messages)
        return self.reply_text


async def test_chain_only_agent_responses_false_passes_full_conversation() -> None:
    """Default (chain_only_agent_responses=False) passes full conversation to the second agent."""
    a1 = _CapturingAgent(name="A1", reply_text="A1 reply")
    a2 = _CapturingAgent(name="A2", reply_text="A2 reply")

    wf = SequentialBuilder(participants=[a1.agent, a2.agent], chain_only_agent_responses=False)
    await wf.build().run("hello")

    # Second agent should see full conversation: [user("hello"), assistant("A1 reply")]
    seen = a2.last_messages
    assert len(seen) == 2
    assert seen[0].role is Role.USER
    assert "hello" in seen[0].text
    assert seen[1].role is Role.ASSISTANT
    assert "A1 reply" in seen[1].text


async def test_chain_only_agent_responses_true_passes_only_agent_messages() -> None:
    """chain_only_agent_responses=True passes only the previous agent's response messages."""
    a1 = _CapturingAgent(name="A1", reply_text="A1 reply")
    a2 = _CapturingAgent(name="A2", reply_text="A2 reply")

    wf = SequentialBuilder(participants=[a1.agent, a2.agent], chain_only_agent_responses=True)
    await wf.build().run("hello")

    # Second agent should see only the assistant message: [assistant("A1 reply")]
    seen = a2.last_messages
    assert len(seen) == 1
    assert seen[0].role is Role.ASSISTANT
    assert "A1 reply" in seen[0].text


async def test_chain_only_agent_responses_three_agents() -> None:
    """chain_only_agent_responses=True with three agents: each sees only the prior agent's reply."""
    a1 = _CapturingAgent(name="A1", reply_text="A1 reply")
    a2 = _CapturingAgent(name="A2", reply_text="A2 reply")
    a3 = _CapturingAgent(name="A3", reply_text="A3 reply")

    wf = SequentialBuilder(
        participants=[a1.agent, a2.agent, a3.agent], chain_only_agent_responses=True
    )
    result = await wf.build().run("hello")

    # a2 should see only A1's reply
    assert len(a2.last_messages) == 1
    assert a2.last_messages[0].role is Role.ASSISTANT
    assert "A1 reply" in a2.last_messages[0].text

    # a3 should see only A2's reply
    assert len(a3.last_messages) == 1
    assert a3.last_messages[0].role is Role.ASSISTANT
    assert "A2 reply" in a3.last_messages[0].text

    # The output is still the whole conversation.
    assert spoken_lines(result.outputs[0]) == [
        "user: hello",
        "A1: A1 reply",
        "A2: A2 reply",
        "A3: A3 reply",
    ]


async def test_output_from_all_makes_every_agent_response_an_output_in_order() -> None:
    a1 = _CapturingAgent(name="A1", reply_text="A1 reply")
    a2 = _CapturingAgent(name="A2", reply_text="A2 reply")
    wf = SequentialBuilder(participants=[a1.agent, a2.agent], output_from="all").build()

    result = await wf.run("hello")

    assert all(isinstance(o, AgentResponse) for o in result.outputs)
    assert [o.messages[-1].text for o in result.outputs] == ["A1 reply", "A2 reply"]


async def test_output_from_names_the_agents_whose_responses_are_outputs() -> None:
    a1 = _CapturingAgent(name="A1", reply_text="A1 reply")
    a2 = _CapturingAgent(name="A2", reply_text="A2 reply")
    a3 = _CapturingAgent(name="A3", reply_text="A3 reply")
    wf = SequentialBuilder(
        participants=[a1.agent, a2.agent, a3.agent], output_from=[a1.agent, "A3"]
    ).build()

    result = await wf.run("hello")

    assert [o.messages[-1].text for o in result.outputs] == ["A1 reply", "A3 reply"]


def test_output_from_must_name_agents_of_the_chain() -> None:
    a1 = _CapturingAgent(name="A1")
    with pytest.raises(OrchestrationConfigError, match="'zed', not an agent"):
        SequentialBuilder(participants=[a1.agent], output_from=["zed"]).build()
    with pytest.raises(OrchestrationConfigError, match="'all' or a list"):
        SequentialBuilder(participants=[a1.agent], output_from="last")  # type: ignore[arg-type]


async def test_maf_sequential_chain_only_agent_responses_sample() -> None:
    """writer -> translator -> reviewer, each seeing only the previous agent's reply."""
    writer = ChatAgent(
        ScriptedChatClient(["Ride more, spend less: the eBike for every budget."]),
        "You are a concise copywriter. Provide a single, punchy marketing sentence based on "
        "the prompt.",
        name="writer",
    )
    translator = ChatAgent(
        ScriptedChatClient(["Roulez plus, dépensez moins : le vélo électrique pour tous."]),
        "You are a translator. Translate the given text into French. Output only the translation.",
        name="translator",
    )
    reviewer = ChatAgent(
        ScriptedChatClient(["A faithful, catchy translation."]),
        "You are a reviewer. Evaluate the quality of the marketing tagline.",
        name="reviewer",
    )

    # chain_only_agent_responses=True means each agent sees only the previous agent's reply,
    # not the full conversation history; every agent's reply is an output (MAF's sample
    # streams writer and translator as intermediate outputs and the reviewer as the output).
    workflow = SequentialBuilder(
        participants=[writer, translator, reviewer],
        chain_only_agent_responses=True,
        output_from="all",
    ).build()

    result = await workflow.run("Write a tagline for a budget-friendly eBike.")

    assert [(o.agent_id, o.text) for o in result.outputs] == [
        (writer.id, "Ride more, spend less: the eBike for every budget."),
        (translator.id, "Roulez plus, dépensez moins : le vélo électrique pour tous."),
        (reviewer.id, "A faithful, catchy translation."),
    ]
    translator_saw = translator.chat_client.calls[0][0]  # type: ignore[attr-defined]
    assert [m.text for m in translator_saw if m.role is not Role.SYSTEM] == [
        "Ride more, spend less: the eBike for every budget."
    ]
    reviewer_saw = reviewer.chat_client.calls[0][0]  # type: ignore[attr-defined]
    assert [m.text for m in reviewer_saw if m.role is not Role.SYSTEM] == [
        "Roulez plus, dépensez moins : le vélo électrique pour tous."
    ]
