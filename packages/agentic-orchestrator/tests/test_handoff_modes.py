"""HandoffBuilder's termination on the user's reply, autonomous mode and full history.

The MAF tests here are ports of ``python/packages/orchestrations/tests/test_handoff.py``
(microsoft/agent-framework): their ``MockHandoffAgent`` becomes a ChatAgent whose every reply
calls the transfer tool (when it has a target) and says ``"<name> reply"``.
"""

from __future__ import annotations

import pytest

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    Role,
    TextContent,
    WorkflowRunState,
    tool,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_orchestrator import (
    GroupChatState,
    HandoffBuilder,
    HandoffUserRequest,
    OrchestrationConfigError,
)

from ._helpers import spoken_lines


def mock_handoff_agent(name: str, handoff_to: str | None = None) -> ChatAgent:
    """MAF's MockHandoffAgent: each reply hands off to ``handoff_to`` (if any) and says so."""
    calls = 0

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> ChatMessage:
        nonlocal calls
        del messages, options
        contents: list[FunctionCallContent | TextContent] = []
        if handoff_to:
            contents.append(
                FunctionCallContent(
                    call_id=f"{name}-handoff-{calls}", name=f"transfer_to_{handoff_to}"
                )
            )
        calls += 1
        contents.append(TextContent(text=f"{name} reply"))
        return ChatMessage(role=Role.ASSISTANT, contents=list(contents))

    return ChatAgent(FunctionChatClient(reply), name=name)


def model_calls(agent: ChatAgent) -> int:
    return len(agent.chat_client.calls)  # type: ignore[attr-defined]


# --- issue 29, item 2: the user's reply is checked before the agent is called


async def test_a_user_reply_meeting_the_termination_condition_ends_the_run_at_once() -> None:
    agent = ChatAgent(ScriptedChatClient(["Anything else?", "You're welcome!"]), name="support")
    workflow = (
        HandoffBuilder(participants=[agent])
        .with_request_info()
        .with_termination_condition(lambda conversation: "bye" in conversation[-1].text.lower())
        .build()
    )
    first = await workflow.run("Where is my order?")
    request = first.pending_requests[0]

    done = await workflow.send_responses({request.request_id: "thanks, bye"})

    assert done.status is WorkflowRunState.COMPLETED
    assert model_calls(agent) == 1  # no turn for the goodbye
    assert spoken_lines(done.outputs[0]) == [
        "user: Where is my order?",
        "support: Anything else?",
        "user: thanks, bye",
    ]


async def test_handoff_async_termination_condition() -> None:
    """MAF's test of the same name: the second user message ends the run, no agent runs."""
    termination_call_count = 0

    async def async_termination(conv: GroupChatState) -> bool:
        nonlocal termination_call_count
        termination_call_count += 1
        user_count = sum(1 for msg in conv if msg.role is Role.USER)
        return user_count >= 2

    coordinator = mock_handoff_agent("coordinator", handoff_to="worker")
    worker = mock_handoff_agent("worker")

    workflow = (
        HandoffBuilder(participants=[coordinator, worker], termination_condition=async_termination)
        .with_start_agent(coordinator)
        .with_request_info()
        .build()
    )

    first = await workflow.run("First user message")
    requests = first.pending_requests
    assert requests

    worker_calls = model_calls(worker)
    second = await workflow.send_responses({requests[-1].request_id: "Second user message"})
    # Resume run terminates without further agent activity once the second user message
    # satisfies the termination condition.
    assert second.status is WorkflowRunState.COMPLETED
    assert model_calls(worker) == worker_calls
    assert termination_call_count > 0


# --- issue 29, item 5: with_autonomous_mode, as MAF's


async def test_autonomous_mode_yields_output_without_user_request() -> None:
    """Ensure autonomous interaction mode yields output without requesting user input."""
    triage = mock_handoff_agent("triage", handoff_to="specialist")
    specialist = mock_handoff_agent("specialist")

    workflow = (
        HandoffBuilder(
            participants=[triage, specialist],
            # The user message, triage's reply (its handoff), the specialist's reply; then the
            # autonomous prompt makes the fourth message and ends the run.
            termination_condition=lambda conv: len(conv) >= 4,
        )
        .with_start_agent(triage)
        .with_request_info()
        # Since specialist has no handoff, the specialist will be generating normal responses.
        # With autonomous mode, this should continue until the termination condition is met.
        .with_autonomous_mode(agents=[specialist], turn_limits={specialist.name: 1})
        .build()
    )

    result = await workflow.run("Package arrived broken")
    assert not result.pending_requests, "Autonomous mode should not request additional user input"
    assert result.outputs, "Autonomous mode should yield a workflow output"
    combined = " ".join(m.text for m in result.outputs[0])
    assert "specialist reply" in combined


async def test_autonomous_mode_resumes_user_input_on_turn_limit() -> None:
    """Autonomous mode should resume user input request when turn limit is reached."""
    triage = mock_handoff_agent("triage", handoff_to="worker")
    worker = mock_handoff_agent("worker")

    workflow = (
        HandoffBuilder(participants=[triage, worker], termination_condition=lambda conv: False)
        .with_start_agent(triage)
        .with_request_info()
        .with_autonomous_mode(agents=[worker], turn_limits={worker.name: 2})
        .build()
    )

    result = await workflow.run("Start")
    requests = result.pending_requests
    assert len(requests) == 1, "Turn limit should force a user input request"
    assert isinstance(requests[0].data, HandoffUserRequest)
    assert requests[0].data.agent == worker.name
    assert model_calls(worker) == 3  # its turn, then two autonomous ones


async def test_autonomous_agents_are_prompted_and_the_run_ends_without_request_info() -> None:
    writer = ChatAgent(ScriptedChatClient(["Draft 1.", "Draft 2."]), name="writer")
    workflow = (
        HandoffBuilder(participants=[writer])
        .with_autonomous_mode(prompts={"writer": "Keep going."}, turn_limits={"writer": 1})
        .build()
    )
    result = await workflow.run("Write.")
    assert spoken_lines(result.outputs[0]) == [
        "user: Write.",
        "writer: Draft 1.",
        "user: Keep going.",
        "writer: Draft 2.",
    ]


async def test_a_handoff_during_autonomous_turns_passes_the_turn_on() -> None:
    researcher = ChatAgent(
        ScriptedChatClient(
            [
                "Aspect one.",
                ChatMessage(
                    role=Role.ASSISTANT,
                    contents=[FunctionCallContent(call_id="h1", name="transfer_to_coordinator")],
                ),
            ]
        ),
        name="researcher",
    )
    coordinator = ChatAgent(
        ScriptedChatClient(
            [
                ChatMessage(
                    role=Role.ASSISTANT,
                    contents=[FunctionCallContent(call_id="h0", name="transfer_to_researcher")],
                ),
                "Summary.",
            ]
        ),
        name="coordinator",
    )
    workflow = (
        HandoffBuilder(participants=[coordinator, researcher])
        .with_autonomous_mode(agents=[researcher], turn_limits={"researcher": 5})
        .build()
    )
    result = await workflow.run("Research agents.")
    assert spoken_lines(result.outputs[0]) == [
        "user: Research agents.",
        "researcher: Aspect one.",
        "user: User did not respond. Continue assisting autonomously.",
        "coordinator: Summary.",
    ]


# --- issue 29, item 6: full_history keeps handoff calls and tool results


@tool
def lookup_order(order_number: str) -> str:
    """Look an order up."""
    return f"Order {order_number}: shipped."


def _refund_mesh(*, full_history: bool) -> tuple[HandoffBuilder, ChatAgent]:
    triage = ChatAgent(
        ScriptedChatClient(
            [
                ChatMessage(
                    role=Role.ASSISTANT,
                    contents=[FunctionCallContent(call_id="t1", name="transfer_to_orders")],
                )
            ]
        ),
        name="triage",
    )
    orders = ChatAgent(
        ScriptedChatClient(
            [
                ChatMessage(
                    role=Role.ASSISTANT,
                    contents=[
                        FunctionCallContent(
                            call_id="o1", name="lookup_order", arguments={"order_number": "42"}
                        )
                    ],
                ),
                "Order 42 has shipped.",
            ]
        ),
        name="orders",
        tools=[lookup_order],
    )
    return HandoffBuilder(participants=[triage, orders], full_history=full_history), orders


async def test_the_conversation_keeps_only_spoken_messages_by_default() -> None:
    builder, _ = _refund_mesh(full_history=False)
    result = await builder.build().run("Where is order 42?")
    assert spoken_lines(result.outputs[0]) == [
        "user: Where is order 42?",
        "orders: Order 42 has shipped.",
    ]


async def test_full_history_keeps_handoff_calls_and_tool_results() -> None:
    builder, orders = _refund_mesh(full_history=True)
    result = await builder.build().run("Where is order 42?")
    conversation = result.outputs[0]
    assert [(m.role, m.author_name) for m in conversation] == [
        (Role.USER, None),
        (Role.ASSISTANT, "triage"),  # transfer_to_orders
        (Role.TOOL, None),
        (Role.ASSISTANT, "orders"),  # lookup_order
        (Role.TOOL, None),
        (Role.ASSISTANT, "orders"),
    ]
    assert conversation[1].function_calls[0].name == "transfer_to_orders"
    assert conversation[2].function_results[0].result == "Transferred to orders."
    assert conversation[4].function_results[0].result == "Order 42: shipped."
    # The agent handed to sees the handoff as it happened.
    orders_saw = orders.chat_client.calls[0][0]  # type: ignore[attr-defined]
    assert [m.role for m in orders_saw] == [Role.USER, Role.ASSISTANT, Role.TOOL]


async def test_with_full_history_is_the_same_switch() -> None:
    builder, _ = _refund_mesh(full_history=False)
    result = await builder.with_full_history().build().run("42?")
    assert len(result.outputs[0]) == 6


def test_autonomous_mode_names_only_participants() -> None:
    builder = HandoffBuilder(participants=[mock_handoff_agent("a")])
    with pytest.raises(OrchestrationConfigError, match="with_autonomous_mode 'zed'"):
        builder.with_autonomous_mode(turn_limits={"zed": 2}).build()
    with pytest.raises(OrchestrationConfigError, match="must be >= 0"):
        builder.with_autonomous_mode(turn_limits={"a": -1})
