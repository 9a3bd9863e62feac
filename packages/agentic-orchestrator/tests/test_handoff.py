"""HandoffBuilder and handoff(): a mesh of agents passing the conversation on."""

from __future__ import annotations

import pytest

from agentic_core import (
    AgentResponse,
    ChatAgent,
    ChatMessage,
    FunctionCallContent,
    InMemoryCheckpointStore,
    Role,
    WorkflowExecutionError,
    WorkflowRunState,
    tool,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import (
    HandoffBuilder,
    HandoffUserRequest,
    OrchestrationConfigError,
    OrchestratorError,
    handoff,
)

from ._helpers import echo_agent, resume_from_middle, spoken_lines


def transfer(target: str, call_id: str = "c1") -> ChatMessage:
    return ChatMessage(
        role=Role.ASSISTANT,
        contents=[FunctionCallContent(call_id=call_id, name=f"transfer_to_{target}", arguments={})],
    )


@tool
def process_refund(order_number: str) -> str:
    """Process a refund for an order."""
    return f"Refund processed successfully for order {order_number}."


async def test_triage_hands_off_and_the_specialist_answers() -> None:
    triage = ChatAgent(ScriptedChatClient([transfer("refund_agent")]), name="triage_agent")
    refund = ChatAgent(
        ScriptedChatClient(
            [
                ChatMessage(
                    role=Role.ASSISTANT,
                    contents=[
                        FunctionCallContent(
                            call_id="r1", name="process_refund", arguments={"order_number": "1234"}
                        )
                    ],
                ),
                "Your refund for order 1234 is on its way.",
            ]
        ),
        name="refund_agent",
        tools=[process_refund],
    )
    order = echo_agent("order_agent")
    workflow = HandoffBuilder(participants=[triage, refund, order]).with_start_agent(triage).build()
    result = await workflow.run("My order 1234 arrived broken, refund please.")
    assert result.status is WorkflowRunState.COMPLETED
    assert spoken_lines(result.outputs[0]) == [
        "user: My order 1234 arrived broken, refund please.",
        "refund_agent: Your refund for order 1234 is on its way.",
    ]
    # The transfer ended triage's turn: no second model call after the tool result.
    assert len(triage.chat_client.calls) == 1  # type: ignore[attr-defined]
    offered = {t.name for t in triage.chat_client.calls[0][1].tools}  # type: ignore[attr-defined]
    assert offered == {"transfer_to_refund_agent", "transfer_to_order_agent"}
    refund_tools = {t.name for t in refund.chat_client.calls[0][1].tools}  # type: ignore[attr-defined]
    assert refund_tools == {"process_refund", "transfer_to_triage_agent", "transfer_to_order_agent"}
    # The specialist sees the user's words, not triage's tool traffic.
    assert [m.text for m in refund.chat_client.calls[0][0]] == [  # type: ignore[attr-defined]
        "My order 1234 arrived broken, refund please."
    ]


async def test_add_handoff_narrows_the_routes() -> None:
    triage = ChatAgent(ScriptedChatClient([transfer("billing")]), name="triage")
    billing = ChatAgent(ScriptedChatClient(["paid"]), name="billing")
    workflow = (
        HandoffBuilder()
        .participants([triage, billing])
        .add_handoff(triage, [billing], description="money questions")
        .build()
    )
    result = await workflow.run("invoice?")
    assert spoken_lines(result.outputs[0])[-1] == "billing: paid"
    assert billing.chat_client.calls[0][1] is None or not billing.chat_client.calls[0][1].tools  # type: ignore[attr-defined]
    offered = triage.chat_client.calls[0][1].tools[0]  # type: ignore[attr-defined]
    assert offered.description == "Hand the conversation over to billing: money questions"


async def test_a_handoff_to_an_agent_without_a_route_fails_the_run() -> None:
    triage = ChatAgent(ScriptedChatClient(["x"]), name="triage")
    billing = echo_agent("billing")

    def decide(agent: str, response: AgentResponse) -> str | None:
        return "triage" if agent == "billing" else "billing"

    workflow = handoff([triage, billing], routes={"triage": ["billing"]}, decide_handoff=decide)
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("hi")
    assert "may not hand off to 'triage'" in str(caught.value.__cause__)


async def test_decide_handoff_routes_any_agent() -> None:
    routed: list[tuple[str, str]] = []

    async def decide(agent: str, response: AgentResponse) -> str | None:
        routed.append((agent, response.text))
        return "expert" if agent == "front" else None

    workflow = handoff([echo_agent("front"), echo_agent("expert")], decide_handoff=decide)
    result = await workflow.run("hard question")
    assert routed == [("front", "front saw 1"), ("expert", "expert saw 2")]
    assert spoken_lines(result.outputs[0]) == [
        "user: hard question",
        "front: front saw 1",
        "expert: expert saw 2",
    ]


async def test_a_handoff_loop_is_bounded_and_named() -> None:
    ping = ChatAgent(ScriptedChatClient([transfer("pong", f"p{i}") for i in range(5)]), name="ping")
    pong = ChatAgent(ScriptedChatClient([transfer("ping", f"q{i}") for i in range(5)]), name="pong")
    workflow = HandoffBuilder(participants=[ping, pong]).with_max_handoffs(3).build()
    with pytest.raises(WorkflowExecutionError) as caught:
        await workflow.run("go")
    cause = caught.value.__cause__
    assert isinstance(cause, OrchestratorError)
    assert "handoff limit of 3 reached: ping -> pong -> ping -> pong -> ping" in str(cause)


async def test_request_info_asks_the_user_until_they_stop() -> None:
    triage = ChatAgent(
        ScriptedChatClient(["What is the order number?", transfer("orders")]), name="triage"
    )
    orders = ChatAgent(ScriptedChatClient(["Order 42 ships tomorrow."]), name="orders")
    workflow = HandoffBuilder(participants=[triage, orders]).with_request_info().build()
    first = await workflow.run("Where is my order?")
    assert first.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    request = first.pending_requests[0]
    assert isinstance(request.data, HandoffUserRequest)
    assert request.data.agent == "triage"
    assert request.data.text == "What is the order number?"

    second = await workflow.send_responses({request.request_id: "It is 42."})
    assert second.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    asked = second.pending_requests[0]
    assert asked.data.agent == "orders"

    done = await workflow.send_responses({asked.request_id: ""})
    assert done.status is WorkflowRunState.COMPLETED
    assert spoken_lines(done.outputs[0]) == [
        "user: Where is my order?",
        "triage: What is the order number?",
        "user: It is 42.",
        "orders: Order 42 ships tomorrow.",
    ]


async def test_request_info_stops_asking_once_the_termination_condition_holds() -> None:
    agent = ChatAgent(ScriptedChatClient(["Welcome! Anything else?"]), name="support")
    workflow = (
        HandoffBuilder(participants=[agent])
        .with_request_info()
        .with_termination_condition(lambda conversation: "welcome" in conversation[-1].text.lower())
        .build()
    )
    result = await workflow.run("thanks")
    assert result.status is WorkflowRunState.COMPLETED
    assert spoken_lines(result.outputs[0])[-1] == "support: Welcome! Anything else?"


def test_configuration_errors_name_the_culprit() -> None:
    a, b = echo_agent("a"), echo_agent("b")
    with pytest.raises(OrchestrationConfigError, match="'zed' is not a participant"):
        HandoffBuilder(participants=[a, b]).with_start_agent("zed").build()
    with pytest.raises(OrchestrationConfigError, match="'zed' is not a participant"):
        HandoffBuilder(participants=[a, b]).add_handoff(a, ["zed"]).build()
    with pytest.raises(OrchestrationConfigError, match="itself"):
        HandoffBuilder(participants=[a, b]).add_handoff(a, [a])
    with pytest.raises(OrchestrationConfigError, match="no handoff route leads from 'a' to 'c'"):
        HandoffBuilder(participants=[a, b, echo_agent("c")]).add_handoff(a, [b]).build()
    with pytest.raises(OrchestrationConfigError, match="'a'"):
        HandoffBuilder(participants=[a, echo_agent("a")])
    with pytest.raises(OrchestrationConfigError, match="max_handoffs"):
        HandoffBuilder(max_handoffs=-1)


async def test_checkpointed_handoff_resumes_to_the_same_conversation() -> None:
    store = InMemoryCheckpointStore()

    def decide(agent: str, response: AgentResponse) -> str | None:
        return {"a": "b", "b": "c"}.get(agent)

    workflow = handoff(
        [echo_agent("a"), echo_agent("b"), echo_agent("c")],
        decide_handoff=decide,
        checkpoint_store=store,
    )
    full = await workflow.run("go")
    resumed = await resume_from_middle(workflow, full, store)
    assert spoken_lines(resumed.outputs[0]) == spoken_lines(full.outputs[0])
    assert spoken_lines(full.outputs[0])[-1] == "c: c saw 3"
