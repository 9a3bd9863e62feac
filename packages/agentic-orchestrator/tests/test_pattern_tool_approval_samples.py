"""MAF's tool-approval samples for the orchestrations, ported to our API.

python/samples/03-workflows/tool-approval/{sequential,concurrent,group_chat}_builder_tool_approval.py
and orchestrations/handoff_with_tool_approval_checkpoint_resume.py: same agents, tools, flow and
event loops; their Foundry model is replaced by ``ScriptedChatClient`` replies that make the calls
the samples' outputs show. ``request.to_function_approval_response(approved=True)`` is our
``request.approve()``; ``workflow.run(stream=True, responses=...)`` is our
``run_stream(responses=...)``.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from pathlib import Path
from typing import Annotated, Any

from agentic_core import (
    ChatAgent,
    ChatMessage,
    FileCheckpointStore,
    FunctionCallContent,
    RequestInfoEvent,
    ToolApprovalRequest,
    ToolApprovalResponse,
    Workflow,
    WorkflowEvent,
    WorkflowOutputEvent,
    tool,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import (
    ConcurrentBuilder,
    GroupChatBuilder,
    GroupChatState,
    HandoffBuilder,
    HandoffUserRequest,
    SequentialBuilder,
)


def calls(*made: tuple[str, dict[str, Any]]) -> ChatMessage:
    """A model reply calling tools (call ids from the tool names)."""
    return ChatMessage.assistant(
        contents=[
            FunctionCallContent(call_id=f"{name}-{i}", name=name, arguments=arguments)
            for i, (name, arguments) in enumerate(made)
        ]
    )


def tool_names(requests: dict[str, ToolApprovalRequest]) -> list[str]:
    return [r.tool_name for r in requests.values()]


# -- sequential_builder_tool_approval ----------------------------------------------------------


@tool(approval_mode="always_require")
def execute_database_query(
    query: Annotated[str, "The SQL query to execute against the production database"],
) -> str:
    """Execute a SQL query against the production database. Requires human approval."""
    return f"Query executed successfully. Results: 3 rows affected by '{query}'"


@tool(approval_mode="never_require")
def get_database_schema() -> str:
    """Get the current database schema. Does not require approval."""
    return """
    Tables:
    - users (id, name, email, created_at)
    - orders (id, user_id, total, status, created_at)
    - products (id, name, price, stock)
    """


async def process_event_stream(
    stream: AsyncIterable[WorkflowEvent], outputs: list[Any]
) -> dict[str, ToolApprovalResponse] | None:
    """Process events from the workflow stream to capture human feedback requests."""
    requests: dict[str, ToolApprovalRequest] = {}
    async for event in stream:
        if isinstance(event, RequestInfoEvent) and isinstance(event.data, ToolApprovalRequest):
            # We are only expecting tool approval requests in this sample
            requests[event.request_id] = event.data
        elif isinstance(event, WorkflowOutputEvent):
            outputs.append(event.data)
    responses: dict[str, ToolApprovalResponse] = {}
    for request_id, request in requests.items():
        # Simulating human approval
        responses[request_id] = request.approve()
    return responses if responses else None


async def test_sequential_builder_tool_approval() -> None:
    update = "UPDATE orders SET status = 'processing' WHERE status = 'pending'"
    database_agent = ChatAgent(
        ScriptedChatClient(
            [
                calls(("get_database_schema", {})),
                calls(("execute_database_query", {"query": update})),
                "I've checked the schema and executed the update query. The query "
                f'"{update}" was executed successfully, affecting 3 rows.',
            ]
        ),
        name="DatabaseAgent",
        instructions=(
            "You are a database assistant. You can view the database schema and execute "
            "queries. Always check the schema before running queries. Be careful with "
            "queries that modify data."
        ),
        tools=[get_database_schema, execute_database_query],
    )
    workflow = SequentialBuilder(participants=[database_agent]).build()
    outputs: list[Any] = []
    stream = workflow.run_stream(
        "Check the schema and then update all orders with status 'pending' to 'processing'"
    )
    pending_responses = await process_event_stream(stream, outputs)
    approvals = 0
    while pending_responses is not None:
        approvals += len(pending_responses)
        stream = workflow.run_stream(responses=pending_responses)
        pending_responses = await process_event_stream(stream, outputs)
    assert approvals == 1  # the schema call ran at once; the query waited
    [conversation] = outputs
    assert conversation[0].text.startswith("Check the schema")
    assert "affecting 3 rows" in conversation[-1].text
    results = [r.result for m in conversation for r in m.function_results]
    assert "Tables:" in results[0]
    assert results[1] == f"Query executed successfully. Results: 3 rows affected by '{update}'"


# -- concurrent_builder_tool_approval ----------------------------------------------------------


@tool(approval_mode="never_require")
def get_stock_price(symbol: Annotated[str, "The stock ticker symbol"]) -> str:
    """Get the current stock price for a given symbol."""
    prices = {"AAPL": 175.50, "GOOGL": 140.25, "MSFT": 378.90, "AMZN": 178.75}
    price = prices.get(symbol.upper(), 100.00)
    return f"{symbol.upper()}: ${price:.2f}"


@tool(approval_mode="never_require")
def get_market_sentiment(symbol: Annotated[str, "The stock ticker symbol"]) -> str:
    """Get market sentiment analysis for a stock."""
    return f"Market sentiment for {symbol.upper()}: Bullish"


@tool(approval_mode="always_require")
def execute_trade(
    symbol: Annotated[str, "The stock ticker symbol"],
    action: Annotated[str, "Either 'buy' or 'sell'"],
    quantity: Annotated[int, "Number of shares to trade"],
) -> str:
    """Execute a stock trade. Requires human approval due to financial impact."""
    return f"Trade executed: {action.upper()} {quantity} shares of {symbol.upper()}"


@tool(approval_mode="always_require")
def set_stop_loss(
    symbol: Annotated[str, "The stock ticker symbol"],
    stop_price: Annotated[float, "The stop-loss price"],
) -> str:
    """Set a stop-loss order for a stock. Requires human approval due to financial impact."""
    return f"Stop-loss set for {symbol.upper()} at ${stop_price:.2f}"


@tool(approval_mode="never_require")
def get_portfolio_balance() -> str:
    """Get current portfolio balance and available funds."""
    return "Portfolio: $50,000 invested, $10,000 cash available. Holdings: AAPL, GOOGL, MSFT."


def trader(name: str, symbol: str, quantity: int, stop: float, answer: str) -> ChatAgent:
    return ChatAgent(
        ScriptedChatClient(
            [
                calls(
                    ("get_stock_price", {"symbol": symbol}),
                    ("get_market_sentiment", {"symbol": symbol}),
                    ("get_portfolio_balance", {}),
                ),
                calls(
                    ("execute_trade", {"symbol": symbol, "action": "buy", "quantity": quantity}),
                    ("set_stop_loss", {"symbol": symbol, "stop_price": stop}),
                ),
                answer,
            ]
        ),
        name=name,
        instructions=f"You are a personal trading assistant focused on {symbol}.",
        tools=[
            get_stock_price,
            get_market_sentiment,
            get_portfolio_balance,
            execute_trade,
            set_stop_loss,
        ],
    )


async def test_concurrent_builder_tool_approval() -> None:
    microsoft_agent = trader(
        "MicrosoftAgent", "MSFT", 13, 340.0, "I have purchased 13 shares of MSFT, stop at $340."
    )
    google_agent = trader(
        "GoogleAgent", "GOOGL", 35, 126.0, "I have purchased 35 shares of GOOGL, stop at $126."
    )
    workflow = ConcurrentBuilder(participants=[microsoft_agent, google_agent]).build()
    asked: list[str] = []
    outputs: list[Any] = []

    async def process(stream: AsyncIterable[WorkflowEvent]) -> dict[str, Any] | None:
        requests: dict[str, ToolApprovalRequest] = {}
        async for event in stream:
            if isinstance(event, RequestInfoEvent) and isinstance(event.data, ToolApprovalRequest):
                requests[event.request_id] = event.data
            elif isinstance(event, WorkflowOutputEvent):
                outputs.append(event.data)
        asked.extend(tool_names(requests))
        return {rid: r.approve() for rid, r in requests.items()} or None

    pending = await process(
        workflow.run_stream(
            "Manage my portfolio. Use a max of 5000 dollars to adjust my position using "
            "your best judgment based on market sentiment. Set stop-loss orders to manage risk. "
            "No need to confirm trades with me."
        )
    )
    while pending is not None:
        pending = await process(workflow.run_stream(responses=pending))
    # Both agents asked for both of their trading calls, in one round.
    assert sorted(asked) == ["execute_trade", "execute_trade", "set_stop_loss", "set_stop_loss"]
    [aggregated] = outputs
    assert [(m.author_name or m.role.value) for m in aggregated if m.text] == [
        "user",
        "MicrosoftAgent",
        "GoogleAgent",
    ]
    assert "13 shares of MSFT" in aggregated[1].text
    assert "35 shares of GOOGL" in aggregated[2].text


# -- group_chat_builder_tool_approval ----------------------------------------------------------


@tool(approval_mode="never_require")
def run_tests(test_suite: Annotated[str, "Name of the test suite to run"]) -> str:
    """Run automated tests for the application."""
    return f"Test suite '{test_suite}' completed: 47 passed, 0 failed, 0 skipped"


@tool(approval_mode="never_require")
def check_staging_status() -> str:
    """Check the current status of the staging environment."""
    return "Staging environment: Healthy, Version 2.3.0 deployed, All services running"


@tool(approval_mode="always_require")
def deploy_to_production(
    version: Annotated[str, "The version to deploy"],
    components: Annotated[str, "Comma-separated list of components to deploy"],
) -> str:
    """Deploy specified components to production. Requires human approval."""
    return f"Production deployment complete: Version {version}, Components: {components}"


@tool(approval_mode="never_require")
def create_rollback_plan(version: Annotated[str, "The version being deployed"]) -> str:
    """Create a rollback plan for the deployment."""
    return (
        f"Rollback plan created for version {version}: "
        "Automated rollback to v2.2.0 if health checks fail within 5 minutes"
    )


def select_next_speaker(state: GroupChatState) -> str:
    """QA engineer first, then the DevOps engineer."""
    if not state.conversation:
        raise RuntimeError("Conversation is empty; cannot select next speaker.")
    if len(state.conversation) == 1:
        return "QAEngineer"  # First speaker
    return "DevOpsEngineer"  # Subsequent speakers


async def test_group_chat_builder_tool_approval() -> None:
    qa_engineer = ChatAgent(
        ScriptedChatClient(
            [
                calls(("run_tests", {"test_suite": "integration"})),
                "Test suite 'integration' completed: 47 passed, 0 failed. Ready for deployment.",
            ]
        ),
        name="QAEngineer",
        instructions="You are a QA engineer responsible for running tests before deployment.",
        tools=[run_tests],
    )
    devops_engineer = ChatAgent(
        ScriptedChatClient(
            [
                calls(("check_staging_status", {}), ("create_rollback_plan", {"version": "2.4.0"})),
                calls(
                    ("deploy_to_production", {"version": "2.4.0", "components": "api,web,worker"})
                ),
                "Production deployment complete! Version 2.4.0 has been successfully deployed.",
            ]
        ),
        name="DevOpsEngineer",
        instructions="You are a DevOps engineer responsible for deployments.",
        tools=[check_staging_status, create_rollback_plan, deploy_to_production],
    )
    workflow = GroupChatBuilder(
        participants=[qa_engineer, devops_engineer],
        max_rounds=2,
        selection_func=select_next_speaker,
    ).build()
    outputs: list[Any] = []
    stream = workflow.run_stream(
        "We need to deploy version 2.4.0 to production. Please coordinate the deployment."
    )
    pending_responses = await process_event_stream(stream, outputs)
    approvals = 0
    while pending_responses is not None:
        approvals += len(pending_responses)
        stream = workflow.run_stream(responses=pending_responses)
        pending_responses = await process_event_stream(stream, outputs)
    assert approvals == 1
    [conversation] = outputs
    assert [(m.author_name or m.role.value) for m in conversation] == [
        "user",
        "QAEngineer",
        "DevOpsEngineer",
    ]
    assert conversation[-1].text.startswith("Production deployment complete!")


# -- handoff_with_tool_approval_checkpoint_resume ----------------------------------------------


@tool(approval_mode="always_require")
def submit_refund(refund_description: str, amount: str, order_id: str) -> str:
    """Capture a refund request for manual review before processing."""
    return (
        f"refund recorded for order {order_id} (amount: {amount}) "
        f"with details: {refund_description}"
    )


def create_agents(clients: dict[str, ScriptedChatClient]) -> tuple[ChatAgent, ...]:
    """Triage, refund and order specialists (the model service outlives each 'process')."""
    triage = ChatAgent(clients["triage"], name="triage_agent")
    refund = ChatAgent(clients["refund"], name="refund_agent", tools=[submit_refund])
    order = ChatAgent(clients["order"], name="order_agent")
    return triage, refund, order


def create_workflow(
    checkpoint_storage: FileCheckpointStore, clients: dict[str, ScriptedChatClient]
) -> Workflow:
    """Build the handoff workflow with checkpointing enabled."""
    triage, refund, order = create_agents(clients)
    return (
        HandoffBuilder(
            name="checkpoint_handoff_demo",
            participants=[triage, refund, order],
            checkpoint_store=checkpoint_storage,
            # Terminate after 5 user messages for this demo
            termination_condition=lambda conv: sum(1 for msg in conv if msg.role == "user") >= 5,
        )
        .with_start_agent(triage)
        .with_request_info()  # MAF's handoff asks the user by default; ours when asked to
        .build()
    )


async def test_handoff_with_tool_approval_checkpoint_resume(tmp_path: Path) -> None:
    storage = FileCheckpointStore(tmp_path / "handoff_checkpoints")
    refund_call = calls(
        (
            "submit_refund",
            {
                "refund_description": "headphones arrived cracked",
                "amount": "$89.99",
                "order_id": "12345",
            },
        )
    )
    clients = {
        "triage": ScriptedChatClient(
            [
                ChatMessage.assistant(
                    contents=[
                        FunctionCallContent(
                            call_id="h1", name="transfer_to_refund_agent", arguments={}
                        )
                    ]
                )
            ]
        ),
        "refund": ScriptedChatClient(
            [
                "I'm sorry to hear that. Could you describe the damage and the amount?",
                refund_call,
                "Your refund of $89.99 is recorded and a replacement is on its way. Correct?",
                "Great. Anything else about the refund?",
                "You're welcome!",
            ]
        ),
        "order": ScriptedChatClient([]),
    }
    workflow = create_workflow(storage, clients)
    handoff_responses = [
        "The headphones in order 12345 arrived cracked. "
        "Please submit the refund for $89.99 and send a replacement to my original address.",
        "Yes, that covers the damage and refund request.",
        "That's everything I needed for the refund.",
        "Thanks for handling the refund.",
    ]
    outputs: list[Any] = []
    kinds: list[str] = []

    async def collect(stream: AsyncIterable[WorkflowEvent]) -> list[RequestInfoEvent]:
        found: list[RequestInfoEvent] = []
        async for event in stream:
            if isinstance(event, RequestInfoEvent):
                found.append(event)
            elif isinstance(event, WorkflowOutputEvent):
                outputs.append(event.data)
        return found

    request_events = await collect(
        workflow.run_stream("Hi, my order 12345 arrived damaged. I need a refund.")
    )
    while request_events:
        # A new workflow object each time: a fresh process resuming from the store.
        workflow = create_workflow(storage, clients)
        responses: dict[str, Any] = {}
        for request_event in request_events:
            if isinstance(request_event.data, HandoffUserRequest):
                kinds.append("user")
                responses[request_event.request_id] = handoff_responses.pop(0)
            elif isinstance(request_event.data, ToolApprovalRequest):
                kinds.append(f"approve {request_event.data.tool_name}")
                responses[request_event.request_id] = request_event.data.approve()
            else:
                raise ValueError(f"Unsupported request type: {type(request_event.data)}")
        checkpoint = await storage.latest(request_events[0].run_id)
        assert checkpoint is not None, "No checkpoints found."
        request_events = await collect(
            workflow.run_stream(
                responses=responses, checkpoint_id=checkpoint.id, checkpoint_store=storage
            )
        )
    assert kinds == ["user", "approve submit_refund", "user", "user", "user"]
    assert handoff_responses == []
    [conversation] = outputs
    recorded = [r.result for m in conversation for r in m.function_results]
    assert recorded == []  # the spoken conversation: tool traffic stays with the refund agent
    assert [m.author_name or m.role.value for m in conversation] == [
        "user",
        "refund_agent",
        "user",
        "refund_agent",
        "user",
        "refund_agent",
        "user",
        "refund_agent",
        "user",
    ]
    assert len(clients["refund"].calls) == 5
    # The resumed refund turn ran the approved call; the model read its result.
    after_approval = clients["refund"].calls[2][0]
    assert (
        after_approval[-1].function_results[0].result.startswith("refund recorded for order 12345")
    )
