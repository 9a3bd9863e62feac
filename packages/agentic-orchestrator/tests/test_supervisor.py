"""create_supervisor, as LangGraph-supervisor's.

``test_supervisor_basic_workflow`` ports langchain-ai/langgraph-supervisor-py's
``tests/test_supervisor.py`` test of the same name (its ``FakeChatModel`` becomes our
``ScriptedChatClient``, ``create_react_agent`` a ``ChatAgent``); the quickstart test ports the
README's example.
"""

from __future__ import annotations

from agentic_core import (
    ChatAgent,
    ChatMessage,
    FunctionCallContent,
    Role,
    WorkflowRunState,
    tool,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import HandoffBuilder, create_supervisor


def _calls(*calls: tuple[str, dict[str, object], str]) -> ChatMessage:
    return ChatMessage(
        role=Role.ASSISTANT,
        contents=[
            FunctionCallContent(call_id=call_id, name=name, arguments=args)
            for name, args, call_id in calls
        ],
    )


supervisor_messages = [
    _calls(("transfer_to_research_expert", {}, "call_gyQSgJQm5jJtPcF5ITe8GGGF")),
    _calls(("transfer_to_math_expert", {}, "call_zCExWE54g4B4oFZcwBh3Wumg")),
    ChatMessage.assistant(
        "The combined headcount of the FAANG companies in 2024 is 1,977,586 employees."
    ),
]

research_agent_messages = [
    _calls(("web_search", {"query": "FAANG headcount 2024"}, "call_4sLYp7usFcIZBFcNsOGQiFzV")),
    ChatMessage.assistant(
        "The headcount for the FAANG companies in 2024 is as follows:\n\n"
        "1. **Facebook (Meta)**: 67,317 employees\n2. **Amazon**: 1,551,000 employees\n"
        "3. **Apple**: 164,000 employees\n4. **Netflix**: 14,000 employees\n"
        "5. **Google (Alphabet)**: 181,269 employees\n\n"
        "To find the combined headcount, simply add these numbers together."
    ),
]

math_agent_messages = [
    _calls(
        ("add", {"a": 67317, "b": 1551000}, "call_BRvA6oAlgMA1whIkAn9gE3AS"),
        ("add", {"a": 164000, "b": 14000}, "call_OLVb4v0pNDlsBsKBwDK4wb1W"),
        ("add", {"a": 181269, "b": 0}, "call_5VEHaInDusJ9MU3i3tVJN6Hr"),
    ),
    _calls(
        ("add", {"a": 1618317, "b": 178000}, "call_FdfUz8Gm3S5OQaVq2oQpMxeN"),
        ("add", {"a": 181269, "b": 0}, "call_j5nna1KwGiI60wnVHM2319r6"),
    ),
    _calls(("add", {"a": 1796317, "b": 181269}, "call_4fNHtFvfOvsaSPb8YK1qNAiR")),
    ChatMessage.assistant(
        "The combined headcount of the FAANG companies in 2024 is 1,977,586 employees."
    ),
]


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@tool
def multiply(a: float, b: float) -> float:
    """Multiply two numbers."""
    return a * b


@tool
def web_search(query: str) -> str:
    """Search the web for information."""
    return (
        "Here are the headcounts for each of the FAANG companies in 2024:\n"
        "1. **Facebook (Meta)**: 67,317 employees.\n"
        "2. **Apple**: 164,000 employees.\n"
        "3. **Amazon**: 1,551,000 employees.\n"
        "4. **Netflix**: 14,000 employees.\n"
        "5. **Google (Alphabet)**: 181,269 employees."
    )


def same(actual: ChatMessage, expected: ChatMessage) -> bool:
    """LangGraph compares messages by content and tool calls; ids differ here."""
    return (
        actual.role is expected.role
        and actual.text == expected.text
        and [(c.name, c.arguments) for c in actual.function_calls]
        == [(c.name, c.arguments) for c in expected.function_calls]
    )


async def test_supervisor_basic_workflow() -> None:
    """Test basic supervisor workflow with two agents."""

    # output_mode = "last_message"
    math_agent = ChatAgent(ScriptedChatClient(math_agent_messages), tools=[add], name="math_expert")
    research_agent = ChatAgent(
        ScriptedChatClient(research_agent_messages), tools=[web_search], name="research_expert"
    )

    workflow = create_supervisor(
        [math_agent, research_agent], model=ScriptedChatClient(supervisor_messages)
    )

    app = workflow.build()
    assert app is not None

    result = await app.run(
        [ChatMessage.user("what's the combined headcount of the FAANG companies in 2024?")]
    )
    messages = result.outputs[0]

    assert len(messages) == 12
    # first supervisor handoff
    assert same(messages[1], supervisor_messages[0])
    # last research agent message
    assert same(messages[3], research_agent_messages[-1])
    # next supervisor handoff
    assert same(messages[6], supervisor_messages[1])
    # last math agent message
    assert same(messages[8], math_agent_messages[-1])
    # final supervisor message
    assert same(messages[11], supervisor_messages[-1])

    # output_mode = "full_history"
    math_agent = ChatAgent(ScriptedChatClient(math_agent_messages), tools=[add], name="math_expert")
    research_agent = ChatAgent(
        ScriptedChatClient(research_agent_messages), tools=[web_search], name="research_expert"
    )

    workflow_full_history = create_supervisor(
        [math_agent, research_agent],
        model=ScriptedChatClient(supervisor_messages),
        output_mode="full_history",
    )
    app_full_history = workflow_full_history.build()
    result_full_history = await app_full_history.run(
        [ChatMessage.user("what's the combined headcount of the FAANG companies in 2024?")]
    )
    full = result_full_history.outputs[0]

    assert len(full) == 23
    # first supervisor handoff
    assert same(full[1], supervisor_messages[0])
    # all research agent AI messages
    assert same(full[3], research_agent_messages[0])
    assert same(full[5], research_agent_messages[1])
    # next supervisor handoff
    assert same(full[8], supervisor_messages[1])
    # all math agent AI messages
    assert same(full[10], math_agent_messages[0])
    assert same(full[14], math_agent_messages[1])
    assert same(full[17], math_agent_messages[2])
    # final supervisor message
    assert same(full[-1], supervisor_messages[-1])


async def test_workers_hand_the_turn_back_and_only_the_supervisor_delegates() -> None:
    supervisor_model = ScriptedChatClient(supervisor_messages)
    math_agent = ChatAgent(ScriptedChatClient(math_agent_messages), tools=[add], name="math_expert")
    research_agent = ChatAgent(
        ScriptedChatClient(research_agent_messages), tools=[web_search], name="research_expert"
    )
    result = (
        await create_supervisor([math_agent, research_agent], model=supervisor_model)
        .build()
        .run("what's the combined headcount of the FAANG companies in 2024?")
    )
    conversation = result.outputs[0]
    back = [m for m in conversation if m.text.startswith("Transferring back")]
    assert [(m.author_name, m.function_calls[0].name) for m in back] == [
        ("research_expert", "transfer_back_to_supervisor"),
        ("math_expert", "transfer_back_to_supervisor"),
    ]
    offered = {t.name for t in supervisor_model.calls[0][1].tools}  # type: ignore[union-attr]
    assert offered == {"transfer_to_math_expert", "transfer_to_research_expert"}
    research_tools = {t.name for t in research_agent.chat_client.calls[0][1].tools}  # type: ignore[attr-defined]
    assert research_tools == {"web_search"}  # workers get no transfer tools
    # The supervisor's second turn sees the research expert's answer and the way back.
    second_turn = supervisor_model.calls[1][0]
    assert [m.role for m in second_turn][-3:] == [Role.ASSISTANT, Role.ASSISTANT, Role.TOOL]


async def test_readme_quickstart() -> None:
    """The langgraph-supervisor README's quickstart, with scripted models."""
    math_agent = ChatAgent(
        ScriptedChatClient(math_agent_messages),
        "You are a math expert. Always use one tool at a time.",
        tools=[add, multiply],
        name="math_expert",
    )
    research_agent = ChatAgent(
        ScriptedChatClient(research_agent_messages),
        "You are a world class researcher with access to web search. Do not do any math.",
        tools=[web_search],
        name="research_expert",
    )

    # Create supervisor workflow
    workflow = create_supervisor(
        [research_agent, math_agent],
        model=ScriptedChatClient(supervisor_messages),
        prompt=(
            "You are a team supervisor managing a research expert and a math expert. "
            "For current events, use research_agent. "
            "For math problems, use math_agent."
        ),
    )

    # Compile and run
    assert isinstance(workflow, HandoffBuilder)
    app = workflow.build()
    result = await app.run("what's the combined headcount of the FAANG companies in 2024?")
    assert result.status is WorkflowRunState.COMPLETED
    final = result.outputs[0][-1]
    assert final.author_name == "supervisor"
    assert final.text == (
        "The combined headcount of the FAANG companies in 2024 is 1,977,586 employees."
    )
