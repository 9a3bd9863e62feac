"""A2AAgent against agentic's own A2A server (``serve_a2a``): a served ChatAgent's tool call
waiting for approval surfaces as that very ``ToolApprovalRequest``, and a served workflow's
``request_info`` as a pending request; answered through ``run(responses=...)``, the remote
task goes on where it stopped."""

from __future__ import annotations

from typing import Any

from a2a_reference_server import free_port, served

from agentic_bus import A2AAgent, serve_a2a
from agentic_core import (
    AgentExecutor,
    ChatAgent,
    ChatMessage,
    Executor,
    FunctionCallContent,
    ToolApprovalRequest,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
    tool,
)
from agentic_core.testing import ScriptedChatClient

DEPLOYED: list[str] = []


@tool(approval_mode="always_require")
def deploy(service: str) -> str:
    """Deploy ``service``."""
    DEPLOYED.append(service)
    return f"deployed {service}"


def releaser() -> ChatAgent:
    call = FunctionCallContent(call_id="c1", name="deploy", arguments={"service": "api"})
    model = ScriptedChatClient(
        [ChatMessage.assistant(contents=[call]), "Done deploying.", "Anything else?"]
    )
    return ChatAgent(model, name="releaser", tools=[deploy])


class AskName(Executor):
    """Asks a person for a name, then greets them."""

    @handler
    async def start(self, message: str, ctx: WorkflowContext) -> None:
        del message
        await ctx.request_info("What is your name?", str)

    @response_handler
    async def greet(self, request: str, response: str, ctx: WorkflowContext[Any, str]) -> None:
        del request
        await ctx.yield_output(f"Hello, {response}!")


def setup_function() -> None:
    DEPLOYED.clear()


async def test_a_served_agents_tool_approval_is_the_remote_request_itself() -> None:
    port = free_port()
    async with served(serve_a2a(releaser()), port) as url, A2AAgent(url) as remote:
        assert (await remote.get_card()).name == "releaser"
        thread = remote.get_new_thread()
        asked = await remote.run("ship it", thread=thread)
        [request] = asked.user_input_requests
        assert request == ToolApprovalRequest(
            call_id="c1", tool_name="deploy", arguments={"service": "api"}, agent_name="releaser"
        )
        assert DEPLOYED == []
        done = await remote.run(responses={request.request_id: request.approve()}, thread=thread)
        assert done.text == "Done deploying."
        assert DEPLOYED == ["api"]
        assert "a2a_pending" not in thread.metadata
        # The same thread continues the served agent's conversation, streamed.
        texts = [u.text async for u in remote.run_stream("thanks", thread=thread)]
        assert "".join(texts) == "Anything else?"


async def test_a_served_workflows_approval_request_is_answered_on_its_task() -> None:
    executor = AgentExecutor(releaser(), id="releaser", output_response=True)
    workflow = WorkflowBuilder("release").set_start_executor(executor).build()
    port = free_port()
    async with served(serve_a2a(workflow), port) as url, A2AAgent(url, name="release") as remote:
        thread = remote.get_new_thread()
        asked = await remote.run("ship it", thread=thread)
        [request] = asked.user_input_requests
        assert (request.tool_name, request.arguments) == ("deploy", {"service": "api"})
        done = await remote.run(responses={request.request_id: request.approve()}, thread=thread)
    assert done.text == "Done deploying."
    assert DEPLOYED == ["api"]


async def test_a_served_workflows_question_is_answered_with_text() -> None:
    workflow = WorkflowBuilder("greet").set_start_executor(AskName("asker")).build()
    port = free_port()
    async with served(serve_a2a(workflow), port) as url, A2AAgent(url, name="greeter") as remote:
        asked = await remote.run("hi")
        [request] = asked.user_input_requests
        assert request.tool_name == "request_info"
        assert request.arguments["question"] == "asker asks: What is your name?"
        # No thread: the agent remembers which task the request belongs to.
        done = await remote.run(responses={request.request_id: "Ada"})
    assert done.text == "Hello, Ada!"
