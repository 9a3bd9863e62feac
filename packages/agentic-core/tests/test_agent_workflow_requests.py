"""A workflow behind the Agent interface asks its caller with function calls and resumes on
their results: in one process, across processes through a checkpoint store, with or without
the thread (Microsoft Agent Framework's workflow-as-agent human-in-the-loop sample)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    AgentThread,
    ChatMessage,
    CheckpointStore,
    Executor,
    FileCheckpointStore,
    FunctionCallContent,
    Workflow,
    WorkflowAgent,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)


@dataclass
class ReviewRequest:
    request_id: str
    draft: str


class ReviewResponse(BaseModel):
    request_id: str
    feedback: str
    approved: bool


class Writer(Executor):
    """Drafts from the conversation; publishes once a review approves it."""

    @handler
    async def draft(
        self, conversation: list[ChatMessage], ctx: WorkflowContext[ReviewRequest]
    ) -> None:
        topic = conversation[-1].text
        await ctx.send_message(ReviewRequest(request_id="r1", draft=f"draft about {topic}"))

    @handler
    async def reviewed(self, review: ReviewResponse, ctx: WorkflowContext[Never, str]) -> None:
        verdict = "published" if review.approved else f"revised after: {review.feedback}"
        await ctx.yield_output(verdict)


class HumanReviewer(Executor):
    """Always escalates to a human manager."""

    @handler
    async def review(self, request: ReviewRequest, ctx: WorkflowContext) -> None:
        await ctx.request_info(request, ReviewResponse)

    @response_handler
    async def accept(
        self, request: ReviewRequest, response: ReviewResponse, ctx: WorkflowContext[ReviewResponse]
    ) -> None:
        del request
        await ctx.send_message(response)


def review_workflow(store: CheckpointStore | None = None) -> Workflow:
    writer, reviewer = Writer("writer"), HumanReviewer("reviewer")
    builder = (
        WorkflowBuilder("review")
        .set_start_executor(writer)
        .add_edge(writer, reviewer)
        .add_edge(reviewer, writer)
    )
    if store is not None:
        builder = builder.with_checkpointing(store)
    return builder.build()


def request_calls(messages: list[ChatMessage]) -> list[FunctionCallContent]:
    name = WorkflowAgent.REQUEST_INFO_FUNCTION_NAME
    assert name == "request_info"
    return [c for m in messages for c in m.function_calls if c.name == name]


async def test_a_paused_workflow_answers_with_a_request_info_function_call() -> None:
    agent = review_workflow().as_agent("reviewed-writer")
    thread = agent.get_new_thread()
    response = await agent.run("parallel file reading", thread=thread)
    [call] = request_calls(response.messages)
    assert call.arguments == {"request_id": "r1", "draft": "draft about parallel file reading"}
    answer = ReviewResponse(request_id="r1", feedback="", approved=True)
    done = await agent.run(ChatMessage.tool(call.call_id, answer.model_dump()), thread=thread)
    assert done.text == "published"
    assert request_calls(done.messages) == []
    # The thread holds the whole exchange, call and result included.
    history = await thread.list_messages()
    assert [c.call_id for m in history for c in m.function_calls] == [call.call_id]
    assert [r.call_id for m in history for r in m.function_results] == [call.call_id]


async def test_the_answer_may_come_from_another_process_through_the_checkpoint_store(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    first = WorkflowAgent(review_workflow(store), name="reviewed-writer")
    thread = first.get_new_thread(user_id="ada")
    [call] = request_calls((await first.run("sorting", thread=thread)).messages)
    saved = json.dumps(thread.serialize())
    # "Another process": a new Workflow built the same way, the same store, the saved thread.
    second = WorkflowAgent(review_workflow(store), name="reviewed-writer")
    restored = AgentThread.deserialize(json.loads(saved))
    answer = {"request_id": "r1", "feedback": "shorter", "approved": False}
    done = await second.run(ChatMessage.tool(call.call_id, answer), thread=restored)
    assert done.text == "revised after: shorter"


async def test_without_a_thread_an_answer_resumes_the_run_paused_in_this_process() -> None:
    # The MAF sample calls agent.run(Message("tool", [function_result])) with no thread.
    agent = review_workflow().as_agent()
    [call] = request_calls((await agent.run("indexes")).messages)
    answer = ReviewResponse(request_id="r1", feedback="", approved=True)
    done = await agent.run(ChatMessage.tool(call.call_id, answer))
    assert done.text == "published"


async def test_a_streamed_run_asks_and_resumes_the_same_way(tmp_path: Path) -> None:
    store = FileCheckpointStore(tmp_path / "checkpoints")
    agent = WorkflowAgent(review_workflow(store))
    thread = agent.get_new_thread()
    updates = [u async for u in agent.run_stream("caching", thread=thread)]
    final = updates[-1].response
    assert final is not None
    [call] = request_calls(final.messages)
    restored = AgentThread.deserialize(thread.serialize())
    answer = {"request_id": "r1", "feedback": "", "approved": True}
    again = WorkflowAgent(review_workflow(store))
    updates = [
        u async for u in again.run_stream(ChatMessage.tool(call.call_id, answer), thread=restored)
    ]
    assert updates[-1].response is not None
    assert updates[-1].response.text == "published"


async def test_a_new_message_without_answers_starts_a_new_run() -> None:
    agent = review_workflow().as_agent()
    thread = agent.get_new_thread()
    await agent.run("first topic", thread=thread)
    again = await agent.run("second topic", thread=thread)
    [call] = request_calls(again.messages)
    assert call.arguments["draft"] == "draft about second topic"


class TwoQuestions(Executor):
    """Asks two things at once; answers with both once both are in."""

    def __init__(self, id: str) -> None:  # noqa: A002
        super().__init__(id)
        self.answers: dict[str, str] = {}

    def snapshot_state(self) -> Any:
        return self.answers

    def restore_state(self, state: Any) -> None:
        self.answers = dict(state or {})

    @handler
    async def ask(self, conversation: list[ChatMessage], ctx: WorkflowContext[Never, str]) -> None:
        del conversation
        await ctx.request_info("name?", str)
        await ctx.request_info("age?", str)

    @response_handler
    async def got(self, question: str, answer: str, ctx: WorkflowContext[Never, str]) -> None:
        self.answers[question] = answer
        if len(self.answers) == 2:
            await ctx.yield_output(f"{self.answers['name?']} is {self.answers['age?']}")


async def test_answering_one_of_two_requests_leaves_the_other_asked() -> None:
    agent = WorkflowBuilder().set_start_executor(TwoQuestions("q")).build().as_agent()
    thread = agent.get_new_thread()
    name_call, age_call = request_calls((await agent.run("hi", thread=thread)).messages)
    assert (name_call.arguments, age_call.arguments) == ({"data": "name?"}, {"data": "age?"})
    partly = await agent.run(ChatMessage.tool(name_call.call_id, "Ada"), thread=thread)
    assert [c.call_id for c in request_calls(partly.messages)] == [age_call.call_id]
    done = await agent.run(ChatMessage.tool(age_call.call_id, "36"), thread=thread)
    assert done.text == "Ada is 36"


async def test_a_wrong_answer_is_a_clear_error_and_the_question_stays() -> None:
    agent = review_workflow().as_agent()
    thread = agent.get_new_thread()
    [call] = request_calls((await agent.run("x", thread=thread)).messages)
    with pytest.raises(Exception, match="not a valid ReviewResponse"):
        await agent.run(ChatMessage.tool(call.call_id, {"approved": "maybe"}), thread=thread)
    answer = {"request_id": "r1", "feedback": "", "approved": True}
    done = await agent.run(ChatMessage.tool(call.call_id, answer), thread=thread)
    assert done.text == "published"
