"""LocalChatClient's tool grammar: tool calls and answers as one JSON reply llama.cpp constrains.

The first part scripts the model's replies (no model loaded: exact about the prompt, the schema
and the parsing); the ``slow`` part runs the real SmolLM2-135M model, which without the grammar
answers "use the add tool" in prose.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    FinishReason,
    FunctionCallContent,
    Role,
    Tool,
    tool,
)
from agentic_llm import LocalChatClient, ProviderError
from agentic_llm._local._reply_reader import ReplyReader
from agentic_llm._local._tool_grammar import ToolReplyFormat

# -- a scripted llama.cpp model -----------------------------------------------------------------


class ScriptedLlama:
    """Stands in for ``LlamaEngine``: answers each request with the next scripted reply text
    (streamed three characters at a time) and records the requests."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.replies: list[tuple[str, str]] = []  # (content, finish reason)
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def say(self, content: str, finish: str = "stop") -> None:
        self.replies.append((content, finish))

    def reset_usage(self) -> None:
        self.prompt_tokens = self.completion_tokens = 0

    def create_chat_completion(self, **body: Any) -> Any:
        self.requests.append(body)
        content, finish = self.replies.pop(0)
        if body.get("stream"):
            return self._chunks(content, finish)
        message = {"role": "assistant", "content": content}
        return {
            "id": "chatcmpl-1",
            "model": "x",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14},
        }

    def _chunks(self, content: str, finish: str) -> Iterator[dict[str, Any]]:
        self.prompt_tokens = 10
        for at in range(0, len(content), 3):
            self.completion_tokens += 1
            yield {"choices": [{"index": 0, "delta": {"content": content[at : at + 3]}}]}
        yield {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}

    def close(self) -> None:
        pass


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


class Point(BaseModel):
    x: int
    y: int


class PlotArguments(BaseModel):
    point: Point
    label: str


class Plot:
    """A tool whose parameter schema keeps ``$defs`` (core's ``@tool`` inlines them)."""

    name = "plot"
    description = "Plot a point."
    parameters: dict[str, Any] = PlotArguments.model_json_schema()

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        return PlotArguments.model_validate(arguments).label


@pytest.fixture
def llama() -> ScriptedLlama:
    return ScriptedLlama()


@asynccontextmanager
async def _client_with(
    tmp_path: Path, llama: ScriptedLlama, **options: Any
) -> AsyncIterator[LocalChatClient]:
    """A LocalChatClient on a placeholder file whose "loaded model" is ``llama``."""
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    async with LocalChatClient(path, **options) as c:
        c._llama = llama  # pyright: ignore[reportAttributeAccessIssue] - a loaded stand-in
        yield c


@pytest.fixture
async def client(tmp_path: Path, llama: ScriptedLlama) -> AsyncIterator[LocalChatClient]:
    async with _client_with(tmp_path, llama) as c:
        yield c


QUESTION = [ChatMessage.user("What is 6 times 7?")]
TOOLS = ChatOptions(tools=[add, multiply])


def _schema(request: dict[str, Any]) -> dict[str, Any]:
    response_format = request["response_format"]
    assert response_format["type"] == "json_object"
    return response_format["schema"]


def _branch_keys(schema: dict[str, Any]) -> list[list[str]]:
    branches = schema.get("anyOf", [schema])
    return [list(branch["properties"]) for branch in branches]


def _after_one_call(result: object = 42) -> list[ChatMessage]:
    call = FunctionCallContent(call_id="c1", name="multiply", arguments={"a": 6, "b": 7})
    return [
        *QUESTION,
        ChatMessage(role=Role.ASSISTANT, contents=[call]),
        ChatMessage.tool("c1", result),
    ]


# -- the request ----------------------------------------------------------------------------------


async def test_tools_go_into_the_prompt_and_the_reply_schema(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{"answer": "42"}')
    await client.generate(
        [ChatMessage.system("You do sums."), *QUESTION], TOOLS.model_copy(update={"seed": 3})
    )
    [request] = llama.requests
    assert "tools" not in request
    assert "tool_choice" not in request
    assert request["seed"] == 3
    schema = _schema(request)
    assert _branch_keys(schema) == [["tool", "arguments"], ["tool", "arguments"], ["answer"]]
    assert [b["properties"]["tool"] for b in schema["anyOf"][:2]] == [
        {"const": "add"},
        {"const": "multiply"},
    ]
    assert schema["anyOf"][1]["properties"]["arguments"] == multiply.parameters
    system, *examples, question = request["messages"]
    assert system["role"] == "system"
    assert system["content"].startswith("You do sums.\n\n")
    assert "multiply(a: integer, b: integer) - Multiply two numbers." in system["content"]
    assert examples == [
        {"role": "user", "content": "Add two numbers: 2 and 3"},
        {"role": "assistant", "content": '{"tool": "add", "arguments": {"a": 2, "b": 3}}'},
        {"role": "user", "content": "Multiply two numbers: 5 and 4"},
        {"role": "assistant", "content": '{"tool": "multiply", "arguments": {"a": 5, "b": 4}}'},
    ]
    assert question == {"role": "user", "content": "What is 6 times 7?"}


async def test_a_required_tool_call_offers_no_answer(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{"tool": "add", "arguments": {"a": 1, "b": 2}}')
    await client.generate(QUESTION, TOOLS.model_copy(update={"tool_choice": "required"}))
    assert _branch_keys(_schema(llama.requests[0])) == [["tool", "arguments"]] * 2


async def test_tool_results_are_written_as_text_and_the_model_must_then_answer(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{"answer": "The result is 42."}')
    response = await client.generate(_after_one_call(), TOOLS)
    assert response.text == "The result is 42."
    [request] = llama.requests
    assert _branch_keys(_schema(request)) == [["answer"]]
    assert request["messages"][-3:] == [
        {"role": "user", "content": "What is 6 times 7?"},
        {"role": "assistant", "content": '{"tool": "multiply", "arguments": {"a": 6, "b": 7}}'},
        {"role": "user", "content": "Tool multiply returned: 42"},
    ]
    # The examples show a result followed by an answer that uses it.
    assert {"role": "user", "content": "Tool multiply returned: 9"} in request["messages"]


async def test_tool_rounds_none_lets_the_model_call_on(
    tmp_path: Path, llama: ScriptedLlama
) -> None:
    async with _client_with(tmp_path, llama, tool_rounds=None) as client:
        llama.say('{"tool": "add", "arguments": {"a": 42, "b": 1}}')
        response = await client.generate(_after_one_call(), TOOLS)
    assert response.message.function_calls[0].arguments == {"a": 42, "b": 1}
    assert _branch_keys(_schema(llama.requests[0]))[:2] == [["tool", "arguments"]] * 2


def test_tool_rounds_below_one_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF")
    with pytest.raises(ValueError, match="tool_rounds must be >= 1 or None"):
        LocalChatClient(path, tool_rounds=0)


async def test_a_call_repeating_an_answered_one_is_replaced_by_an_answer(
    tmp_path: Path, llama: ScriptedLlama
) -> None:
    async with _client_with(tmp_path, llama, tool_rounds=None) as client:
        llama.say('{"tool": "multiply", "arguments": {"a": 6, "b": 7}}')
        llama.say('{"answer": "42"}')
        response = await client.generate(_after_one_call(), TOOLS)
    assert response.text == "42"
    assert response.message.function_calls == []
    assert response.usage.total_tokens == 28  # both requests
    assert _branch_keys(_schema(llama.requests[1])) == [["answer"]]


async def test_error_results_say_the_tool_failed(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    history = _after_one_call()
    history[-1] = ChatMessage.tool("c1", "division by zero", is_error=True)
    llama.say('{"answer": "It failed."}')
    await client.generate(history, TOOLS)
    assert llama.requests[0]["messages"][-1] == {
        "role": "user",
        "content": "Tool multiply failed: division by zero",
    }


def test_nested_parameter_schemas_keep_their_definitions_at_the_root() -> None:
    schema = ToolReplyFormat(tools=(Plot(), add)).schema()
    arguments = schema["anyOf"][0]["properties"]["arguments"]
    assert arguments["properties"]["point"] == {"$ref": "#/$defs/plot__Point"}
    assert set(schema["$defs"]) == {"plot__Point"}
    # test_real_model_follows_a_schema_with_hoisted_definitions: llama.cpp resolves the refs.


# -- the reply ------------------------------------------------------------------------------------


async def test_a_tool_reply_becomes_a_function_call_with_a_new_id(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{ "tool": "multiply", "arguments": { "a": 6, "b": 7 } }')
    llama.say('{"tool": "multiply", "arguments": {"a": 6, "b": 7}}')
    first = await client.generate(QUESTION, TOOLS)
    second = await client.generate(QUESTION, TOOLS)
    [call] = first.message.function_calls
    assert (call.name, call.arguments) == ("multiply", {"a": 6, "b": 7})
    assert call.call_id.startswith("call_")
    assert call.call_id != second.message.function_calls[0].call_id
    assert first.finish_reason is FinishReason.TOOL_CALLS
    assert first.text == ""
    assert first.usage.total_tokens == 14


async def test_an_answer_reply_becomes_text(client: LocalChatClient, llama: ScriptedLlama) -> None:
    llama.say('{"answer": "Bonjour, \\"ami\\" !"}')
    response = await client.generate(QUESTION, TOOLS)
    assert response.text == 'Bonjour, "ami" !'
    assert response.message.function_calls == []
    assert response.finish_reason is FinishReason.STOP


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("add 6 and 7", "not JSON"),
        ('["add"]', "not a JSON object"),
        (
            '{"tool": "divide", "arguments": {}}',
            r"names no offered tool \(offered: add, multiply\)",
        ),
        ('{"tool": "add", "arguments": [6, 7]}', "arguments are not a JSON object"),
        ('{"answer": 42}', "answer is not a string"),
        ('{"result": 42}', "neither of"),
    ],
)
async def test_a_malformed_reply_is_a_provider_error_naming_the_problem(
    client: LocalChatClient, llama: ScriptedLlama, reply: str, why: str
) -> None:
    # Only possible without the grammar (or with a schema llama.cpp cannot compile): the
    # parsing does not trust it.
    llama.say(reply)
    with pytest.raises(ProviderError, match=why) as caught:
        await client.generate(QUESTION, TOOLS)
    assert caught.value.provider == "local"
    assert "tiny.gguf" in str(caught.value)


async def test_a_tool_call_cut_by_max_tokens_is_an_error_saying_so(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{"tool": "add", "arguments": {"a": 6', "length")
    with pytest.raises(ProviderError, match="max_tokens"):
        await client.generate(QUESTION, TOOLS)


async def test_an_answer_cut_by_max_tokens_keeps_its_text(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{"answer": "The result is a very long', "length")
    response = await client.generate(QUESTION, TOOLS)
    assert response.text == "The result is a very long"
    assert response.finish_reason is FinishReason.LENGTH


class Verdict(BaseModel):
    value: int
    unit: Literal["sandwiches", "apples"]


async def test_response_format_is_the_answer_branch_and_is_parsed(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{"answer": {"value": 12, "unit": "sandwiches"}}')
    options = TOOLS.model_copy(update={"response_format": Verdict})
    response = await client.generate(QUESTION, options)
    assert response.value == Verdict(value=12, unit="sandwiches")
    assert json.loads(response.text) == {"value": 12, "unit": "sandwiches"}
    answer = _schema(llama.requests[0])["anyOf"][-1]["properties"]["answer"]
    assert answer["properties"]["unit"] == Verdict.model_json_schema()["properties"]["unit"]


async def test_tool_grammar_off_sends_the_tools_to_llama_cpp(
    tmp_path: Path, llama: ScriptedLlama
) -> None:
    async with _client_with(tmp_path, llama, tool_grammar=False) as client:
        llama.say("Use the multiply tool.")
        response = await client.generate(QUESTION, TOOLS.model_copy(update={"tool_choice": "auto"}))
    assert response.text == "Use the multiply tool."
    [request] = llama.requests
    assert [t["function"]["name"] for t in request["tools"]] == ["add", "multiply"]
    assert request["tool_choice"] == "auto"
    assert "response_format" not in request


async def test_a_named_tool_choice_goes_to_the_engine_in_openai_shape(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    # The engine constrains the reply to the named tool's arguments (the real-model tests below).
    llama.say("ignored by this stand-in")
    await client.generate(QUESTION, TOOLS.model_copy(update={"tool_choice": "multiply"}))
    assert llama.requests[0]["tool_choice"] == {
        "type": "function",
        "function": {"name": "multiply"},
    }
    assert "response_format" not in llama.requests[0]


# -- streaming ------------------------------------------------------------------------------------


async def test_a_streamed_answer_comes_piece_by_piece(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{"answer": "The result is 42, my friend."}')
    updates = [u async for u in client.generate_stream(QUESTION, TOOLS)]
    pieces = [u.text for u in updates if u.text]
    assert len(pieces) > 3
    assert "".join(pieces) == "The result is 42, my friend."
    response = ChatResponse.from_updates(updates)
    assert response.text == "The result is 42, my friend."
    assert response.finish_reason is FinishReason.STOP
    assert response.usage.output_tokens > 0
    assert llama.requests[0]["stream"] is True


async def test_a_streamed_tool_call_comes_whole_at_the_end(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say('{"tool": "multiply", "arguments": {"a": 6, "b": 7}}')
    updates = [u async for u in client.generate_stream(QUESTION, TOOLS)]
    assert [u.text for u in updates if u.text] == []
    [last] = [u for u in updates if u.tool_call_deltas]
    assert last is updates[-1]
    response = ChatResponse.from_updates(updates)
    [call] = response.message.function_calls
    assert (call.name, call.arguments) == ("multiply", {"a": 6, "b": 7})
    assert call.call_id.startswith("call_")
    assert response.finish_reason is FinishReason.TOOL_CALLS
    assert all(u.model == "tiny" for u in updates)


async def test_a_streamed_repeated_call_is_replaced_by_a_streamed_answer(
    tmp_path: Path, llama: ScriptedLlama
) -> None:
    async with _client_with(tmp_path, llama, tool_rounds=None) as client:
        llama.say('{"tool": "multiply", "arguments": {"a": 6, "b": 7}}')
        llama.say('{"answer": "It is 42."}')
        updates = [u async for u in client.generate_stream(_after_one_call(), TOOLS)]
    response = ChatResponse.from_updates(updates)
    assert response.text == "It is 42."
    assert response.message.function_calls == []
    assert len(llama.requests) == 2


async def test_a_malformed_streamed_reply_raises(
    client: LocalChatClient, llama: ScriptedLlama
) -> None:
    llama.say("add them")
    with pytest.raises(ProviderError, match="not JSON"):
        async for _ in client.generate_stream(QUESTION, TOOLS):
            pass
    assert not client._lock.locked()


@pytest.mark.parametrize("size", [1, 2, 5])
def test_the_reply_reader_decodes_escapes_split_across_pieces(size: int) -> None:
    reply = '{ "answer": "a \\"b\\" \\u00e9 \\ud83d\\ude00 \\\\ c\\nd" }'
    reader = ReplyReader()
    text = "".join(reader.feed(reply[at : at + size]) for at in range(0, len(reply), size))
    assert text == json.loads(reply)["answer"]
    assert reader.branch == "answer"
    assert reader.raw == reply


def test_the_reply_reader_yields_nothing_for_a_tool_call() -> None:
    reader = ReplyReader()
    reply = '{"tool": "add", "arguments": {"a": "\\"x\\""}}'
    assert [reader.feed(c) for c in reply] == [""] * len(reply)
    assert reader.branch == "tool"


# -- the real model (SmolLM2-135M-Instruct) -------------------------------------------------------


@pytest.fixture(scope="module")
def smollm2(smollm2_model: Path) -> Iterator[LocalChatClient]:
    """One loaded model for the module: loading it once, and llama.cpp reusing the prompt
    prefix the requests share (system prompt and examples), keeps these tests quick."""
    client = LocalChatClient(smollm2_model)
    yield client
    asyncio.run(client.aclose())  # the client serves any event loop, one at a time


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
async def test_real_model_calls_the_matching_tool_with_valid_arguments(
    smollm2: LocalChatClient, seed: int
) -> None:
    question = [ChatMessage.user("4 friends each eat 3 sandwiches, how many sandwiches?")]
    response = await smollm2.generate(question, TOOLS.model_copy(update={"seed": seed}))
    [call] = response.message.function_calls
    assert call.name == "multiply"
    assert set(call.arguments) == {"a", "b"}  # valid for the schema: both, integers
    assert {type(v) for v in call.arguments.values()} == {int}
    assert sorted(call.arguments.values()) == [3, 4]
    assert response.finish_reason is FinishReason.TOOL_CALLS


@pytest.mark.slow
async def test_real_model_agent_calls_the_tool_then_answers_with_its_result(
    smollm2: LocalChatClient,
) -> None:
    agent = ChatAgent(smollm2, tools=[add, multiply], options=ChatOptions(seed=0))
    response = await agent.run("What is 17 plus 25?")
    assert [m.role for m in response.messages] == [Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]
    [call] = response.messages[0].function_calls
    assert (call.name, call.arguments) == ("add", {"a": 17, "b": 25})
    assert "42" in response.text


@pytest.mark.slow
async def test_real_model_streams_the_call_then_the_answer(smollm2: LocalChatClient) -> None:
    agent = ChatAgent(smollm2, tools=[add, multiply], options=ChatOptions(seed=1))
    texts: list[str] = []
    final = None
    async for update in agent.run_stream("What is 6 times 7?"):
        if update.done:
            final = update.response
        elif update.text:
            texts.append(update.text)
    assert final is not None
    [call] = final.messages[0].function_calls
    assert call.name == "multiply"
    assert sorted(call.arguments.values()) == [6, 7]
    assert len(texts) > 1  # the answer streamed, not delivered whole
    assert "42" in "".join(texts)
    assert "".join(texts) == final.text


@pytest.mark.slow
async def test_real_model_follows_a_schema_with_hoisted_definitions(
    smollm2: LocalChatClient,
) -> None:
    # llama.cpp refuses a schema whose refs it cannot resolve (an InvalidRequestError).
    options = ChatOptions(tools=[Plot(), add], tool_choice="required", seed=0, max_tokens=64)
    response = await smollm2.generate([ChatMessage.user("Plot the point (2, 3) as A.")], options)
    [call] = response.message.function_calls
    if call.name == "plot":
        PlotArguments.model_validate(call.arguments)
    else:
        assert set(call.arguments) == {"a", "b"}


@pytest.mark.slow
async def test_real_model_answers_from_a_tool_result(smollm2: LocalChatClient) -> None:
    response = await smollm2.generate(_after_one_call(result=42), TOOLS)
    assert response.message.function_calls == []
    assert "42" in response.text


@pytest.mark.slow
async def test_real_model_without_the_grammar_answers_in_prose(smollm2_model: Path) -> None:
    async with LocalChatClient(smollm2_model, tool_grammar=False) as client:
        response = await client.generate(
            QUESTION, TOOLS.model_copy(update={"tool_choice": "auto", "seed": 0, "max_tokens": 24})
        )
    assert response.message.function_calls == []  # the GGUF template ignores the tools
    assert response.text.strip()


@pytest.mark.slow
@pytest.mark.parametrize("tool_grammar", [True, False])
@pytest.mark.parametrize("choice", ["multiply", "required"])
async def test_real_model_a_forced_tool_gets_schema_valid_arguments(
    smollm2_model: Path, tool_grammar: bool, choice: str
) -> None:
    """A named tool (or ``"required"`` with one tool offered, without the tool grammar): the
    engine constrains the reply to the tool's parameter schema, which llama.cpp alone ignores."""
    tools: list[Tool] = [multiply] if choice == "required" else [add, multiply]
    options = ChatOptions(tools=tools, tool_choice=choice, seed=0, max_tokens=32)
    async with LocalChatClient(smollm2_model, tool_grammar=tool_grammar) as client:
        response = await client.generate(QUESTION, options)
        streamed = ChatResponse.from_updates(
            [u async for u in client.generate_stream(QUESTION, options)]
        )
    for reply in (response, streamed):
        [call] = reply.message.function_calls
        assert call.name == "multiply"
        assert set(call.arguments) == {"a", "b"}
        assert {type(v) for v in call.arguments.values()} == {int}
        assert call.call_id.startswith("call_")
        assert reply.finish_reason is FinishReason.TOOL_CALLS
    assert (
        streamed.message.function_calls[0].arguments == response.message.function_calls[0].arguments
    )


class Route(BaseModel):
    route: Literal["billing", "technical", "sales"]


class Plan(BaseModel):
    # Bounded: the grammar closes the list (a small model would list steps until max_tokens).
    steps: list[Literal["search", "summarize", "write", "review"]] = Field(
        min_length=1, max_length=3
    )


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
async def test_real_model_router_and_plan_schemas_always_parse(
    smollm2: LocalChatClient, seed: int
) -> None:
    ask = "My invoice is wrong and my laptop will not start. Route it, then plan the work."
    for schema in (Route, Plan):
        options = ChatOptions(seed=seed, max_tokens=48, response_format=schema)
        response = await smollm2.generate([ChatMessage.user(ask)], options)
        assert isinstance(response.value, schema), response.text
