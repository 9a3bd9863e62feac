"""GroupChatBuilder's full history: tool calls and results stay in the shared conversation."""

from __future__ import annotations

from agentic_core import ChatAgent, ChatMessage, FunctionCallContent, Role, tool
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import GroupChatBuilder, round_robin_selector

from ._helpers import spoken_lines


@tool
def word_count(text: str) -> int:
    """Count the words of a text."""
    return len(text.split())


def _chat(*, full_history: bool) -> tuple[GroupChatBuilder, ChatAgent]:
    writer = ChatAgent(
        ScriptedChatClient(
            [
                ChatMessage(
                    role=Role.ASSISTANT,
                    contents=[
                        FunctionCallContent(
                            call_id="w1", name="word_count", arguments={"text": "tea is calm"}
                        )
                    ],
                ),
                "tea is calm",
            ]
        ),
        name="writer",
        tools=[word_count],
    )
    critic = ChatAgent(ScriptedChatClient(["three words, fine"]), name="critic")
    builder = GroupChatBuilder(
        participants=[writer, critic],
        selection_func=round_robin_selector,
        max_rounds=2,
        full_history=full_history,
    )
    return builder, critic


async def test_the_chat_keeps_only_what_was_said_by_default() -> None:
    builder, critic = _chat(full_history=False)
    result = await builder.build().run("a three-word slogan")
    assert spoken_lines(result.outputs[0]) == [
        "user: a three-word slogan",
        "writer: tea is calm",
        "critic: three words, fine",
    ]
    critic_saw = critic.chat_client.calls[0][0]  # type: ignore[attr-defined]
    assert [m.role for m in critic_saw] == [Role.USER, Role.ASSISTANT]


async def test_full_history_keeps_every_tool_call_and_result() -> None:
    builder, critic = _chat(full_history=True)
    result = await builder.build().run("a three-word slogan")
    conversation = result.outputs[0]
    assert [(m.role, m.author_name) for m in conversation] == [
        (Role.USER, None),
        (Role.ASSISTANT, "writer"),
        (Role.TOOL, None),
        (Role.ASSISTANT, "writer"),
        (Role.ASSISTANT, "critic"),
    ]
    assert conversation[1].function_calls[0].name == "word_count"
    assert conversation[2].function_results[0].result == 3
    critic_saw = critic.chat_client.calls[0][0]  # type: ignore[attr-defined]
    assert [m.role for m in critic_saw] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]


async def test_with_full_history_is_the_same_switch() -> None:
    builder, _ = _chat(full_history=False)
    result = await builder.with_full_history().build().run("a three-word slogan")
    assert len(result.outputs[0]) == 5
