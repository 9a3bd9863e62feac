"""Peers' tool-approval samples, ported to our API with scripted models.

- Microsoft Agent Framework ``python/samples/02-agents/tools/function_tool_with_approval.py``
  (without threads, plain and streamed) and ``function_tool_with_approval_and_sessions.py``
  (approval and rejection with a session: our thread).
- LangGraph's "How to review tool calls" how-to (human-in-the-loop; not in our mirror, so its
  four cases are ported by behaviour): a turn without tools, approve, edit the arguments, and
  reject with feedback the model acts on. LangGraph's graph with a checkpointer becomes a
  workflow with a checkpoint store; ``interrupt()`` in the review node becomes the tool's
  ``approval_mode``; ``Command(resume=...)`` becomes ``run(checkpoint_id=..., responses=...)``.
"""

from __future__ import annotations

from random import randrange
from typing import Annotated, Any

from agentic_core import (
    AgentExecutor,
    AgentResponse,
    ChatAgent,
    ChatMessage,
    FunctionCallContent,
    InMemoryCheckpointStore,
    Role,
    ToolApprovalRequest,
    ToolApprovalResponse,
    Workflow,
    WorkflowBuilder,
    WorkflowRunResult,
    WorkflowRunState,
    tool,
)
from agentic_core.testing import ScriptedChatClient


def function_calls(*calls: tuple[str, str, dict[str, Any]]) -> ChatMessage:
    return ChatMessage.assistant(
        contents=[FunctionCallContent(call_id=i, name=n, arguments=a) for i, n, a in calls]
    )


# == Microsoft Agent Framework: function_tool_with_approval.py ====================================

conditions = ["sunny", "cloudy", "raining", "snowing", "clear"]


# NOTE: approval_mode="never_require" is for sample brevity.
@tool(approval_mode="never_require")
def get_weather(location: Annotated[str, "The city and state, e.g. San Francisco, CA"]) -> str:
    """Get the current weather for a given location."""
    # Simulate weather data
    return (
        f"The weather in {location} is {conditions[randrange(0, len(conditions))]} "
        f"and {randrange(-10, 30)}°C."
    )


# Define a simple weather tool that requires approval
@tool(approval_mode="always_require")
def get_weather_detail(
    location: Annotated[str, "The city and state, e.g. San Francisco, CA"],
) -> str:
    """Get the current weather for a given location."""
    # Simulate weather data
    return (
        f"The weather in {location} is {conditions[randrange(0, len(conditions))]} and "
        f"{randrange(-10, 30)}°C, with a humidity of 88%. "
        f"Tomorrow will be {conditions[randrange(0, len(conditions))]} with a high of "
        f"{randrange(-10, 30)}°C."
    )


QUERY = (
    "Can you give me an update of the weather in LA and Portland and detailed weather for Seattle?"
)
FINAL = "LA is sunny, Portland cloudy, and here is Seattle in detail."


def weather_model() -> ScriptedChatClient:
    """The model's turns of the sample: three calls at once, then the summary."""
    return ScriptedChatClient(
        [
            function_calls(
                ("call_1", "get_weather", {"location": "Los Angeles, CA"}),
                ("call_2", "get_weather", {"location": "Portland, OR"}),
                ("call_3", "get_weather_detail", {"location": "Seattle, WA"}),
            ),
            FINAL,
        ],
        chunk_size=8,
    )


class ScriptedUser:
    """Stands in for ``input("Approve function call? (y/n): ")``."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, request: ToolApprovalRequest) -> str:
        self.asked.append((request.tool_name, request.arguments))
        return self.answer


async def handle_approvals(query: str, agent: ChatAgent, user: ScriptedUser) -> AgentResponse:
    """Handle function call approvals.

    When we don't have a thread, we need to ensure we include the original query,
    the approval request, and the approval response in each iteration.
    """
    conversation: list[ChatMessage] = [ChatMessage.user(query)]
    result = await agent.run(conversation)
    while len(result.user_input_requests) > 0:
        # Start with the original query and the agent's messages so far (the requests' calls)
        conversation = [*conversation, *result.messages]
        responses: dict[str, ToolApprovalResponse] = {}
        for user_input_needed in result.user_input_requests:
            # Get user approval
            user_approval = user(user_input_needed)
            # Add the user's approval response
            approved = user_approval.lower() == "y"
            responses[user_input_needed.request_id] = (
                user_input_needed.approve() if approved else user_input_needed.reject()
            )
        # Run again with all the context
        result = await agent.run(conversation, responses=responses)
    return result


async def handle_approvals_streaming(query: str, agent: ChatAgent, user: ScriptedUser) -> str:
    """Handle function call approvals with streaming responses (returns the streamed text)."""
    conversation: list[ChatMessage] = [ChatMessage.user(query)]
    responses: dict[str, ToolApprovalResponse] | None = None
    printed = ""
    has_user_input_requests = True
    while has_user_input_requests:
        has_user_input_requests = False
        user_input_requests: list[ToolApprovalRequest] = []
        produced: list[ChatMessage] = []

        # Stream the response
        async for chunk in agent.run_stream(conversation, responses=responses):
            if chunk.text:
                printed += chunk.text
            # Collect user input requests from the stream (the last update's response)
            if chunk.response is not None:
                user_input_requests.extend(chunk.response.user_input_requests)
                produced = chunk.response.messages

        if user_input_requests:
            has_user_input_requests = True
            conversation = [*conversation, *produced]
            responses = {}
            for user_input_needed in user_input_requests:
                user_approval = user(user_input_needed)
                approved = user_approval.lower() == "y"
                responses[user_input_needed.request_id] = (
                    user_input_needed.approve() if approved else user_input_needed.reject()
                )
    return printed


def weather_agent(client: ScriptedChatClient) -> ChatAgent:
    return ChatAgent(
        client,
        name="WeatherAgent",
        instructions=(
            "You are a helpful weather assistant. Use the get_weather tool to provide weather "
            "information."
        ),
        tools=[get_weather, get_weather_detail],
    )


async def test_maf_weather_agent_with_approval_non_streaming() -> None:
    client = weather_model()
    user = ScriptedUser("y")
    result = await handle_approvals(QUERY, weather_agent(client), user)
    # Only the detailed weather asked for approval.
    assert user.asked == [("get_weather_detail", {"location": "Seattle, WA"})]
    assert result.text == FINAL
    results = {r.call_id: r.result for m in result.messages for r in m.function_results}
    assert results["call_1"].startswith("The weather in Los Angeles, CA is ")
    assert results["call_2"].startswith("The weather in Portland, OR is ")
    assert "with a humidity of 88%" in results["call_3"]
    # The model's second request held every call's result, after the calls.
    second_prompt = client.calls[1][0]
    assert [m.role for m in second_prompt] == [
        Role.SYSTEM,
        Role.USER,
        Role.ASSISTANT,
        Role.TOOL,
        Role.TOOL,
        Role.TOOL,
    ]


async def test_maf_weather_agent_with_approval_streaming() -> None:
    client = weather_model()
    user = ScriptedUser("y")
    printed = await handle_approvals_streaming(QUERY, weather_agent(client), user)
    assert user.asked == [("get_weather_detail", {"location": "Seattle, WA"})]
    assert printed == FINAL


async def test_maf_weather_agent_when_the_user_says_no() -> None:
    client = ScriptedChatClient(
        [weather_model().responses[0], "I could not get the detailed weather for Seattle."]
    )
    result = await handle_approvals(QUERY, weather_agent(client), ScriptedUser("n"))
    rejected = [r for m in result.messages for r in m.function_results if r.call_id == "call_3"]
    assert rejected[0].is_error
    assert result.text == "I could not get the detailed weather for Seattle."


# == Microsoft Agent Framework: function_tool_with_approval_and_sessions.py ======================

EXECUTED: list[str] = []


@tool(approval_mode="always_require")
def add_to_calendar(
    event_name: Annotated[str, "Name of the event"], date: Annotated[str, "Date of the event"]
) -> str:
    """Add an event to the calendar (requires approval)."""
    EXECUTED.append(f">>> EXECUTING: add_to_calendar(event_name='{event_name}', date='{date}')")
    return f"Added '{event_name}' to calendar on {date}"


def calendar_agent(event: str, date: str, final: str) -> ChatAgent:
    client = ScriptedChatClient(
        [function_calls(("c1", "add_to_calendar", {"event_name": event, "date": date})), final]
    )
    return ChatAgent(
        client,
        name="CalendarAgent",
        instructions="You are a helpful calendar assistant.",
        tools=[add_to_calendar],
    )


async def session_example(agent: ChatAgent, query: str, approved: bool) -> AgentResponse:
    session = agent.get_new_thread()
    # Step 1: Agent requests to call the tool
    result = await agent.run(query, thread=session)
    # Check for approval requests
    if result.user_input_requests:
        for request in result.user_input_requests:
            # Step 2: Send approval response
            approval_response = request.approve() if approved else request.reject()
            result = await agent.run(
                responses={request.request_id: approval_response}, thread=session
            )
    return result


async def test_maf_approval_with_session() -> None:
    EXECUTED.clear()
    agent = calendar_agent("Dentist appointment", "March 15th", "Added your dentist appointment.")
    result = await session_example(agent, "Add a dentist appointment on March 15th", True)
    assert EXECUTED == [
        ">>> EXECUTING: add_to_calendar(event_name='Dentist appointment', date='March 15th')"
    ]
    assert result.text == "Added your dentist appointment."


async def test_maf_rejection_with_session() -> None:
    EXECUTED.clear()
    agent = calendar_agent("Team meeting", "December 20th", "OK, I did not add it.")
    result = await session_example(agent, "Add a team meeting on December 20th", False)
    assert EXECUTED == []
    assert result.text == "OK, I did not add it."


# == LangGraph: How to review tool calls ===========================================================

SEARCHED: list[str] = []


@tool(approval_mode="always_require")  # LangGraph: interrupt() in human_review_node
def weather_search(city: str) -> str:
    """Call to get the weather"""
    SEARCHED.append(city)
    return "Sunny!"


def review_graph(*model_turns: str | ChatMessage) -> Workflow:
    """call_llm <-> run_tool with a human review before each tool call, checkpointed."""
    model = ChatAgent(
        ScriptedChatClient(list(model_turns)), name="call_llm", tools=[weather_search]
    )
    return (
        WorkflowBuilder("review-tool-calls")
        .set_start_executor(AgentExecutor(model, id="call_llm", output_response=True))
        .with_checkpointing(InMemoryCheckpointStore())
        .build()
    )


def search(city: str, call_id: str = "tool_call_1") -> ChatMessage:
    return function_calls((call_id, "weather_search", {"city": city}))


def interrupt_value(result: WorkflowRunResult) -> ToolApprovalRequest:
    """What the paused graph asks (LangGraph: the ``__interrupt__`` value)."""
    assert result.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [request] = result.pending_requests
    assert isinstance(request.data, ToolApprovalRequest)
    return request.data


async def resume(graph: Workflow, paused: WorkflowRunResult, answer: Any) -> WorkflowRunResult:
    """LangGraph's ``graph.stream(Command(resume=answer), thread)``."""
    [request] = paused.pending_requests
    return await graph.run(
        checkpoint_id=paused.last_checkpoint_id, responses={request.request_id: answer}
    )


def model_client(graph: Workflow) -> ScriptedChatClient:
    """The scripted model of the graph's agent (to see what it was sent)."""
    model = graph.get_executor("call_llm")
    assert isinstance(model, AgentExecutor)
    assert isinstance(model.agent, ChatAgent)
    client = model.agent.chat_client
    assert isinstance(client, ScriptedChatClient)
    return client


def final_messages(result: WorkflowRunResult) -> list[ChatMessage]:
    assert result.status is WorkflowRunState.COMPLETED
    [response] = result.outputs
    assert isinstance(response, AgentResponse)
    return response.messages


async def test_langgraph_example_with_no_review() -> None:
    graph = review_graph("Hello! How can I assist you today?")
    result = await graph.run("hi!")
    # No tool call: no interrupt, the graph ends.
    assert [m.text for m in final_messages(result)] == ["Hello! How can I assist you today?"]


async def test_langgraph_example_of_approving_tool() -> None:
    SEARCHED.clear()
    graph = review_graph(search("sf"), "The weather in San Francisco is sunny!")
    paused = await graph.run("what's the weather in sf?")
    value = interrupt_value(paused)
    assert (value.tool_name, value.arguments) == ("weather_search", {"city": "sf"})
    result = await resume(graph, paused, {"approved": True})  # {"action": "continue"}
    assert SEARCHED == ["sf"]
    messages = final_messages(result)
    assert messages[0].function_results[0].result == "Sunny!"
    assert messages[-1].text == "The weather in San Francisco is sunny!"


async def test_langgraph_edit_tool_call() -> None:
    SEARCHED.clear()
    graph = review_graph(search("sf"), "The weather in San Francisco, USA is sunny!")
    paused = await graph.run("what's the weather in sf?")
    interrupt_value(paused)
    # {"action": "update", "data": {"city": "San Francisco, USA"}}
    result = await resume(graph, paused, ToolApprovalResponse.edit({"city": "San Francisco, USA"}))
    assert SEARCHED == ["San Francisco, USA"]
    assert final_messages(result)[-1].text == "The weather in San Francisco, USA is sunny!"
    # As in LangGraph, the AI message now holds the updated tool call (same message id).
    client = model_client(graph)
    seen = client.calls[-1][0]
    assert seen[1].function_calls[0].arguments == {"city": "San Francisco, USA"}
    assert seen[2].function_results[0].result == "Sunny!"


async def test_langgraph_give_feedback_to_a_tool_call() -> None:
    SEARCHED.clear()
    graph = review_graph(
        search("sf"),
        search("San Francisco, USA", call_id="tool_call_2"),
        "The weather in San Francisco, USA is sunny!",
    )
    paused = await graph.run("what's the weather in sf?")
    interrupt_value(paused)
    feedback = "User requested changes: use <city, country> format for location"
    # {"action": "feedback", "data": feedback}: the model reads it as the tool's result
    again = await resume(graph, paused, ToolApprovalResponse.reject(feedback))
    assert SEARCHED == []
    value = interrupt_value(again)  # the model called the tool again, as asked
    assert value.arguments == {"city": "San Francisco, USA"}
    client = model_client(graph)
    tool_message = client.calls[1][0][-1]
    assert tool_message.role is Role.TOOL
    assert feedback in tool_message.function_results[0].result
    result = await resume(graph, again, ToolApprovalResponse.approve())
    assert SEARCHED == ["San Francisco, USA"]
    assert final_messages(result)[-1].text == "The weather in San Francisco, USA is sunny!"
