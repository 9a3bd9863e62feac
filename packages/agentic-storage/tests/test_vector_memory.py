"""``VectorMemoryProvider`` gives a ``ChatAgent`` long-term memory on Qdrant (local mode)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import pytest
import pytest_asyncio
from structlog.testing import capture_logs

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
    Role,
    VectorPoint,
    VectorStoreError,
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

    [system_note] = [
        m.text
        for m in client.calls[1][0]
        if m.role == Role.SYSTEM and m.text.startswith("Relevant memories:")
    ]
    assert "My name is Ada and I live in Paris." in system_note
    assert "What's the weather like" not in system_note  # a question is not a fact
    assert reply.text == system_note
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

    with capture_logs() as logs:
        reply = await agent.run("Peanuts make me ill.", thread=agent.get_new_thread(user_id="u"))

    assert reply.text == "nothing"
    assert await memory.get_memories(agent.id, "u") == []
    [warning] = [log for log in logs if log["log_level"] == "warning"]
    assert warning["event"] == "memory_extraction_unparsable"
    assert "peanuts" in warning["reply_preview"]


async def test_an_extractor_overrides_the_chat_client(qdrant: QdrantVectorStore) -> None:
    extractor_model = ScriptedChatClient([])  # would raise if it were asked

    def pick(messages: Sequence[ChatMessage]) -> list[Memory]:
        return [Memory(id="m1", content=f"said: {messages[-1].text}")]

    memory = VectorMemoryProvider(
        qdrant, HashingEmbedder(), extractor=pick, chat_client=extractor_model
    )
    agent = ChatAgent(memory_echo(), name="a", memory_provider=memory)

    await agent.run("hello there", thread=agent.get_new_thread(user_id="u"))

    assert [m.content for m in await memory.get_memories(agent.id, "u")] == ["said: hello there"]
    assert extractor_model.calls == []


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


class CountingStore(InMemoryVectorStore):
    """An ``InMemoryVectorStore`` that counts ``create_collection`` calls."""

    def __init__(self) -> None:
        super().__init__()
        self.created = 0

    async def create_collection(
        self, name: str, dimension: int, *, distance: str = "cosine"
    ) -> None:
        self.created += 1
        await super().create_collection(name, dimension, distance=distance)


async def test_the_collection_is_created_once_on_first_use() -> None:
    store = CountingStore()
    memory = VectorMemoryProvider(store, HashingEmbedder(dimension=16), collection="mem")
    assert store.created == 0

    await memory.store_memory("a", "u", Memory(content="one"))
    await memory.store_memory("a", "u", Memory(content="two"))
    await memory.get_memories("a", "u")

    assert store.created == 1
    [hit] = await store.search("mem", [1.0] * 16, filter={"agent_id": "a"}, limit=1)
    assert hit.payload["user_id"] == "u"
    assert len(await store.search("mem", [1.0] * 16, limit=10)) == 2


async def test_a_collection_of_another_dimension_is_refused_on_first_use() -> None:
    store = InMemoryVectorStore()
    await store.create_collection("agentic_memories", 3)
    await store.upsert("agentic_memories", [VectorPoint(id="x", vector=[1, 0, 0])])
    memory = VectorMemoryProvider(store, HashingEmbedder(dimension=16))

    with pytest.raises(VectorStoreError, match="'agentic_memories'"):
        await memory.store_memory("a", "u", Memory(content="one"))


async def test_listing_is_bounded_by_max_listed_and_clearing_is_complete(
    qdrant: QdrantVectorStore,
) -> None:
    memory = VectorMemoryProvider(qdrant, HashingEmbedder(dimension=16), max_listed=2)
    for i in range(5):
        await memory.store_memory("a", "u", Memory(content=f"fact {i}"))
    await memory.store_memory("a", "other", Memory(content="kept"))

    listed = await memory.get_memories("a", "u")
    await memory.clear_memories("a", "u")

    assert len(listed) == 2
    wide = VectorMemoryProvider(qdrant, HashingEmbedder(dimension=16), max_listed=100)
    assert await wide.get_memories("a", "u") == []
    assert [m.content for m in await wide.get_memories("a", "other")] == ["kept"]
