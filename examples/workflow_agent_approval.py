"""A workflow behind the Agent interface that asks a human manager before it answers.

A port of Microsoft Agent Framework's sample
``python/samples/03-workflows/agents/workflow_as_agent_human_in_the_loop.py``: a worker agent
writes an answer, a reviewer escalates it to a human manager (``request_info``), and the human's
verdict goes back to the worker. Behind ``workflow.as_agent()``, the pause reaches the caller as
a ``request_info`` function call in the agent's response; the caller answers with a
``FunctionResultContent`` on the same thread, and the workflow resumes. With a checkpoint store
the answer may come from another process: the thread remembers where the run paused.

Offline by default: the worker's model is a stand-in function and the manager approves the
second draft. Run: ``uv run python examples/workflow_agent_approval.py``.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from agentic_core import (
    AgentThread,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Executor,
    FileCheckpointStore,
    Workflow,
    WorkflowAgent,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_core.testing import FunctionChatClient


@dataclass
class ReviewRequest:
    """What the reviewer asks the human manager about."""

    question: str
    draft: str


class ReviewResponse(BaseModel):
    """The manager's verdict."""

    feedback: str
    approved: bool


class Worker(Executor):
    """Drafts an answer with its agent; revises on feedback; answers once approved."""

    def __init__(self, agent: ChatAgent) -> None:
        super().__init__("worker")
        self.agent = agent

    @handler
    async def write(
        self, conversation: list[ChatMessage], ctx: WorkflowContext[ReviewRequest]
    ) -> None:
        question = conversation[-1].text
        draft = (await self.agent.run(question)).text
        await ctx.send_message(ReviewRequest(question=question, draft=draft))

    @handler
    async def revise(
        self, review: ReviewResponse, ctx: WorkflowContext[ReviewRequest, str]
    ) -> None:
        if review.approved:
            await ctx.yield_output("Approved answer delivered.")
            return
        draft = (await self.agent.run(f"Revise: {review.feedback}")).text
        await ctx.send_message(ReviewRequest(question="revision", draft=draft))


class ReviewerWithHumanInTheLoop(Executor):
    """Always escalates the review to a human manager."""

    def __init__(self) -> None:
        super().__init__("reviewer")

    @handler
    async def review(self, request: ReviewRequest, ctx: WorkflowContext) -> None:
        print(f"Reviewer: escalating to the human manager: {request.draft!r}")
        await ctx.request_info(request, ReviewResponse)

    @response_handler
    async def accept_human_review(
        self,
        original_request: ReviewRequest,
        response: ReviewResponse,
        ctx: WorkflowContext[ReviewResponse],
    ) -> None:
        del original_request
        print(f"Reviewer: the manager says approved={response.approved} {response.feedback!r}")
        await ctx.send_message(response)


def stand_in_model(messages: Sequence[ChatMessage], options: ChatOptions | None) -> str:
    """Writes a first draft, and a better one when asked to revise."""
    del options
    if messages[-1].text.startswith("Revise"):
        return "Read them with asyncio and a bounded queue."
    return "Read the files with a thread pool."


def build(store: FileCheckpointStore) -> Workflow:
    """The same graph in every process; each process has its own model client."""
    model = FunctionChatClient(stand_in_model)
    worker = Worker(ChatAgent(model, "You write short technical answers.", name="worker"))
    reviewer = ReviewerWithHumanInTheLoop()
    return (
        WorkflowBuilder("reviewed-answers")
        .set_start_executor(worker)
        .add_edge(worker, reviewer)
        .add_edge(reviewer, worker)
        .with_checkpointing(store)
        .build()
    )


def manager(arguments: dict[str, object]) -> dict[str, object]:
    """The human: rejects a thread pool, approves the rest."""
    draft = str(arguments["draft"])
    if "thread pool" in draft:
        return ReviewResponse(feedback="use asyncio", approved=False).model_dump()
    return ReviewResponse(feedback="", approved=True).model_dump()


async def main() -> None:
    with tempfile.TemporaryDirectory() as directory:
        store = FileCheckpointStore(Path(directory))
        agent: WorkflowAgent = WorkflowAgent(build(store), name="reviewed-writer")
        thread = agent.get_new_thread()
        response = await agent.run("How do I read a million files?", thread=thread)
        while calls := [c for m in response.messages for c in m.function_calls]:
            [call] = calls
            print(f"Agent asks ({call.name}): {call.arguments}")
            # The answer could come from another process: save the thread, build the same
            # workflow again over the same checkpoint store, answer there.
            saved = json.dumps(thread.serialize())
            thread = AgentThread.deserialize(json.loads(saved))
            agent = WorkflowAgent(build(store), name="reviewed-writer")
            answer = ChatMessage.tool(call.call_id, manager(call.arguments))
            response = await agent.run(answer, thread=thread)
        print(f"Agent: {response.text}")


if __name__ == "__main__":
    asyncio.run(main())
