"""A tool call can wait for a person: approval_mode on tools and agents, the pending request in
the response, and run(responses=...) approving, rejecting with a reason or editing arguments."""

from __future__ import annotations

from typing import Any

import pytest

from agentic_core import (
    AgentError,
    ChatAgent,
    ChatMessage,
    FunctionCallContent,
    RequestInfoEvent,
    ToolApprovalRequest,
    ToolApprovalResponse,
    ToolError,
    tool,
)
from agentic_core.testing import ScriptedChatClient

SECRET = "s3cr3t-T0ken"  # noqa: S105 - a made-up secret to look for


def call(call_id: str, name: str, **arguments: Any) -> FunctionCallContent:
    return FunctionCallContent(call_id=call_id, name=name, arguments=arguments)


def calls(*contents: FunctionCallContent) -> ChatMessage:
    return ChatMessage.assistant(contents=list(contents))


class Bank:
    """Tools that record what ran: a transfer needs approval, a balance does not."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

        @tool(approval_mode="always_require")
        def transfer(to: str, amount: int) -> str:
            """Send money."""
            self.ran.append(("transfer", {"to": to, "amount": amount}))
            return f"sent {amount} to {to}"

        @tool
        def balance() -> int:
            """The balance."""
            self.ran.append(("balance", {}))
            return 100

        self.transfer = transfer
        self.balance = balance


def agent_with(bank: Bank, *replies: str | ChatMessage, **kw: Any) -> ChatAgent:
    client = ScriptedChatClient(list(replies))
    return ChatAgent(client, name="banker", tools=[bank.transfer, bank.balance], **kw)


def client_of(agent: ChatAgent) -> ScriptedChatClient:
    client = agent.chat_client
    assert isinstance(client, ScriptedChatClient)
    return client


# -- the tool's and the agent's setting ----------------------------------------------------------


def test_a_tool_says_whether_its_calls_wait_for_approval() -> None:
    bank = Bank()
    assert bank.transfer.approval_mode == "always_require"
    assert bank.balance.approval_mode is None  # the agent decides; never_require by default
    assert repr(bank.transfer) == "FunctionTool(name='transfer', approval_mode='always_require')"
    assert tool(lambda: 1, name="one", approval_mode="never_require").approval_mode == (
        "never_require"
    )


def test_an_unknown_approval_mode_is_refused_naming_the_choices() -> None:
    with pytest.raises(ToolError, match="'always_require' or 'never_require', got 'sometimes'"):
        tool(lambda: 1, name="one", approval_mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="got 'yes'"):
        ChatAgent(ScriptedChatClient([]), tool_approval_mode="yes")  # type: ignore[arg-type]


# -- ChatAgent.run ---------------------------------------------------------------------------------


async def test_a_call_needing_approval_does_not_run_and_the_response_carries_the_request() -> None:
    bank = Bank()
    agent = agent_with(bank, calls(call("c1", "transfer", to="bob", amount=5)))
    thread = agent.get_new_thread()
    response = await agent.run("pay bob 5", thread=thread)
    assert bank.ran == []
    assert response.user_input_requests == [
        ToolApprovalRequest(
            call_id="c1",
            tool_name="transfer",
            arguments={"to": "bob", "amount": 5},
            agent_name="banker",
        )
    ]
    assert response.user_input_requests[0].request_id == "c1"
    # The thread holds the call, waiting for its result.
    history = await thread.list_messages()
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[-1].function_calls[0].call_id == "c1"


async def test_an_approved_call_runs_and_the_model_goes_on_with_its_result() -> None:
    bank = Bank()
    agent = agent_with(bank, calls(call("c1", "transfer", to="bob", amount=5)), "Sent.")
    thread = agent.get_new_thread()
    first = await agent.run("pay bob 5", thread=thread)
    done = await agent.run(
        responses={first.user_input_requests[0].call_id: ToolApprovalResponse.approve()},
        thread=thread,
    )
    assert bank.ran == [("transfer", {"to": "bob", "amount": 5})]
    assert done.text == "Sent."
    assert done.user_input_requests == []
    [result] = [r for m in done.messages for r in m.function_results]
    assert (result.call_id, result.result, result.is_error) == ("c1", "sent 5 to bob", False)
    seen = client_of(agent).calls[1][0]
    assert [m.role for m in seen] == ["user", "assistant", "tool"]


async def test_a_rejected_call_does_not_run_and_the_model_reads_the_reason() -> None:
    bank = Bank()
    agent = agent_with(bank, calls(call("c1", "transfer", to="eve", amount=500)), "Cancelled.")
    thread = agent.get_new_thread()
    await agent.run("pay eve 500", thread=thread)
    done = await agent.run(
        responses={"c1": ToolApprovalResponse.reject("eve is not a known payee")}, thread=thread
    )
    assert bank.ran == []
    assert done.text == "Cancelled."
    result = client_of(agent).calls[1][0][-1].function_results[0]
    assert result.is_error
    assert "rejected" in result.result
    assert "eve is not a known payee" in result.result


async def test_edited_arguments_are_the_ones_the_tool_runs_with_and_the_model_sees() -> None:
    bank = Bank()
    agent = agent_with(bank, calls(call("c1", "transfer", to="bob", amount=500)), "Sent 50.")
    thread = agent.get_new_thread()
    first = await agent.run("pay bob", thread=thread)
    await agent.run(
        responses={"c1": first.user_input_requests[0].edit({"to": "bob", "amount": 50})},
        thread=thread,
    )
    assert bank.ran == [("transfer", {"to": "bob", "amount": 50})]
    # The conversation shows the call as it ran (same message, edited arguments).
    history = await thread.list_messages()
    [assistant_call] = [c for m in history for c in m.function_calls]
    assert assistant_call.arguments == {"to": "bob", "amount": 50}
    assert history[1].message_id == first.messages[0].message_id
    assert client_of(agent).calls[1][0][1].function_calls[0].arguments["amount"] == 50


async def test_the_agent_default_applies_to_tools_that_do_not_choose() -> None:
    bank = Bank()
    agent = agent_with(
        bank, calls(call("c1", "balance")), "100.", tool_approval_mode="always_require"
    )
    response = await agent.run("balance?")
    assert [r.tool_name for r in response.user_input_requests] == ["balance"]
    assert bank.ran == []

    @tool(approval_mode="never_require")
    def lookup() -> str:
        """Read-only."""
        return "ok"

    relaxed = ChatAgent(
        ScriptedChatClient([calls(call("c1", "lookup")), "ok."]),
        tools=[lookup],
        tool_approval_mode="always_require",
    )
    assert (await relaxed.run("look")).text == "ok."  # the tool's own choice wins


async def test_the_other_calls_of_the_reply_wait_with_it_and_run_once_answered() -> None:
    bank = Bank()
    reply = calls(call("c1", "balance"), call("c2", "transfer", to="bob", amount=5))
    agent = agent_with(bank, reply, "Done.")
    thread = agent.get_new_thread()
    first = await agent.run("check and pay", thread=thread)
    assert [r.call_id for r in first.user_input_requests] == ["c2"]
    assert bank.ran == []
    done = await agent.run(responses={"c2": {"approved": True}}, thread=thread)  # JSON form
    assert sorted(name for name, _ in bank.ran) == ["balance", "transfer"]
    results = [r.call_id for m in done.messages for r in m.function_results]
    assert results == ["c1", "c2"]  # in the model's order


async def test_new_input_while_a_call_waits_is_refused_naming_it() -> None:
    bank = Bank()
    agent = agent_with(bank, calls(call("c1", "transfer", to="bob", amount=5)))
    thread = agent.get_new_thread()
    await agent.run("pay bob", thread=thread)
    with pytest.raises(AgentError, match=r"'c1' wait for approval; answer them first"):
        await agent.run("never mind", thread=thread)


async def test_answers_must_cover_the_waiting_calls_and_name_only_them() -> None:
    bank = Bank()
    reply = calls(
        call("c1", "transfer", to="bob", amount=5), call("c2", "transfer", to="ann", amount=7)
    )
    agent = agent_with(bank, reply, "Done.")
    thread = agent.get_new_thread()
    await agent.run("pay both", thread=thread)
    with pytest.raises(AgentError, match="missing 'c2'"):
        await agent.run(responses={"c1": ToolApprovalResponse.approve()}, thread=thread)
    with pytest.raises(AgentError, match="no tool call 'c9' waits"):
        await agent.run(responses={"c9": ToolApprovalResponse.approve()}, thread=thread)
    with pytest.raises(AgentError, match="is not a ToolApprovalResponse"):
        await agent.run(responses={"c1": {"ok": 1}, "c2": {"approved": True}}, thread=thread)
    assert bank.ran == []
    await agent.run(
        responses={"c1": ToolApprovalResponse.approve(), "c2": ToolApprovalResponse.reject()},
        thread=thread,
    )
    assert bank.ran == [("transfer", {"to": "bob", "amount": 5})]


async def test_responses_without_a_waiting_call_are_an_error() -> None:
    agent = agent_with(Bank(), "hi")
    with pytest.raises(AgentError, match="no tool call of this conversation waits"):
        await agent.run(responses={"c1": ToolApprovalResponse.approve()})


async def test_without_a_thread_the_conversation_so_far_comes_back_with_the_answers() -> None:
    bank = Bank()
    agent = agent_with(bank, calls(call("c1", "transfer", to="bob", amount=5)), "Sent.")
    query = ChatMessage.user("pay bob 5")
    first = await agent.run(query)
    done = await agent.run([query, *first.messages], responses={"c1": {"approved": True}})
    assert done.text == "Sent."
    assert bank.ran == [("transfer", {"to": "bob", "amount": 5})]


async def test_a_streamed_turn_waits_and_resumes_the_same_way() -> None:
    bank = Bank()
    agent = agent_with(bank, calls(call("c1", "transfer", to="bob", amount=5)), "Sent now.")
    thread = agent.get_new_thread()
    updates = [u async for u in agent.run_stream("pay bob", thread=thread)]
    final = updates[-1].response
    assert final is not None
    assert [r.call_id for r in final.user_input_requests] == ["c1"]
    resumed = [
        u
        async for u in agent.run_stream(
            responses={"c1": ToolApprovalResponse.approve()}, thread=thread
        )
    ]
    assert "".join(u.text for u in resumed if not u.done) == "Sent now."
    assert bank.ran == [("transfer", {"to": "bob", "amount": 5})]


# -- the data ------------------------------------------------------------------------------------


def test_edited_arguments_need_approval() -> None:
    with pytest.raises(ValueError, match="edited arguments need approved=True"):
        ToolApprovalResponse(approved=False, arguments={"to": "bob"})
    assert ToolApprovalResponse.edit({"a": 1}) == ToolApprovalResponse(
        approved=True, arguments={"a": 1}
    )


async def test_argument_values_never_appear_in_reprs() -> None:
    request = ToolApprovalRequest(
        call_id="c1", tool_name="login", arguments={"user": "ada", "api_key": SECRET}
    )
    answer = request.edit({"user": "ada", "api_key": SECRET})
    event = RequestInfoEvent(
        request_id="r1",
        source_executor_id="agent",
        data=request,
        response_type=ToolApprovalResponse,
    )

    @tool(approval_mode="always_require")
    def login(user: str, api_key: str) -> str:
        """Log in."""
        return user

    agent = ChatAgent(
        ScriptedChatClient([calls(call("c1", "login", user="ada", api_key=SECRET))]),
        tools=[login],
    )
    response = await agent.run("log in")
    for shown in (
        repr(request),
        str(request),
        repr(answer),
        repr(event),
        repr(response.user_input_requests),
    ):
        assert SECRET not in shown
        assert "api_key" in shown or "approved" in shown
    assert request.arguments["api_key"] == SECRET  # the data itself is whole
