"""ChatAgent: the tool loop, threads, structured output, streaming, background runs."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from agentic_core import (
    AgentError,
    AgentThread,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    ContinuationToken,
    FunctionCallContent,
    InMemoryStateStore,
    MemoryContext,
    Role,
    StateStoreMessageStore,
    UsageDetails,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient


def call(name: str, call_id: str = "c1", **arguments: Any) -> ChatMessage:
    return ChatMessage.assistant(
        contents=[FunctionCallContent(call_id=call_id, name=name, arguments=arguments)]
    )


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


async def test_a_plain_reply_becomes_the_response_and_joins_the_thread() -> None:
    client = ScriptedChatClient(["Hello!"])
    agent = ChatAgent(client, "Be nice.", name="greeter")
    thread = agent.get_new_thread()
    response = await agent.run("Hi", thread=thread)
    assert response.text == "Hello!"
    assert response.agent_id == agent.id
    [(sent, _options)] = client.calls
    assert [m.role for m in sent] == [Role.SYSTEM, Role.USER]
    assert sent[0].text == "Be nice."
    history = await thread.list_messages()
    assert [(m.role, m.text) for m in history] == [(Role.USER, "Hi"), (Role.ASSISTANT, "Hello!")]
    assert history[1].author_name == "greeter"


async def test_tool_calls_run_and_their_results_reach_the_model() -> None:
    client = ScriptedChatClient([call("add", a=2, b=3), "The sum is 5."])
    agent = ChatAgent(client, tools=[add])
    response = await agent.run("What is 2+3?")
    assert response.text == "The sum is 5."
    second_request = client.calls[1][0]
    result = second_request[-1].function_results[0]
    assert (result.call_id, result.result, result.is_error) == ("c1", 5, False)
    assert [t.name for t in client.calls[0][1].tools] == ["add"]  # type: ignore[union-attr]
    assert [m.role for m in response.messages] == [Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]


async def test_tool_calls_of_one_reply_run_concurrently() -> None:
    running = 0
    peak = 0

    async def slow(n: int) -> int:
        """Wait a bit."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return n

    reply = ChatMessage.assistant(
        contents=[
            FunctionCallContent(call_id=f"c{i}", name="slow", arguments={"n": i}) for i in range(3)
        ]
    )
    agent = ChatAgent(ScriptedChatClient([reply, "done"]), tools=[slow])
    await agent.run("go")
    assert peak == 3


async def test_tool_errors_bad_arguments_and_unknown_tools_become_error_results() -> None:
    def broken() -> None:
        """Always fails."""
        raise RuntimeError("kaput")

    reply = ChatMessage.assistant(
        contents=[
            FunctionCallContent(call_id="a", name="broken", arguments={}),
            FunctionCallContent(call_id="b", name="add", arguments={"a": "x", "b": 1}),
            FunctionCallContent(call_id="c", name="nope", arguments={}),
        ]
    )
    client = ScriptedChatClient([reply, "sorry"])
    agent = ChatAgent(client, tools=[broken, add])
    response = await agent.run("go")
    assert response.text == "sorry"
    results = {r.call_id: r for m in client.calls[1][0] for r in m.function_results}
    assert all(r.is_error for r in results.values())
    assert "RuntimeError: kaput" in results["a"].result
    assert "add" in results["b"].result
    assert "unknown tool 'nope'" in results["c"].result


async def test_a_single_tool_call_runs_in_the_runs_own_task() -> None:
    tasks: list[asyncio.Task[Any] | None] = []

    async def where() -> str:
        """Which task runs the tool."""
        tasks.append(asyncio.current_task())
        return "here"

    agent = ChatAgent(ScriptedChatClient([call("where"), "done"]), tools=[where])
    run = asyncio.ensure_future(agent.run("go"))
    response = await run

    assert response.text == "done"
    assert tasks == [run]  # awaited directly: no task of its own (gather would make one)


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("broken", {}, "Error: RuntimeError: kaput"),
        ("add", {"a": "x", "b": 1}, "Error: ToolError: invalid arguments for tool 'add'"),
        ("nope", {}, "Error: unknown tool 'nope' (available: add, broken)"),
    ],
    ids=["raises", "bad-arguments", "unknown-tool"],
)
async def test_a_single_failing_tool_call_becomes_an_error_result(
    name: str, arguments: dict[str, Any], expected: str
) -> None:
    def broken() -> None:
        """Always fails."""
        raise RuntimeError("kaput")

    client = ScriptedChatClient([call(name, **arguments), "sorry"])
    response = await ChatAgent(client, tools=[broken, add]).run("go")

    assert response.text == "sorry"
    [result] = client.calls[1][0][-1].function_results
    assert result.is_error
    assert result.call_id == "c1"
    assert str(result.result).startswith(expected)


@pytest.mark.parametrize("calls", [1, 2], ids=["one-call", "two-calls"])
async def test_cancelling_a_run_cancels_its_running_tools(calls: int) -> None:
    started = asyncio.Event()
    cancelled: list[int] = []

    async def wait_forever(n: int) -> None:
        """Never returns."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(n)
            raise

    reply = ChatMessage.assistant(
        contents=[
            FunctionCallContent(call_id=f"c{n}", name="wait_forever", arguments={"n": n})
            for n in range(calls)
        ]
    )
    agent = ChatAgent(ScriptedChatClient([reply, "never"]), tools=[wait_forever])
    thread = agent.get_new_thread()
    run = asyncio.ensure_future(agent.run("go", thread=thread))
    await started.wait()

    run.cancel()

    with pytest.raises(asyncio.CancelledError):
        await run
    assert sorted(cancelled) == list(range(calls))
    assert [m.text for m in await thread.list_messages()] == ["go"]  # the turn left no results


def test_tools_are_kept_as_given_when_they_are_tools_and_wrapped_when_functions() -> None:
    from agentic_core import FunctionTool, tool

    class NamedTool(FunctionTool[..., Any]):
        """A FunctionTool subclass."""

    class HandMade:
        """A Tool by the protocol, not a FunctionTool."""

        name = "hand_made"
        description = "made by hand"

        @property
        def parameters(self) -> dict[str, Any]:
            return {"type": "object", "properties": {}}

        async def invoke(self, arguments: Any) -> str:
            return "ok"

    def plain(x: int) -> int:
        """A plain function."""
        return x

    made, subclassed, by_hand = tool(add), NamedTool(add, name="named"), HandMade()

    agent = ChatAgent(ScriptedChatClient([]), tools=[made, subclassed, by_hand, plain])

    assert agent.tools[:3] == [made, subclassed, by_hand]
    assert [type(t) for t in agent.tools] == [FunctionTool, NamedTool, HandMade, FunctionTool]
    assert agent.tools[3].name == "plain"


async def test_a_tool_timeout_becomes_an_error_result() -> None:
    async def hang() -> None:
        """Never returns."""
        await asyncio.sleep(30)

    client = ScriptedChatClient([call("hang"), "gave up"])
    agent = ChatAgent(client, tools=[hang], tool_timeout_s=0.05)
    await agent.run("go")
    [result] = client.calls[1][0][-1].function_results
    assert result.is_error
    assert "timed out after 0.05 s" in result.result


class ProviderTimeoutError(TimeoutError):
    """What an LLM client raises when its server does not answer (a TimeoutError subclass)."""


@pytest.mark.parametrize("tool_timeout_s", [None, 30.0])
async def test_a_tools_own_timeout_error_is_reported_as_its_error_not_as_a_timeout(
    tool_timeout_s: float | None,
) -> None:
    async def ask_another_model() -> None:
        """Calls a model that does not answer."""
        raise ProviderTimeoutError("the model server did not answer in 5 s")

    client = ScriptedChatClient([call("ask_another_model"), "ok"])
    agent = ChatAgent(client, tools=[ask_another_model], tool_timeout_s=tool_timeout_s)
    await agent.run("go")
    [result] = client.calls[1][0][-1].function_results
    assert result.is_error
    assert result.result == ("Error: ProviderTimeoutError: the model server did not answer in 5 s")


async def test_max_tool_iterations_ends_with_a_call_that_may_not_use_tools() -> None:
    client = ScriptedChatClient([call("add", a=1, b=1), call("add", "c2", a=2, b=2), "final"])
    agent = ChatAgent(client, tools=[add], max_tool_iterations=2)
    response = await agent.run("loop")
    assert response.text == "final"
    last_options = client.calls[-1][1]
    assert last_options is not None
    assert last_options.tool_choice == "none"
    assert last_options.tools == []


class Weather(BaseModel):
    city: str
    celsius: float


async def test_response_format_is_parsed_into_value() -> None:
    client = ScriptedChatClient(['{"city": "Oslo", "celsius": -3.5}'])
    response = await ChatAgent(client).run("weather?", response_format=Weather)
    assert response.value == Weather(city="Oslo", celsius=-3.5)
    assert client.calls[0][1] is not None
    assert client.calls[0][1].response_format is Weather


async def test_invalid_json_gets_one_corrective_retry() -> None:
    client = ScriptedChatClient(["not json", '{"city": "Rome", "celsius": 20}'])
    response = await ChatAgent(client).run("weather?", response_format=Weather)
    assert response.value == Weather(city="Rome", celsius=20)
    correction = client.calls[1][0][-1]
    assert correction.role is Role.USER
    assert "Weather" in correction.text


async def test_invalid_json_twice_is_a_clear_agent_error() -> None:
    client = ScriptedChatClient(["nope", '{"city": 3}'])
    with pytest.raises(AgentError, match=r"not a valid Weather even after one correction"):
        await ChatAgent(client, name="w").run("weather?", response_format=Weather)


async def test_run_stream_streams_text_and_runs_tools() -> None:
    client = ScriptedChatClient([call("add", a=1, b=2), "three is the answer"], chunk_size=4)
    agent = ChatAgent(client, tools=[add], name="streamer")
    thread = agent.get_new_thread()
    updates = [u async for u in agent.run_stream("1+2?", thread=thread)]
    assert "".join(u.text for u in updates) == "three is the answer"
    assert len([u for u in updates if u.text]) > 1
    assert updates[-1].done
    assert all(u.author_name == "streamer" for u in updates)
    history = await thread.list_messages()
    assert [m.role for m in history] == [Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT]


async def test_one_agent_serves_a_hundred_threads_without_crosstalk() -> None:
    async def echo(messages: Sequence[ChatMessage], options: ChatOptions | None) -> str:
        await asyncio.sleep(0.001)
        return f"echo {messages[-1].text}"

    agent = ChatAgent(FunctionChatClient(echo))
    threads = [agent.get_new_thread(user_id=f"u{i}") for i in range(100)]
    responses = await asyncio.gather(*(agent.run(f"m{i}", thread=t) for i, t in enumerate(threads)))
    assert [r.text for r in responses] == [f"echo m{i}" for i in range(100)]
    for i, thread in enumerate(threads):
        assert [m.text for m in await thread.list_messages()] == [f"m{i}", f"echo m{i}"]


async def test_usage_is_summed_over_the_model_calls() -> None:
    from agentic_core import ChatResponse

    replies = [
        ChatResponse(
            message=call("add", a=1, b=1), usage=UsageDetails(input_tokens=3, total_tokens=3)
        ),
        ChatResponse(
            message=ChatMessage.assistant("2"), usage=UsageDetails(output_tokens=2, total_tokens=2)
        ),
    ]
    response = await ChatAgent(ScriptedChatClient(replies), tools=[add]).run("1+1")
    assert response.usage == UsageDetails(input_tokens=3, output_tokens=2, total_tokens=5)


async def test_memory_context_is_injected_as_system_messages() -> None:
    class Remember:
        async def before_invoke(
            self, agent_id: str, thread: AgentThread, ctx: MemoryContext
        ) -> None:
            ctx.extra_instructions = f"user is {thread.user_id}"
            ctx.system_messages.append(ChatMessage.system("likes tea"))

        async def after_invoke(self, agent_id: str, thread: AgentThread, response: Any) -> None:
            thread.metadata["seen"] = response.text

        async def get_memories(self, agent_id: str, user_id: str | None) -> list[Any]:
            return []

        async def store_memory(self, agent_id: str, user_id: str | None, memory: Any) -> None:
            return None

        async def clear_memories(self, agent_id: str, user_id: str | None) -> None:
            return None

    client = ScriptedChatClient(["ok"])
    agent = ChatAgent(client, "base", memory_provider=Remember())
    thread = agent.get_new_thread(user_id="ada")
    await agent.run("hi", thread=thread)
    assert [m.text for m in client.calls[0][0]] == ["base", "user is ada", "likes tea", "hi"]
    assert thread.metadata["seen"] == "ok"


async def test_threads_round_trip_through_serialize() -> None:
    agent = ChatAgent(ScriptedChatClient(["one", "two"]))
    thread = agent.get_new_thread(user_id="u1")
    await agent.run("first", thread=thread)
    restored = AgentThread.deserialize(thread.serialize())
    assert restored.id == thread.id
    assert restored.user_id == "u1"
    assert await restored.list_messages() == await thread.list_messages()
    await agent.run("second", thread=restored)
    assert [m.text for m in await restored.list_messages()] == ["first", "one", "second", "two"]


async def test_threads_in_a_state_store_need_the_store_to_deserialize() -> None:
    store = InMemoryStateStore()
    agent = ChatAgent(ScriptedChatClient(["stored"]))
    thread = AgentThread(message_store=StateStoreMessageStore(store, "t1"))
    await agent.run("hello", thread=thread)
    stored = await store.get("threads/t1")
    assert isinstance(stored, list)
    assert len(stored) == 2
    with pytest.raises(AgentError, match="pass message_store="):
        AgentThread.deserialize(thread.serialize())
    again = AgentThread.deserialize(
        thread.serialize(), message_store=StateStoreMessageStore(store, "t1")
    )
    assert [m.text for m in await again.list_messages()] == ["hello", "stored"]


async def test_background_run_returns_a_token_then_the_response() -> None:
    gate = asyncio.Event()

    async def slow(messages: Sequence[ChatMessage], options: ChatOptions | None) -> str:
        await gate.wait()
        return "finally"

    agent = ChatAgent(FunctionChatClient(slow))
    started = await agent.run("go", background=True)
    token = started.continuation_token
    assert token is not None
    assert started.messages == []
    pending = await agent.run(continuation_token=token)
    assert pending.continuation_token is not None
    gate.set()
    await asyncio.sleep(0.01)
    revived = ContinuationToken.model_validate_json(token.model_dump_json())
    done = await agent.run(continuation_token=revived)
    assert done.continuation_token is None
    assert done.text == "finally"


async def test_run_stream_resumes_a_background_run_after_the_last_update_seen() -> None:
    client = ScriptedChatClient(["one two three four"], chunk_size=4)
    agent = ChatAgent(client)
    token = (await agent.run("go", background=True)).continuation_token
    assert token is not None
    first = [u async for u in agent.run_stream(continuation_token=token)]
    assert "".join(u.text for u in first) == "one two three four"
    assert first[-1].done
    middle = first[1].continuation_token
    assert middle is not None
    rest = [u async for u in agent.run_stream(continuation_token=middle)]
    assert "".join(u.text for u in rest) == "".join(u.text for u in first[2:])


async def test_an_unknown_continuation_token_is_a_clear_error() -> None:
    agent = ChatAgent(ScriptedChatClient([]))
    with pytest.raises(AgentError, match="unknown or expired continuation token"):
        await agent.run(continuation_token=ContinuationToken(task_id="nope"))


async def test_a_failed_background_run_reports_its_error_when_polled() -> None:
    agent = ChatAgent(ScriptedChatClient([]))
    token = (await agent.run("go", background=True)).continuation_token
    assert token is not None
    await asyncio.sleep(0.01)
    with pytest.raises(AgentError, match=r"background run .* failed"):
        await agent.run(continuation_token=token)


def test_as_agent_builds_a_chat_agent() -> None:
    client = ScriptedChatClient(["hi"])
    agent = client.as_agent("Be brief.", name="brief")
    assert isinstance(agent, ChatAgent)
    assert (agent.name, agent.instructions) == ("brief", "Be brief.")
