"""What a workflow behind the Agent interface answers with: each known output type as messages
(never a JSON dump of one), a conversation output as the last agent's turn (as MAF's
patterns-as-agents answer), and ``AgentResponse.text`` computed from the messages."""

from __future__ import annotations

from typing import Any, Never

import pytest

from agentic_core import (
    AgentExecutorResponse,
    AgentResponse,
    ChatMessage,
    Executor,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    Workflow,
    WorkflowAgent,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)


class Yields(Executor):
    """Yields a fixed output built from the conversation it receives."""

    def __init__(self, make: Any) -> None:
        super().__init__("yields")
        self.make = make

    @handler
    async def answer(
        self, conversation: list[ChatMessage], ctx: WorkflowContext[Never, Any]
    ) -> None:
        await ctx.yield_output(self.make(conversation))


def _workflow(make: Any) -> Workflow:
    return WorkflowBuilder("outputs").set_start_executor(Yields(make)).build()


def _said(messages: list[ChatMessage]) -> list[tuple[str, str | None, str]]:
    return [(m.role.value, m.author_name, m.text) for m in messages]


def _a(text: str, author: str) -> ChatMessage:
    return ChatMessage.assistant(text, author_name=author)


async def test_a_conversation_output_answers_with_the_last_agents_turn() -> None:
    agent = _workflow(lambda conv: [*conv, _a("one", "a1"), _a("two", "a2")]).as_agent("team")

    response = await agent.run("hi")

    assert _said(response.messages) == [("assistant", "a2", "two")]
    assert response.text == "two"
    assert "[{" not in response.text


async def test_the_last_agents_turn_keeps_its_tool_calls_and_results() -> None:
    call = ChatMessage.assistant(
        contents=[FunctionCallContent(call_id="c1", name="add", arguments={"a": 1})],
        author_name="a2",
    )
    result = ChatMessage.tool("c1", "2")
    agent = _workflow(lambda conv: [*conv, _a("one", "a1"), call, result, _a("it is 2", "a2")])

    response = await agent.as_agent().run("hi")

    assert [m.role for m in response.messages] == [Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    assert isinstance(response.messages[1].contents[0], FunctionResultContent)
    assert response.text == "it is 2"


async def test_the_input_conversation_is_never_answered_back() -> None:
    agent = _workflow(lambda conv: [*conv]).as_agent()
    thread = agent.get_new_thread()

    response = await agent.run("hi", thread=thread)

    assert response.messages == []
    assert _said(await thread.list_messages()) == [("user", None, "hi")]


async def test_earlier_turns_of_the_thread_are_not_answered_again() -> None:
    agent = _workflow(lambda conv: [*conv, _a(f"seen {len(conv)}", "a1")]).as_agent()
    thread = agent.get_new_thread()
    await agent.run("first", thread=thread)

    second = await agent.run("second", thread=thread)

    assert _said(second.messages) == [("assistant", "a1", "seen 3")]


async def test_reply_new_messages_answers_with_everything_after_the_input() -> None:
    workflow = _workflow(lambda conv: [*conv, _a("one", "a1"), _a("two", "a2")])

    response = await WorkflowAgent(workflow, reply="new_messages").run("hi")

    assert _said(response.messages) == [("assistant", "a1", "one"), ("assistant", "a2", "two")]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda conv: AgentResponse(messages=[_a("done", "w")]), id="AgentResponse"),
        pytest.param(
            lambda conv: AgentExecutorResponse(
                executor_id="w",
                agent_response=AgentResponse(messages=[_a("done", "w")]),
                full_conversation=[*conv, _a("done", "w")],
            ),
            id="AgentExecutorResponse",
        ),
        pytest.param(lambda conv: _a("done", "w"), id="ChatMessage"),
    ],
)
async def test_known_outputs_become_their_messages(make: Any) -> None:
    response = await _workflow(make).as_agent().run("hi")

    assert _said(response.messages) == [("assistant", "w", "done")]
    assert response.text == "done"


async def test_a_streamed_conversation_output_answers_with_the_last_agents_turn() -> None:
    agent = _workflow(lambda conv: [*conv, _a("one", "a1"), _a("two", "a2")]).as_agent()

    updates = [u async for u in agent.run_stream("hi")]

    final = updates[-1].response
    assert final is not None
    assert _said(final.messages) == [("assistant", "a2", "two")]


# -- AgentResponse.text -----------------------------------------------------------------------


def test_text_is_computed_from_the_messages_when_not_given() -> None:
    response = AgentResponse(messages=[ChatMessage.user("q"), ChatMessage.assistant("answer")])

    assert response.text == "answer"


def test_text_is_the_last_assistant_message_that_has_text() -> None:
    call = ChatMessage.assistant(
        contents=[FunctionCallContent(call_id="c", name="f", arguments={})]
    )
    response = AgentResponse(messages=[ChatMessage.assistant("first"), call])

    assert response.text == "first"


def test_text_given_explicitly_is_kept_even_when_empty() -> None:
    messages = [ChatMessage.assistant("answer")]

    assert AgentResponse(messages=messages, text="summary").text == "summary"
    assert AgentResponse(messages=messages, text="").text == ""


def test_text_survives_a_json_round_trip_unchanged() -> None:
    explicit = AgentResponse(messages=[ChatMessage.assistant("answer")], text="")
    computed = AgentResponse(messages=[ChatMessage.assistant("answer")])

    assert AgentResponse.model_validate_json(explicit.model_dump_json()) == explicit
    assert AgentResponse.model_validate_json(computed.model_dump_json()) == computed
    assert AgentResponse.model_validate({"messages": [ChatMessage.assistant("x")]}).text == "x"


def test_an_older_serialized_response_with_empty_text_keeps_it() -> None:
    stored = {"messages": [ChatMessage.assistant("x").model_dump(mode="json")], "text": ""}

    assert AgentResponse.model_validate(stored).text == ""
