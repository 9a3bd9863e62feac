"""``VectorMemoryProvider`` gives a ``ChatAgent`` long-term memory on Qdrant (local mode)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from agentic_core import (
    ChatAgent,
    ChatMessage,
    ChatOptions,
    HashingEmbedder,
    InMemoryVectorStore,
    Memory,
    MemoryCategory,
    MemoryContext,
    MemoryProvider,
)
from agentic_core.testing import FunctionChatClient, ScriptedChatClient
from agentic_storage import QdrantVectorStore, VectorMemoryProvider
from agentic_storage._memory_facts import extract_user_facts, memory_id_for


@pytest_asyncio.fixture
async def qdrant() -> AsyncIterator[QdrantVectorStore]:
    store = QdrantVectorStore(":memory:")
    yield store
    await store.close()


def memory_echo() -> FunctionChatClient:
    """A model that answers with the memories it was given (or "nothing")."""

    def reply(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        notes = [m.text for m in messages if m.text.startswith("Relevant memories:")]
        return notes[0] if notes else "nothing"

    return FunctionChatClient(reply)


async def test_a_fact_told_in_one_thread_is_recalled_in_a_new_one(
    qdrant: QdrantVectorStore,
) -> None:
    memory = VectorMemoryProvider(qdrant, HashingEmbedder(), top_k=3)
    client = memory_echo()
    agent = ChatAgent(client, "You are helpful.", name="helper", memory_provider=memory)

    await agent.run(
        "Hi! My name is Ada and I live in Paris. What's the weather like?",
        thread=agent.get_new_thread(user_id="ada"),
    )
    reply = await agent.run("Where do I live again?", thread=agent.get_new_thread(user_id="ada"))

    assert "I live in Paris" in reply.text
    assert "My name is Ada" in reply.text
    assert isinstance(memory, MemoryProvider)


async def test_memories_stay_within_their_user_and_agent(qdrant: QdrantVectorStore) -> None:
    memory = VectorMemoryProvider(qdrant, HashingEmbedder())
    ada_agent = ChatAgent(memory_echo(), name="a", memory_provider=memory)
    other_agent = ChatAgent(memory_echo(), name="b", memory_provider=memory)
    await ada_agent.run("I prefer tea to coffee.", thread=ada_agent.get_new_thread(user_id="ada"))

    other_user = await ada_agent.run("tea?", thread=ada_agent.get_new_thread(user_id="bob"))
    no_user = await ada_agent.run("tea?", thread=ada_agent.get_new_thread())
    other = await other_agent.run("tea?", thread=other_agent.get_new_thread(user_id="ada"))
    same = await ada_agent.run("tea?", thread=ada_agent.get_new_thread(user_id="ada"))

    assert (other_user.text, no_user.text, other.text) == ("nothing", "nothing", "nothing")
    assert "I prefer tea to coffee" in same.text


async def test_a_fact_said_twice_is_kept_once(qdrant: QdrantVectorStore) -> None:
    memory = VectorMemoryProvider(qdrant, HashingEmbedder())
    agent = ChatAgent(memory_echo(), name="a", memory_provider=memory)

    for _ in range(2):
        await agent.run("I work at the library.", thread=agent.get_new_thread(user_id="u"))

    [kept] = await memory.get_memories(agent.id, "u")
    assert kept.content == "I work at the library."
    assert kept.id == memory_id_for("i work at the library")


async def test_store_get_and_clear_memories(qdrant: QdrantVectorStore) -> None:
    memory = VectorMemoryProvider(qdrant, HashingEmbedder(dimension=32))
    first = Memory(content="Likes jazz", category=MemoryCategory.USER_PREFERENCE)
    second = Memory(content="Has a cat named Miso")
    await memory.store_memory("agent", "u", first)
    await memory.store_memory("agent", "u", second)
    await memory.store_memory("agent", "someone-else", Memory(content="Other"))

    listed = await memory.get_memories("agent", "u")
    await memory.clear_memories("agent", "u")

    assert [m.content for m in listed] == ["Likes jazz", "Has a cat named Miso"]
    assert listed[0] == first
    assert await memory.get_memories("agent", "u") == []
    assert [m.content for m in await memory.get_memories("agent", "someone-else")] == ["Other"]


async def test_min_score_drops_unrelated_memories() -> None:
    memory = VectorMemoryProvider(InMemoryVectorStore(), HashingEmbedder(), min_score=0.3)
    await memory.store_memory("a", "u", Memory(content="I live in Paris"))
    await memory.store_memory("a", "u", Memory(content="Quantum chromodynamics lecture notes"))
    agent = ChatAgent(memory_echo(), name="a", memory_provider=memory)
    thread = agent.get_new_thread(user_id="u")
    await thread.add_messages([ChatMessage.user("Where do I live? Paris?")])
    ctx = MemoryContext()

    await memory.before_invoke("a", thread, ctx)

    assert [m.content for m in ctx.retrieved_memories] == ["I live in Paris"]


async def test_an_llm_extractor_stores_what_the_model_picks(qdrant: QdrantVectorStore) -> None:
    extractor_model = ScriptedChatClient(['{"facts": ["The user is allergic to peanuts."]}'])
    memory = VectorMemoryProvider(qdrant, HashingEmbedder(), chat_client=extractor_model)
    agent = ChatAgent(memory_echo(), name="a", memory_provider=memory)

    await agent.run("Careful, peanuts make me ill.", thread=agent.get_new_thread(user_id="u"))

    [kept] = await memory.get_memories(agent.id, "u")
    assert kept.content == "The user is allergic to peanuts."
    [(messages, options)] = extractor_model.calls
    assert "peanuts make me ill" in messages[-1].text
    assert options is not None
    assert options.response_format is not None


async def test_a_malformed_extractor_reply_stores_nothing_and_the_turn_succeeds(
    qdrant: QdrantVectorStore,
) -> None:
    extractor_model = ScriptedChatClient(["Sure! Here are the facts: peanuts"])
    memory = VectorMemoryProvider(qdrant, HashingEmbedder(), chat_client=extractor_model)
    agent = ChatAgent(memory_echo(), name="a", memory_provider=memory)

    reply = await agent.run("Peanuts make me ill.", thread=agent.get_new_thread(user_id="u"))

    assert reply.text == "nothing"
    assert await memory.get_memories(agent.id, "u") == []


async def test_a_raising_extractor_never_fails_the_turn(qdrant: QdrantVectorStore) -> None:
    def broken(messages: object) -> list[Memory]:
        raise RuntimeError("extractor down")

    memory = VectorMemoryProvider(qdrant, HashingEmbedder(), extractor=broken)
    agent = ChatAgent(memory_echo(), name="a", memory_provider=memory)

    reply = await agent.run("I live in Oslo.", thread=agent.get_new_thread(user_id="u"))

    assert reply.text == "nothing"


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("My name is Ada.", ["My name is Ada."]),
        ("I'm a nurse. What time is it?", ["I'm a nurse."]),
        ("I really like hiking, and I hate rain!", ["I really like hiking, and I hate rain!"]),
        ("Remember that my flight is Friday", ["Remember that my flight is Friday"]),
        ("Call me Max", ["Call me Max"]),
        ("What is my name?", []),
        ("I'm not sure about that.", []),
        ("The sky is blue.", []),
    ],
)  # fmt: skip
def test_the_default_extractor_keeps_the_users_statements_about_themselves(
    said: str, expected: list[str]
) -> None:
    memories = extract_user_facts([ChatMessage.user(said), ChatMessage.assistant("I am a bot.")])

    assert [m.content for m in memories] == expected
