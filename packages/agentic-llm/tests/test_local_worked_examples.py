"""The tool grammar's worked examples reach only requests that offer tools.

An agent without tools (the planner after a researcher that called one, say) must see the
conversation and nothing invented: shown the examples ("Add two numbers: 2 and 3", "The result
is 5."), a small model repeats them. No model is loaded: a stand-in records every request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from agentic_core import ChatMessage, ChatOptions, FunctionCallContent, Role, tool
from agentic_llm import LocalChatClient
from agentic_llm._local._tool_grammar import ToolReplyFormat
from agentic_llm._local._tool_prompt import render_tool_prompt


class RecordingLlama:
    """Stands in for ``LlamaEngine``: records each request, answers ``reply``."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply = "Morning: the park."
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def reset_usage(self) -> None:
        self.prompt_tokens = self.completion_tokens = 0

    def create_chat_completion(self, **body: Any) -> Any:
        self.requests.append(body)
        if body.get("stream"):
            return self._chunks()
        return {
            "id": "chatcmpl-1",
            "model": "x",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": self.reply},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14},
        }

    def _chunks(self) -> Iterator[dict[str, Any]]:
        self.prompt_tokens, self.completion_tokens = 10, 1
        yield {"choices": [{"index": 0, "delta": {"content": self.reply}}]}
        yield {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}

    def close(self) -> None:
        pass


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def weather(city: str) -> str:
    """Today's weather in a city."""
    return f"{city} weather: 3.5 °C below zero"


class Plan(BaseModel):
    morning: str


@pytest.fixture
def llama() -> RecordingLlama:
    return RecordingLlama()


@pytest.fixture
async def client(tmp_path: Path, llama: RecordingLlama) -> AsyncIterator[LocalChatClient]:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    async with LocalChatClient(path) as c:
        c._llama = llama  # pyright: ignore[reportAttributeAccessIssue] - a loaded stand-in
        yield c


def _after_a_researcher() -> list[ChatMessage]:
    """What a tool-less planner sees in a sequential run: a researcher called a tool."""
    call = FunctionCallContent(call_id="c1", name="weather", arguments={"city": "Oslo"})
    return [
        ChatMessage.system("You plan trips."),
        ChatMessage.user("Plan a day in Oslo"),
        ChatMessage(role=Role.ASSISTANT, contents=[call], author_name="researcher"),
        ChatMessage.tool("c1", "Oslo weather: 3.5 °C below zero"),
        ChatMessage.assistant("Oslo weather: 3.5 °C below zero.", author_name="researcher"),
    ]


def _example_marks(tools: tuple[Any, ...]) -> list[str]:
    """Text only the worked examples of ``tools`` contain (their questions, calls, results)."""
    with_examples = render_tool_prompt([], ToolReplyFormat(tools=tools, allow_tools=False))
    return [str(m["content"]) for m in with_examples[1:]]


def _shown(request: dict[str, Any]) -> str:
    return json.dumps(request.get("messages"), ensure_ascii=False)


def test_the_marks_are_what_a_request_with_tools_is_shown() -> None:
    """The fingerprints the tests below look for are real: a request with tools has them."""
    marks = _example_marks((add, weather))
    assert "Add two numbers: 2 and 3" in marks
    assert '{"answer": "The result is 5."}' in marks
    assert '{"tool": "weather", "arguments": {"city": "city"}}' in marks
    rendered = render_tool_prompt(
        [ChatMessage.user("Hi")], ToolReplyFormat(tools=(add,), allow_tools=False)
    )
    assert {"role": "user", "content": "Add two numbers: 2 and 3"} in rendered


@pytest.mark.parametrize(
    "options",
    [
        None,
        ChatOptions(),
        ChatOptions(tools=[]),
        ChatOptions(tools=[], tool_choice="auto"),
        ChatOptions(response_format=Plan),
        ChatOptions(tools=[add, weather], tool_choice="none"),
    ],
    ids=["no-options", "no-tools", "empty-tools", "empty-tools-auto", "response-format", "none"],
)
@pytest.mark.parametrize("stream", [False, True], ids=["generate", "stream"])
async def test_a_request_without_tools_is_never_shown_the_worked_examples(
    client: LocalChatClient,
    llama: RecordingLlama,
    options: ChatOptions | None,
    stream: bool,
) -> None:
    if options is not None and options.response_format is not None:
        llama.reply = '{"morning": "the park"}'
    if stream:
        updates = [u async for u in client.generate_stream(_after_a_researcher(), options)]
        assert "".join(u.text for u in updates) == llama.reply
    else:
        assert (await client.generate(_after_a_researcher(), options)).text == llama.reply
    [request] = llama.requests
    shown = _shown(request)
    for mark in _example_marks((add, weather)):
        assert json.dumps(mark, ensure_ascii=False)[1:-1] not in shown, (mark, shown)
    assert "The result is" not in shown
    # Only the conversation: the system message and the turns, in order.
    contents = [m.get("content") for m in request["messages"]]
    assert contents[:2] == ["You plan trips.", "Plan a day in Oslo"]
    assert contents[-1] == "Oslo weather: 3.5 °C below zero."


def test_a_tool_prompt_offering_no_tool_has_no_worked_examples() -> None:
    rendered = render_tool_prompt(_after_a_researcher(), ToolReplyFormat(tools=()))
    assert rendered[0]["role"] == "system"
    assert rendered[0]["content"] == 'You plan trips.\n\nReply with JSON: {"answer": "..."}.'
    assert [m["content"] for m in rendered[1:]] == [
        "Plan a day in Oslo",
        '{"tool": "weather", "arguments": {"city": "Oslo"}}',
        "Tool weather returned: Oslo weather: 3.5 °C below zero",
        '{"answer": "Oslo weather: 3.5 °C below zero."}',
    ]
