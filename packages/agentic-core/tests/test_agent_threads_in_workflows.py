"""An AgentExecutor keeps one conversation per run, and agents' default options reach workflows.

The guessing game of Microsoft Agent Framework's samples (human-in-the-loop) is the model: the
agent guesses, a human answers "higher", the agent guesses again, remembering its first turn,
with structured output set in the agent's default options.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    AgentExecutor,
    AgentExecutorResponse,
    AgentResponse,
    AgentRunUpdateEvent,
    BoundedMemo,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Executor,
    InMemoryCheckpointStore,
    Runtime,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowOutputEvent,
    executor,
    handler,
    response_handler,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient


class GuessOutput(BaseModel):
    guess: int


class TurnManager(Executor):
    """Starts the game, asks the human about each guess, sends the feedback back."""

    @handler
    async def start(self, _: str, ctx: WorkflowContext[list[ChatMessage]]) -> None:
        await ctx.send_message([ChatMessage.user("Start by making your first guess.")])

    @handler
    async def on_agent(self, result: AgentExecutorResponse, ctx: WorkflowContext) -> None:
        guess = result.agent_response.value
        if not isinstance(guess, GuessOutput):
            raise RuntimeError(f"no parsed GuessOutput in the agent's response: {guess!r}")
        await ctx.request_info(f"The agent guessed: {guess.guess}.", str)

    @response_handler
    async def on_feedback(
        self, prompt: str, feedback: str, ctx: WorkflowContext[list[ChatMessage], str]
    ) -> None:
        if feedback == "correct":
            await ctx.yield_output(prompt)
            return
        await ctx.send_message([ChatMessage.user(f"Feedback: {feedback}")])


def guessing_game(
    replies: Sequence[str], *, store: InMemoryCheckpointStore | None = None
) -> tuple[Any, ScriptedChatClient]:
    client = ScriptedChatClient(list(replies))
    agent = ChatAgent(
        client,
        "You guess a number between 1 and 10.",
        name="GuessingAgent",
        options=ChatOptions(response_format=GuessOutput),
    )
    turns, guesser = TurnManager("turn_manager"), AgentExecutor(agent, id="guesser")
    builder = (
        WorkflowBuilder("guessing-game", max_supersteps=30)
        .set_start_executor(turns)
        .add_edge(turns, guesser)
        .add_edge(guesser, turns)
    )
    if store is not None:
        builder = builder.with_checkpointing(store)
    return builder.build(), client


def texts(messages: Sequence[ChatMessage]) -> list[tuple[str, str]]:
    return [(m.role.value, m.text) for m in messages]


async def test_the_agent_sees_its_earlier_turns_when_the_loop_comes_back(
    runtime: Runtime,
) -> None:
    workflow, client = guessing_game(['{"guess": 5}', '{"guess": 8}'])
    paused = await workflow.run("start", runtime=runtime)
    [request] = paused.pending_requests
    assert request.data == "The agent guessed: 5."
    paused = await workflow.run(responses={request.request_id: "higher"}, runtime=runtime)
    [request] = paused.pending_requests
    assert request.data == "The agent guessed: 8."
    second_call = client.calls[1][0]
    assert texts(second_call) == [
        ("system", "You guess a number between 1 and 10."),
        ("user", "Start by making your first guess."),
        ("assistant", '{"guess": 5}'),
        ("user", "Feedback: higher"),
    ]
    done = await workflow.run(responses={request.request_id: "correct"}, runtime=runtime)
    assert done.outputs == ["The agent guessed: 8."]


async def test_a_new_run_starts_a_fresh_conversation() -> None:
    workflow, client = guessing_game(['{"guess": 5}', '{"guess": 3}'])
    await workflow.run("start")
    await workflow.run("start")
    assert texts(client.calls[1][0])[1:] == [("user", "Start by making your first guess.")]


@pytest.mark.parametrize("fresh_process", [False, True], ids=["same_process", "fresh_process"])
async def test_the_conversation_survives_a_checkpoint_resume_in_another_workflow_object(
    fresh_process: bool,
) -> None:
    store = InMemoryCheckpointStore()
    workflow, _ = guessing_game(['{"guess": 5}'], store=store)
    paused = await workflow.run("start")
    [request] = paused.pending_requests
    if fresh_process:  # a process that never wrote that state: it parses the saved thread
        BoundedMemo.clear_all()
    # "Another process": the same graph built again, with a new model client.
    again, client = guessing_game(['{"guess": 8}'], store=store)
    await again.run(
        checkpoint_id=paused.last_checkpoint_id, responses={request.request_id: "higher"}
    )
    assert texts(client.calls[0][0])[1:] == [
        ("user", "Start by making your first guess."),
        ("assistant", '{"guess": 5}'),
        ("user", "Feedback: higher"),
    ]


async def test_the_agent_executor_object_keeps_no_conversation_of_a_run() -> None:
    workflow, _ = guessing_game(['{"guess": 5}'])
    await workflow.run("start")
    guesser = workflow.executors["guesser"]
    assert isinstance(guesser, AgentExecutor)
    assert guesser.snapshot_state() is None


# --- structured output from the agent's default options ---------------------------------------


async def test_run_parses_the_response_format_of_the_agents_default_options() -> None:
    agent = ChatAgent(
        ScriptedChatClient(['{"guess": 4}']), options=ChatOptions(response_format=GuessOutput)
    )
    response = await agent.run("guess")
    assert response.value == GuessOutput(guess=4)


async def test_run_parses_the_response_format_of_per_run_options() -> None:
    agent = ChatAgent(ScriptedChatClient(['{"guess": 2}']))
    response = await agent.run("guess", options=ChatOptions(response_format=GuessOutput))
    assert response.value == GuessOutput(guess=2)


async def test_the_last_streamed_update_carries_the_whole_response() -> None:
    agent = ChatAgent(
        ScriptedChatClient(['{"guess": 6}'], chunk_size=2),
        options=ChatOptions(response_format=GuessOutput),
    )
    updates = [u async for u in agent.run_stream("guess")]
    assert updates[-1].done
    final = updates[-1].response
    assert isinstance(final, AgentResponse)
    assert final.value == GuessOutput(guess=6)
    assert "".join(u.text for u in updates[:-1]) == '{"guess": 6}'


async def test_a_background_run_hands_over_the_whole_response_at_the_end() -> None:
    agent = ChatAgent(
        ScriptedChatClient(['{"guess": 1}']), options=ChatOptions(response_format=GuessOutput)
    )
    started = await agent.run("guess", background=True)
    assert started.continuation_token is not None
    updates = [u async for u in agent.run_stream(continuation_token=started.continuation_token)]
    assert updates[-1].response is not None
    assert updates[-1].response.value == GuessOutput(guess=1)


@pytest.mark.parametrize("streamed", [False, True])
async def test_an_agent_executor_sends_the_agents_real_response(
    streamed: bool, runtime: Runtime
) -> None:
    agent = ChatAgent(
        ScriptedChatClient(['{"guess": 9}'], chunk_size=3),
        name="guesser",
        options=ChatOptions(response_format=GuessOutput),
    )
    node = AgentExecutor(agent, output_response=True)

    @executor(id="after")
    async def after(result: AgentExecutorResponse, ctx: WorkflowContext[Never, Any]) -> None:
        await ctx.yield_output(result.agent_response.value)

    workflow = WorkflowBuilder().set_start_executor(node).add_edge(node, after).build()
    if streamed:
        events = [e async for e in workflow.run_stream("guess", runtime=runtime)]
        outputs = [e.data for e in events if isinstance(e, WorkflowOutputEvent)]
        assert any(isinstance(e, AgentRunUpdateEvent) for e in events)
    else:
        outputs = (await workflow.run("guess", runtime=runtime)).outputs
    response, value = outputs
    assert isinstance(response, AgentResponse)
    assert response.value == GuessOutput(guess=9)
    assert value == GuessOutput(guess=9)


async def test_a_chained_agent_receives_only_what_its_thread_does_not_hold() -> None:
    seen: list[list[tuple[str, str]]] = []

    def critic(messages: Sequence[ChatMessage], options: ChatOptions | None) -> str:
        seen.append(texts(messages))
        return f"critique {len(seen)}"

    writer = ChatAgent(ScriptedChatClient(["draft 1", "draft 2"]), name="writer")
    reviewer = ChatAgent(FunctionChatClient(critic), name="reviewer")
    write, review = AgentExecutor(writer, id="write"), AgentExecutor(reviewer, id="review")

    class Loop(Executor):
        @handler
        async def back(self, result: AgentExecutorResponse, ctx: WorkflowContext[Any, Any]) -> None:
            if result.agent_response.text == "critique 1":
                await ctx.send_message(result)
            else:
                await ctx.yield_output([json.dumps(t) for t in texts(result.full_conversation)])

    loop = Loop("loop")
    workflow = (
        WorkflowBuilder()
        .set_start_executor(write)
        .add_edge(write, review)
        .add_edge(review, loop)
        .add_edge(loop, write)
        .build()
    )
    [conversation] = (await workflow.run("write a poem")).outputs
    assert [tuple(json.loads(t)) for t in conversation] == [
        ("user", "write a poem"),
        ("assistant", "draft 1"),
        ("assistant", "critique 1"),
        ("assistant", "draft 2"),
        ("assistant", "critique 2"),
    ]
    # The reviewer's second call holds each message once.
    assert seen[1] == [
        ("user", "write a poem"),
        ("assistant", "draft 1"),
        ("assistant", "critique 1"),
        ("assistant", "draft 2"),
    ]


async def test_the_thread_state_is_one_string_and_the_older_list_form_still_restores() -> None:
    store = InMemoryCheckpointStore()
    workflow, _ = guessing_game(['{"guess": 5}'], store=store)
    paused = await workflow.run("start")
    latest = await store.latest(paused.run_id)
    assert latest is not None
    assert isinstance(latest.executor_states["guesser"]["messages"], str)

    # A checkpoint written before: the messages as a list of JSON objects.
    agent = ChatAgent(ScriptedChatClient(["unused"]), name="a")
    executor = AgentExecutor(agent, id="a")
    earlier = [ChatMessage.user("first question"), ChatMessage.assistant("first answer")]
    executor.restore_state(
        {"id": "t1", "metadata": {}, "messages": [m.model_dump(mode="json") for m in earlier]}
    )
    thread = await executor._thread()  # pyright: ignore[reportPrivateUsage]
    assert thread.id == "t1"
    assert texts(await thread.list_messages()) == texts(earlier)
