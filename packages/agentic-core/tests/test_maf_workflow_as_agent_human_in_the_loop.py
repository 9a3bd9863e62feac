"""Microsoft Agent Framework's ``03-workflows/agents/workflow_as_agent_human_in_the_loop.py``,
ported and run (with the ``Worker``, ``ReviewRequest`` and ``ReviewResponse`` it imports from
``workflow_as_agent_reflection_pattern.py``).

A Worker drafts an answer with a chat model and sends it for review; the Reviewer always
escalates to a human manager with ``request_info``; the human's ``ReviewResponse`` goes back to
the Worker, which emits the approved answer (or regenerates it with the feedback). The workflow
runs as an agent: the human's request arrives as a ``request_info`` function call.

The port keeps the sample's structure and asserts; the model is a ``ScriptedChatClient``, the
prints are gone, and where MAF parses the call's arguments with
``WorkflowAgent.RequestInfoFunctionArgs`` (the request event, its data included) we validate the
arguments (the request data as JSON) back into ``HumanReviewRequest``. The sample answers with a
function-result message; a second test answers the same request with ``run(responses=...)``,
as one answers a ``ChatAgent``'s ``user_input_requests``.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import uuid4

from pydantic import TypeAdapter

from agentic_core import (
    AgentResponse,
    ChatClient,
    ChatMessage,
    Executor,
    FunctionCallContent,
    WorkflowAgent,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_core.testing import ScriptedChatClient

# --- workflow_as_agent_reflection_pattern.py (what the sample imports) --------------------------


@dataclass
class ReviewRequest:
    """Structured request passed from Worker to Reviewer for evaluation."""

    request_id: str
    user_messages: list[ChatMessage]
    agent_messages: list[ChatMessage]


@dataclass
class ReviewResponse:
    """Structured response from Reviewer back to Worker."""

    request_id: str
    feedback: str
    approved: bool


class Worker(Executor):
    """Executor that generates responses and incorporates feedback when necessary."""

    def __init__(self, id: str, client: ChatClient) -> None:  # noqa: A002
        super().__init__(id)
        self._chat_client = client
        self._pending_requests: dict[str, tuple[ReviewRequest, list[ChatMessage]]] = {}

    @handler
    async def handle_user_messages(
        self, user_messages: list[ChatMessage], ctx: WorkflowContext[ReviewRequest]
    ) -> None:
        # Initialize chat with system prompt.
        messages = [ChatMessage.system("You are a helpful assistant.")]
        messages.extend(user_messages)

        response = await self._chat_client.generate(messages)

        # Add agent messages to context.
        messages.append(response.message)

        # Create review request and send to Reviewer.
        request = ReviewRequest(
            request_id=str(uuid4()), user_messages=user_messages, agent_messages=[response.message]
        )
        await ctx.send_message(request)

        # Track request for possible retry.
        self._pending_requests[request.request_id] = (request, messages)

    @handler
    async def handle_review_response(
        self, review: ReviewResponse, ctx: WorkflowContext[ReviewRequest, AgentResponse]
    ) -> None:
        if review.request_id not in self._pending_requests:
            raise ValueError(f"Unknown request ID in review: {review.request_id}")

        request, messages = self._pending_requests.pop(review.request_id)

        if review.approved:
            # Emit approved result to external consumer
            await ctx.yield_output(AgentResponse(messages=request.agent_messages))
            return

        # Incorporate review feedback.
        messages.append(ChatMessage.system(review.feedback))
        messages.append(
            ChatMessage.system("Please incorporate the feedback and regenerate the response.")
        )
        messages.extend(request.user_messages)

        # Retry with updated prompt.
        response = await self._chat_client.generate(messages)
        messages.append(response.message)

        # Send updated request for re-review.
        new_request = ReviewRequest(
            request_id=review.request_id,
            user_messages=request.user_messages,
            agent_messages=[response.message],
        )
        await ctx.send_message(new_request)

        # Track new request for further evaluation.
        self._pending_requests[new_request.request_id] = (new_request, messages)


# --- workflow_as_agent_human_in_the_loop.py ----------------------------------------------------


@dataclass
class HumanReviewRequest:
    """A request message type for escalation to a human reviewer."""

    agent_request: ReviewRequest | None = None


class ReviewerWithHumanInTheLoop(Executor):
    """Executor that always escalates reviews to a human manager."""

    def __init__(self, worker_id: str, reviewer_id: str | None = None) -> None:
        unique_id = reviewer_id or f"{worker_id}-reviewer"
        super().__init__(unique_id)
        self._worker_id = worker_id

    @handler
    async def review(self, request: ReviewRequest, ctx: WorkflowContext) -> None:
        # In this simplified example, we always escalate to a human manager.
        # Forward the request to a human manager by sending a HumanReviewRequest.
        await ctx.request_info(HumanReviewRequest(agent_request=request), ReviewResponse)

    @response_handler
    async def accept_human_review(
        self,
        original_request: HumanReviewRequest,
        response: ReviewResponse,
        ctx: WorkflowContext[ReviewResponse],
    ) -> None:
        del original_request
        # Accept the human review response and forward it back to the Worker.
        await ctx.send_message(response, target_id=self._worker_id)


QUERY = "Write code for parallel reading 1 million Files on disk and write to a sorted output file."
ANSWER = "Use a process pool to read the files in chunks, then merge the sorted runs."


def build_agent(client: ScriptedChatClient) -> WorkflowAgent:
    # Build a workflow with bidirectional communication between Worker and Reviewer,
    # and escalation paths for human review.
    worker = Worker(id="worker", client=client)
    reviewer = ReviewerWithHumanInTheLoop(worker_id="worker")

    agent = (
        WorkflowBuilder()
        .set_start_executor(worker)
        .add_edge(worker, reviewer)
        .add_edge(reviewer, worker)
        .build()
        .as_agent()
    )
    assert isinstance(agent, WorkflowAgent)
    return agent


def find_human_review_call(response: AgentResponse) -> FunctionCallContent | None:
    # Locate the human review function call in the response messages.
    human_review_function_call: FunctionCallContent | None = None
    for message in response.messages:
        for content in message.function_calls:
            if content.name == WorkflowAgent.REQUEST_INFO_FUNCTION_NAME:
                human_review_function_call = content
    return human_review_function_call


def parse_human_review_request(call: FunctionCallContent) -> HumanReviewRequest:
    # Parse the human review request arguments.
    request_payload = TypeAdapter(HumanReviewRequest).validate_python(call.arguments)
    if not isinstance(request_payload, HumanReviewRequest):
        raise ValueError("Human review request payload must be a HumanReviewRequest.")
    if not request_payload.agent_request:
        raise ValueError("Human review request must contain an agent_request.")
    return request_payload


async def test_workflow_as_agent_human_in_the_loop() -> None:
    client = ScriptedChatClient([ANSWER])
    agent = build_agent(client)

    # Run the agent with an initial query.
    response = await agent.run(QUERY)

    human_review_function_call = find_human_review_call(response)

    # Handle the human review if required.
    assert human_review_function_call is not None
    request_payload = parse_human_review_request(human_review_function_call)
    assert request_payload.agent_request is not None
    assert [m.text for m in request_payload.agent_request.agent_messages] == [ANSWER]
    # Mock a human response approval for demonstration purposes.
    human_response = ReviewResponse(
        request_id=request_payload.agent_request.request_id, feedback="", approved=True
    )
    # Create the function call result object to send back to the agent.
    human_review_function_result = ChatMessage.tool(
        human_review_function_call.call_id, human_response
    )
    # Send the human review result back to the agent.
    response = await agent.run(human_review_function_result)
    assert response.messages[-1].text == ANSWER
    assert find_human_review_call(response) is None
    assert len(client.calls) == 1


async def test_the_human_review_answered_with_responses_like_a_chat_agent() -> None:
    # The same exchange, answered the way one answers a ChatAgent: run(responses=..., thread=...).
    client = ScriptedChatClient(["A first draft.", ANSWER])
    agent = build_agent(client)
    thread = agent.get_new_thread()
    response = await agent.run(QUERY, thread=thread)
    assert response.user_input_requests == []  # a review, not a tool approval
    call = find_human_review_call(response)
    assert call is not None
    request = parse_human_review_request(call).agent_request
    assert request is not None
    # The manager asks for a revision: the Worker regenerates and the draft is escalated again.
    feedback = ReviewResponse(
        request_id=request.request_id, feedback="Merge sorted runs.", approved=False
    )
    response = await agent.run(responses={call.call_id: feedback}, thread=thread)
    again = find_human_review_call(response)
    assert again is not None
    assert again.call_id != call.call_id
    revised = parse_human_review_request(again).agent_request
    assert revised is not None
    assert [m.text for m in revised.agent_messages] == [ANSWER]
    # The Worker saw the feedback before regenerating.
    assert "Merge sorted runs." in [m.text for m in client.calls[1][0]]
    approval = ReviewResponse(request_id=revised.request_id, feedback="", approved=True)
    response = await agent.run(responses={again.call_id: approval}, thread=thread)
    assert response.text == ANSWER
    assert find_human_review_call(response) is None
