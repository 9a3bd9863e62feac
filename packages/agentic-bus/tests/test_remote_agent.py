"""Remote agents: ``serve_agent`` answers ``ProxyAgent`` calls over a MessageBus.

Every case runs on core's ``InMemoryBus`` and on a real nats-server (``NatsBus``, the server
and the caller on separate connections); one case serves the agent from another OS process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import structlog.testing

from agentic_bus import NatsBus, NatsKVStateStore
from agentic_bus._agent_proxy import ProxyAgent, RemoteThreadStore
from agentic_bus._agent_server import AgentServer, serve_agent
from agentic_bus._agent_wire import (
    MALFORMED_REQUEST,
    SERVER_CLOSED,
    AgentRunRequest,
    ErrorReply,
    RemoteAgentError,
    StreamAccepted,
    parse_reply,
)
from agentic_bus._subjects import Subjects
from agentic_core import (
    Agent,
    AgentError,
    AgentExecutor,
    AgentResponse,
    AgentResponseUpdate,
    AgentRunUpdateEvent,
    AgentThread,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    FunctionResultContent,
    InMemoryBus,
    InMemoryStateStore,
    MessageBus,
    NoRespondersError,
    Role,
    WorkflowBuilder,
    tool,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient

TESTS_DIR = Path(__file__).resolve().parent


class Buses:
    """Buses of one transport: the same ``InMemoryBus`` each time, or a new NATS connection.

    Servers started through ``serve`` get their own bus and are closed after the test.
    """

    def __init__(self, nats_url: str | None) -> None:
        self.nats_url = nats_url
        self._memory = InMemoryBus()
        self._opened: list[MessageBus] = []
        self._servers: list[AgentServer] = []

    async def new(self) -> MessageBus:
        if self.nats_url is None:
            return self._memory
        bus = await NatsBus.connect(self.nats_url)
        self._opened.append(bus)
        return bus

    async def serve(self, agent: Agent, **options: Any) -> AgentServer:
        server = await serve_agent(agent, await self.new(), **options)
        self._servers.append(server)
        return server

    async def close(self) -> None:
        for server in self._servers:
            await server.close(grace_s=1.0)
        for bus in [*self._opened, self._memory]:
            await bus.close()


@pytest.fixture(params=["memory", "nats"])
async def buses(request: pytest.FixtureRequest) -> AsyncIterator[Buses]:
    url = request.getfixturevalue("nats_server") if request.param == "nats" else None
    made = Buses(url)
    yield made
    await made.close()


async def until(condition: Callable[[], bool], timeout_s: float = 5.0) -> None:
    async with asyncio.timeout(timeout_s):
        while not condition():  # noqa: ASYNC110 - polling the server's counters
            await asyncio.sleep(0.01)


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def texts(messages: list[ChatMessage]) -> list[str]:
    return [m.text for m in messages]


# -- round trips -------------------------------------------------------------------------------


async def test_run_returns_the_remote_chat_agents_response(buses: Buses) -> None:
    agent = ChatAgent(ScriptedChatClient(["Hello from afar."]), id=unique("greeter"))
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())

    response = await proxy.run("hi")

    assert isinstance(proxy, Agent)
    assert response.text == "Hello from afar."
    assert response.agent_id == agent.id
    assert response.usage.output_tokens > 0


async def test_run_stream_yields_the_remote_updates_in_order(buses: Buses) -> None:
    full = "one two three four five six"
    agent = ChatAgent(ScriptedChatClient([full], chunk_size=3), id=unique("streamer"))
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())

    updates = [u async for u in proxy.run_stream("count")]

    assert len(updates) > 5
    assert "".join(u.text for u in updates) == full
    assert [u.done for u in updates] == [False] * (len(updates) - 1) + [True]
    final = updates[-1].response
    assert final is not None
    assert final.text == full


async def test_a_tool_call_runs_on_the_server(buses: Buses) -> None:
    asked: list[str] = []

    @tool
    def capital(country: str) -> str:
        """The capital city of ``country``."""
        asked.append(country)
        return {"France": "Paris"}.get(country, "unknown")

    call = FunctionCallContent(call_id="c1", name="capital", arguments={"country": "France"})
    client = ScriptedChatClient([ChatMessage.assistant(contents=[call]), "Paris it is."])
    agent = ChatAgent(client, id=unique("geo"), tools=[capital])
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())

    response = await proxy.run("Capital of France?")

    assert response.text == "Paris it is."
    assert asked == ["France"]
    results = [c for m in response.messages for c in m.contents]
    assert FunctionResultContent(call_id="c1", result="Paris") in results


# -- threads -----------------------------------------------------------------------------------


async def test_a_thread_continues_across_two_calls(buses: Buses) -> None:
    client = ScriptedChatClient(["first answer", "second answer"])
    agent = ChatAgent(client, id=unique("memo"))
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())
    thread = proxy.get_new_thread()

    await proxy.run("one", thread=thread)
    await proxy.run("two", thread=thread)

    assert texts(client.calls[1][0]) == ["one", "first answer", "two"]
    assert isinstance(thread.message_store, RemoteThreadStore)
    served = await thread.list_messages()
    assert texts(served) == ["one", "first answer", "two", "second answer"]


async def test_a_streamed_turn_joins_the_thread_too(buses: Buses) -> None:
    client = ScriptedChatClient(["streamed reply", "plain reply"], chunk_size=4)
    agent = ChatAgent(client, id=unique("mixed"))
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())
    thread = proxy.get_new_thread()

    _ = [u async for u in proxy.run_stream("first", thread=thread)]
    await proxy.run("second", thread=thread)

    assert texts(client.calls[1][0]) == ["first", "streamed reply", "second"]


async def test_two_servers_in_one_queue_group_share_a_thread(buses: Buses) -> None:
    agent_id = unique("pair")
    store = InMemoryStateStore()

    def replier(label: str) -> FunctionChatClient:
        return FunctionChatClient(lambda messages, _: f"{label}:{len(messages)}")

    left = ChatAgent(replier("left"), id=agent_id)
    right = ChatAgent(replier("right"), id=agent_id)
    await buses.serve(left, thread_store=store)
    await buses.serve(right, thread_store=store)
    proxy = ProxyAgent(agent_id, await buses.new())
    thread = proxy.get_new_thread()

    replies = [(await proxy.run(f"turn {i}", thread=thread)).text for i in range(16)]

    # Each turn saw the whole conversation, whichever server answered it.
    assert [int(r.split(":")[1]) for r in replies] == [2 * i + 1 for i in range(16)]
    assert {r.split(":")[0] for r in replies} == {"left", "right"}


async def test_a_restored_thread_adds_no_duplicates(buses: Buses) -> None:
    agent = ChatAgent(ScriptedChatClient(["noted"]), id=unique("restore"))
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())
    thread = proxy.get_new_thread()
    await proxy.run("remember this", thread=thread)
    saved = await thread.list_messages()

    # What AgentExecutor does on resume: a new thread, the old id, the saved messages added.
    restored = proxy.get_new_thread()
    restored.id = thread.id
    await restored.add_messages(saved)

    assert texts(await restored.list_messages()) == ["remember this", "noted"]


async def test_a_thread_kept_by_the_caller_is_sent_along_and_updated(buses: Buses) -> None:
    client = ScriptedChatClient(["You like tea."])
    agent = ChatAgent(client, id=unique("local-thread"))
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())
    thread = AgentThread(metadata={"user_id": "ada"})
    await thread.add_messages([ChatMessage.user("I like tea."), ChatMessage.assistant("Noted.")])

    await proxy.run("What do I like?", thread=thread)

    assert texts(client.calls[0][0]) == ["I like tea.", "Noted.", "What do I like?"]
    history = await thread.list_messages()
    assert texts(history)[-2:] == ["What do I like?", "You like tea."]
    assert thread.metadata == {"user_id": "ada"}


class TurnCountingAgent:
    """A plain core ``Agent`` (no ChatAgent) that counts its turns in the thread's metadata."""

    name = "counter"

    def __init__(self) -> None:
        self.id = unique("counter")
        self.seen_metadata: list[dict[str, Any]] = []

    async def run(
        self, messages: Any = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AgentResponse:
        assert thread is not None
        self.seen_metadata.append(dict(thread.metadata))
        thread.metadata["turns"] = thread.metadata.get("turns", 0) + 1
        return AgentResponse(text=f"turn {thread.metadata['turns']}", agent_id=self.id)

    async def run_stream(
        self, messages: Any = None, *, thread: AgentThread | None = None, **kwargs: Any
    ) -> AsyncIterator[AgentResponseUpdate]:
        yield AgentResponseUpdate(text=(await self.run(messages, thread=thread)).text, done=True)

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        return AgentThread(metadata=metadata)


async def test_thread_metadata_reaches_the_agent_and_its_changes_come_back(buses: Buses) -> None:
    agent = TurnCountingAgent()
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())
    thread = proxy.get_new_thread(user_id="ada")

    await proxy.run("one", thread=thread)
    _ = [u async for u in proxy.run_stream("two", thread=thread)]

    assert agent.seen_metadata == [{"user_id": "ada"}, {"user_id": "ada", "turns": 1}]
    assert thread.metadata == {"user_id": "ada", "turns": 2}


async def test_chat_options_cross_without_tools(buses: Buses) -> None:
    client = ScriptedChatClient(["warm"])
    agent = ChatAgent(client, id=unique("options"))
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())

    await proxy.run("hi", options=ChatOptions(temperature=0.2, max_tokens=50))

    options = client.calls[0][1]
    assert options is not None
    assert (options.temperature, options.max_tokens) == (0.2, 50)


async def test_keywords_that_cannot_cross_the_bus_are_refused_before_sending(
    buses: Buses,
) -> None:
    proxy = ProxyAgent("anyone", await buses.new())

    with pytest.raises(AgentError, match="response_format"):
        await proxy.run("hi", response_format=ChatMessage)
    with pytest.raises(AgentError, match="background"):
        await proxy.run("hi", background=True)
    with pytest.raises(AgentError, match="JSON"):
        await proxy.run("hi", deadline=object())


# -- failures ----------------------------------------------------------------------------------


class QuotaExceededError(Exception):
    pass


def touchy_client() -> FunctionChatClient:
    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        if messages[-1].text == "explode":
            raise QuotaExceededError("over quota for today")
        return "fine"

    return FunctionChatClient(reply)


async def test_an_agent_error_comes_back_typed_and_the_server_keeps_serving(
    buses: Buses,
) -> None:
    agent = ChatAgent(touchy_client(), id=unique("touchy"))
    server = await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())

    with pytest.raises(RemoteAgentError) as caught:
        await proxy.run("explode")

    assert caught.value.remote_type == "QuotaExceededError"
    assert caught.value.remote_message == "over quota for today"
    assert agent.id in str(caught.value)
    assert (await proxy.run("calm")).text == "fine"
    assert (server.failed, server.served) == (1, 1)


async def test_an_agent_error_ends_a_stream_with_a_typed_error(buses: Buses) -> None:
    agent = ChatAgent(touchy_client(), id=unique("touchy-stream"))
    await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())

    with pytest.raises(RemoteAgentError, match="QuotaExceededError"):
        _ = [u async for u in proxy.run_stream("explode")]

    assert "".join([u.text async for u in proxy.run_stream("calm")]) == "fine"


async def test_no_server_is_a_clear_error_naming_the_agent(buses: Buses) -> None:
    proxy = ProxyAgent("nobody-home", await buses.new())

    with pytest.raises(NoRespondersError, match=r"'nobody-home'.*serve_agent"):
        await proxy.run("hello?")
    with pytest.raises(NoRespondersError, match="'nobody-home'"):
        _ = [u async for u in proxy.run_stream("hello?")]


async def test_a_malformed_request_gets_an_error_reply_naming_the_problem(
    buses: Buses,
) -> None:
    agent = ChatAgent(ScriptedChatClient(["still here"]), id=unique("strict"))
    server = await buses.serve(agent)
    bus = await buses.new()
    subject = Subjects().agent(agent.id, "run")

    not_json = parse_reply((await bus.request(subject, b"{not json")).data)
    wrong_field = parse_reply(
        (await bus.request(subject, {"agent_id": agent.id, "messages": "hi"})).data
    )
    reserved = parse_reply(
        (await bus.request(subject, {"agent_id": agent.id, "kwargs": {"background": True}})).data
    )

    assert isinstance(not_json, ErrorReply)
    assert not_json.error.type == MALFORMED_REQUEST
    assert "Invalid JSON" in not_json.error.message
    assert isinstance(wrong_field, ErrorReply)
    assert "messages" in wrong_field.error.message
    assert isinstance(reserved, ErrorReply)
    assert "['background']" in reserved.error.message
    assert server.rejected == 3
    assert (await ProxyAgent(agent.id, bus).run("ok?")).text == "still here"


async def test_a_stream_whose_caller_is_gone_does_not_break_the_server(buses: Buses) -> None:
    agent = ChatAgent(ScriptedChatClient(["into the void", "still here"]), id=unique("void"))
    server = await buses.serve(agent)
    bus = await buses.new()
    request = AgentRunRequest(
        agent_id=agent.id, messages=[ChatMessage.user("hi")], reply_to="_INBOX.nobody.listens"
    )

    ack = parse_reply((await bus.request(Subjects().agent(agent.id, "stream"), request)).data)
    await until(lambda: server.served == 1)  # the stream ran to its end, nobody reading

    assert isinstance(ack, StreamAccepted)
    assert (await ProxyAgent(agent.id, bus).run("hi")).text == "still here"


async def test_leaving_a_stream_early_cancels_the_remote_run(buses: Buses) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        if messages[-1].text == "slow":
            started.set()
            await release.wait()
        return "a b c d"

    agent = ChatAgent(FunctionChatClient(slow), id=unique("leaver"))
    server = await buses.serve(agent)
    proxy = ProxyAgent(agent.id, await buses.new())

    async def read_one() -> None:
        async for _ in proxy.run_stream("slow"):
            break

    reader = asyncio.create_task(read_one())
    await started.wait()

    reader.cancel()  # the caller gives up while the agent still works
    await asyncio.gather(reader, return_exceptions=True)
    await until(lambda: server.active == 0)

    assert server.served == 0
    assert (await proxy.run("quick")).text == "a b c d"


async def test_closing_the_server_answers_runs_in_flight(buses: Buses) -> None:
    started = asyncio.Event()

    async def never(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        started.set()
        await asyncio.Event().wait()
        return "unreachable"

    agent = ChatAgent(FunctionChatClient(never), id=unique("stuck"))
    server = await buses.serve(agent)
    running = asyncio.create_task(ProxyAgent(agent.id, await buses.new()).run("wait"))
    await started.wait()

    await server.close(grace_s=0.05)

    with pytest.raises(RemoteAgentError) as caught:
        await running
    assert caught.value.remote_type == SERVER_CLOSED


async def test_at_most_max_concurrency_runs_at_once(buses: Buses) -> None:
    running = 0
    most = 0

    async def slow(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0.03)
        running -= 1
        return "done"

    agent = ChatAgent(FunctionChatClient(slow), id=unique("busy"))
    await buses.serve(agent, max_concurrency=2)
    proxy = ProxyAgent(agent.id, await buses.new())

    responses = await asyncio.gather(*(proxy.run(f"job {i}") for i in range(6)))

    assert [r.text for r in responses] == ["done"] * 6
    assert most == 2


# -- names -------------------------------------------------------------------------------------


async def test_an_agent_id_with_dots_stars_and_spaces_is_served_on_escaped_subjects(
    buses: Buses,
) -> None:
    agent_id = "team.alpha * beta > gamma"
    agent = ChatAgent(ScriptedChatClient(["escaped", "streamed"]), id=agent_id)
    server = await buses.serve(agent)
    decoy = ChatAgent(ScriptedChatClient([]), id="team")  # must receive nothing
    await buses.serve(decoy)
    proxy = ProxyAgent(agent_id, await buses.new())

    assert (await proxy.run("hi")).text == "escaped"
    assert "".join([u.text async for u in proxy.run_stream("hi")]) == "streamed"
    for subject in server.subjects:
        token = subject.split(".")[2]
        assert token.startswith("=")
        assert " " not in subject
        assert "*" not in subject
        assert ">" not in subject


# -- workflows ---------------------------------------------------------------------------------


async def test_a_workflow_calls_remote_agents_through_agent_executors(buses: Buses) -> None:
    writer = ChatAgent(ScriptedChatClient(["a draft"]), id=unique("writer"))
    editor_client = ScriptedChatClient(["an edited draft"])
    editor = ChatAgent(editor_client, id=unique("editor"))
    await buses.serve(writer)
    await buses.serve(editor)
    bus = await buses.new()
    first = AgentExecutor(ProxyAgent(writer.id, bus, name="writer"))
    second = AgentExecutor(ProxyAgent(editor.id, bus, name="editor"), output_response=True)
    workflow = WorkflowBuilder().set_start_executor(first).add_edge(first, second).build()

    result = await workflow.run("write about rivers")

    [response] = result.outputs
    assert isinstance(response, AgentResponse)
    assert response.text == "an edited draft"
    assert texts(editor_client.calls[0][0]) == ["write about rivers", "a draft"]


async def test_a_streamed_workflow_surfaces_the_remote_updates(buses: Buses) -> None:
    writer = ChatAgent(ScriptedChatClient(["flowing water"], chunk_size=3), id=unique("w"))
    await buses.serve(writer)
    node = AgentExecutor(ProxyAgent(writer.id, await buses.new()), id="writer")
    workflow = WorkflowBuilder().set_start_executor(node).build()

    events = [e async for e in workflow.run_stream("go")]

    updates = [e.update for e in events if isinstance(e, AgentRunUpdateEvent)]
    assert "".join(u.text for u in updates if isinstance(u, AgentResponseUpdate)) == (
        "flowing water"
    )


# -- another process ---------------------------------------------------------------------------


async def test_a_server_in_another_process_answers(nats_server: str) -> None:
    agent_id = unique("child")
    child = await _serve_in_child(nats_server, agent_id)
    try:
        async with await NatsBus.connect(nats_server) as bus:
            proxy = ProxyAgent(agent_id, bus)
            thread = proxy.get_new_thread()
            first = await proxy.run("hello", thread=thread)
            second = await proxy.run("again", thread=thread)
    finally:
        await _stop(child)

    assert first.text == f"pid {child.pid} heard 'hello' after 0 messages"
    assert second.text == f"pid {child.pid} heard 'again' after 2 messages"
    assert child.pid != os.getpid()


async def test_a_served_agent_killed_and_started_again_continues_its_threads(
    nats_server: str,
) -> None:
    agent_id = unique("restarted")
    first_server = await _serve_in_child(nats_server, agent_id)
    second_server: asyncio.subprocess.Process | None = None
    try:
        async with await NatsBus.connect(nats_server) as bus:
            proxy = ProxyAgent(agent_id, bus)
            thread = proxy.get_new_thread()
            first = await proxy.run("hello", thread=thread)
            os.kill(first_server.pid, signal.SIGKILL)  # mid-conversation, nothing flushed
            await asyncio.wait_for(first_server.wait(), timeout=10)
            second_server = await _serve_in_child(nats_server, agent_id)
            second = await proxy.run("again", thread=thread)
            history = await thread.list_messages()
    finally:
        await _stop(first_server)
        if second_server is not None:
            await _stop(second_server)

    assert second_server is not None
    assert first.text == f"pid {first_server.pid} heard 'hello' after 0 messages"
    assert second.text == f"pid {second_server.pid} heard 'again' after 2 messages"
    assert [m.text for m in history if m.role is Role.USER] == ["hello", "again"]


async def test_over_nats_threads_default_to_the_agentic_threads_kv_bucket(nats_server: str) -> None:
    agent = ChatAgent(ScriptedChatClient(["Noted."]), id=unique("kv-threads"))
    async with await NatsBus.connect(nats_server) as bus:
        with structlog.testing.capture_logs() as logs:
            server = await serve_agent(agent, bus)
        try:
            thread = ProxyAgent(agent.id, bus).get_new_thread()
            await ProxyAgent(agent.id, bus).run("remember tea", thread=thread)
            async with NatsKVStateStore(nats_server, bucket="agentic_threads") as elsewhere:
                keys = await elsewhere.keys(f"agent-threads/{agent.id}/")
        finally:
            await server.close(grace_s=1.0)
    assert isinstance(server.thread_store, NatsKVStateStore)
    assert server.thread_store.bucket == "agentic_threads"
    assert keys == [f"agent-threads/{agent.id}/{thread.id}"]  # another process sees it
    (started,) = [e for e in logs if e["event"] == "agent_server_started"]
    assert "agentic_threads" in started["threads"]
    assert not [e for e in logs if e["event"] == "agent_threads_in_memory"]


async def test_threads_in_memory_are_a_named_choice_that_warns(nats_server: str) -> None:
    agent = ChatAgent(ScriptedChatClient(["Noted."]), id=unique("memory-threads"))
    async with await NatsBus.connect(nats_server) as bus:
        with structlog.testing.capture_logs() as logs:
            server = await serve_agent(agent, bus, thread_store="memory")
        await server.close(grace_s=1.0)
        with pytest.raises(ValueError, match=r"'memory'"):
            await serve_agent(agent, bus, thread_store="redis")  # pyright: ignore[reportArgumentType]
    assert isinstance(server.thread_store, InMemoryStateStore)
    (warning,) = [e for e in logs if e["event"] == "agent_threads_in_memory"]
    assert warning["log_level"] == "warning"
    assert "restart" in warning["consequence"]


async def _serve_in_child(url: str, agent_id: str) -> asyncio.subprocess.Process:
    """``remote_agent_child.py`` serving ``agent_id`` (default thread store), once READY."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        str(TESTS_DIR / "remote_agent_child.py"),
        url,
        agent_id,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        await asyncio.wait_for(_ready(child), timeout=30)
    except BaseException:
        await _stop(child)
        raise
    return child


async def _stop(child: asyncio.subprocess.Process) -> None:
    if child.returncode is None:
        child.kill()
    await asyncio.wait_for(child.wait(), timeout=10)


async def _ready(child: asyncio.subprocess.Process) -> None:
    assert child.stdout is not None
    while line := await child.stdout.readline():
        if line.strip() == b"READY":
            return
    raise AssertionError(f"the child exited ({await child.wait()}) before it was READY")
