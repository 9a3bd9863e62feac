"""A pattern used as an agent inside another pattern (issue 29, item 1): the next model sees
the team's answer, as MAF's patterns-as-agents give it (the last agent's reply), never the
team's transcript as a JSON string and never the prompt a second time."""

from __future__ import annotations

from agentic_core import ChatMessage, Role
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import ConcurrentBuilder, SequentialBuilder


def _seen(messages: list[ChatMessage]) -> list[tuple[Role, str | None, str]]:
    return [(m.role, m.author_name, m.text) for m in messages]


async def test_a_sequential_team_inside_a_sequential_chain_hands_on_its_last_reply() -> None:
    researcher_model = ScriptedChatClient(["Tea was first brewed in China."])
    writer_model = ScriptedChatClient(["Leaves in hot water, an old story."])
    editor_model = ScriptedChatClient(["Approved."])
    researcher = researcher_model.as_agent("Find facts.", name="researcher")
    writer = writer_model.as_agent("Write one line.", name="writer")
    editor = editor_model.as_agent("Edit.", name="editor")
    team = SequentialBuilder(participants=[researcher, writer]).build().as_agent("team")

    result = await SequentialBuilder(participants=[team, editor]).build().run("A line on tea")

    (sent, _options) = editor_model.calls[0]
    assert _seen(sent) == [
        (Role.SYSTEM, None, "Edit."),
        (Role.USER, None, "A line on tea"),
        (Role.ASSISTANT, "writer", "Leaves in hot water, an old story."),
    ]
    assert not any(m.text.startswith(("[{", "{")) for m in sent)
    assert _seen(result.outputs[0]) == [
        (Role.USER, None, "A line on tea"),
        (Role.ASSISTANT, "writer", "Leaves in hot water, an old story."),
        (Role.ASSISTANT, "editor", "Approved."),
    ]


async def test_the_team_as_agent_answers_with_its_last_agents_reply() -> None:
    a1 = ScriptedChatClient(["first"]).as_agent(name="a1")
    a2 = ScriptedChatClient(["second"]).as_agent(name="a2")

    response = await SequentialBuilder(participants=[a1, a2]).build().as_agent().run("hi")

    assert _seen(response.messages) == [(Role.ASSISTANT, "a2", "second")]
    assert response.text == "second"


async def test_a_sequential_team_inside_a_concurrent_fan_out_reaches_the_aggregate() -> None:
    a1 = ScriptedChatClient(["draft"]).as_agent(name="a1")
    a2 = ScriptedChatClient(["polished"]).as_agent(name="a2")
    solo_model = ScriptedChatClient(["solo answer"])
    solo = solo_model.as_agent(name="solo")
    team = SequentialBuilder(participants=[a1, a2]).build().as_agent("team")

    result = await ConcurrentBuilder(participants=[team, solo]).build().run("question")

    assert [m.text for m in result.outputs[0]] == ["question", "polished", "solo answer"]
    assert _seen(solo_model.calls[0][0]) == [(Role.USER, None, "question")]


async def test_a_concurrent_team_as_agent_can_answer_with_every_participant() -> None:
    a1 = ScriptedChatClient(["from a1"]).as_agent(name="a1")
    a2 = ScriptedChatClient(["from a2"]).as_agent(name="a2")
    team = ConcurrentBuilder(participants=[a1, a2]).build().as_agent(reply="new_messages")

    response = await team.run("question")

    assert _seen(response.messages) == [
        (Role.ASSISTANT, "a1", "from a1"),
        (Role.ASSISTANT, "a2", "from a2"),
    ]
