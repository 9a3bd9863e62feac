"""Memory providers: ranking, scoping, injection before a call, extraction after it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agentic_core._errors import AgentError
from agentic_core.agents._memory import (
    InMemoryMemoryProvider,
    NoOpMemoryProvider,
    StateStoreMemoryProvider,
    memory_score,
    rank_memories,
)
from agentic_core.protocols._agent import AgentResponse
from agentic_core.protocols._memory import Memory, MemoryCategory, MemoryContext, MemoryProvider
from agentic_core.protocols._messages import ChatMessage, Role
from agentic_core.protocols._thread import AgentThread
from agentic_core.stores import InMemoryStateStore

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
WEEK_S = 7 * 24 * 3600.0

RankingProvider = InMemoryMemoryProvider | StateStoreMemoryProvider
ProviderFactory = Callable[..., RankingProvider]


def memory(content: str, *, importance: float = 0.5, age: timedelta = timedelta(0)) -> Memory:
    return Memory(content=content, importance=importance, created_at=NOW - age)


@pytest.fixture(params=["in-memory", "state-store"])
def make_provider(request: pytest.FixtureRequest) -> ProviderFactory:
    """Each provider test runs against both ranking providers, with the clock fixed at NOW."""

    def factory(**kwargs: Any) -> RankingProvider:
        if request.param == "in-memory":
            return InMemoryMemoryProvider(clock=lambda: NOW, **kwargs)
        return StateStoreMemoryProvider(InMemoryStateStore(), clock=lambda: NOW, **kwargs)

    return factory


# --- scoring (pure) ------------------------------------------------------------------------


def test_score_is_half_importance_half_recency_by_default() -> None:
    fresh = memory("fresh", importance=0.2)
    one_half_life_old = memory("old", importance=1.0, age=timedelta(seconds=WEEK_S))

    assert memory_score(fresh, NOW) == pytest.approx(0.5 * 0.2 + 0.5 * 1.0)
    assert memory_score(one_half_life_old, NOW) == pytest.approx(0.5 * 1.0 + 0.5 * 0.5)


def test_importance_weight_shifts_the_score_between_importance_and_recency() -> None:
    old = memory("old", importance=0.8, age=timedelta(days=70))

    assert memory_score(old, NOW, importance_weight=1.0) == pytest.approx(0.8)
    assert memory_score(old, NOW, importance_weight=0.0) == pytest.approx(0.5**10)


def test_a_memory_dated_in_the_future_counts_as_new() -> None:
    future = memory("future", importance=0.0, age=-DAY)

    assert memory_score(future, NOW) == pytest.approx(0.5)


def test_naive_created_at_is_taken_as_utc() -> None:
    naive = Memory(content="naive", importance=0.0, created_at=NOW.replace(tzinfo=None))

    assert memory_score(naive, NOW) == pytest.approx(0.5)


def test_ranking_ties_go_to_the_newer_memory() -> None:
    older = memory("older", importance=1.0, age=DAY)
    newer = memory("newer", importance=1.0)

    ranked = rank_memories([older, newer], NOW, importance_weight=1.0)

    assert [m.content for m in ranked] == ["newer", "older"]


# --- ranking through the providers ---------------------------------------------------------


async def test_more_important_memories_rank_first_at_equal_age(
    make_provider: ProviderFactory,
) -> None:
    provider = make_provider()
    for content, importance in [("low", 0.1), ("high", 0.9), ("mid", 0.5)]:
        await provider.store_memory("bot", "ada", memory(content, importance=importance))

    relevant = await provider.relevant_memories("bot", "ada")

    assert [m.content for m in relevant] == ["high", "mid", "low"]


async def test_newer_memories_rank_first_at_equal_importance(
    make_provider: ProviderFactory,
) -> None:
    provider = make_provider()
    for content, age in [("last month", 30 * DAY), ("today", timedelta(0)), ("last week", 7 * DAY)]:
        await provider.store_memory("bot", "ada", memory(content, age=age))

    relevant = await provider.relevant_memories("bot", "ada")

    assert [m.content for m in relevant] == ["today", "last week", "last month"]


async def test_recency_can_outweigh_importance(make_provider: ProviderFactory) -> None:
    provider = make_provider(recency_half_life_s=24 * 3600.0)
    await provider.store_memory("bot", "ada", memory("stale", importance=0.6, age=10 * DAY))
    await provider.store_memory("bot", "ada", memory("fresh", importance=0.4))

    relevant = await provider.relevant_memories("bot", "ada")

    assert [m.content for m in relevant] == ["fresh", "stale"]


async def test_only_the_best_max_memories_are_retrieved(make_provider: ProviderFactory) -> None:
    provider = make_provider(max_memories=2)
    for index in range(5):
        await provider.store_memory("bot", "ada", memory(f"m{index}", importance=index / 10))

    relevant = await provider.relevant_memories("bot", "ada")

    assert [m.content for m in relevant] == ["m4", "m3"]


async def test_memories_below_min_importance_are_not_retrieved(
    make_provider: ProviderFactory,
) -> None:
    provider = make_provider(min_importance=0.5)
    await provider.store_memory("bot", "ada", memory("trivia", importance=0.49))
    await provider.store_memory("bot", "ada", memory("key fact", importance=0.5))

    relevant = await provider.relevant_memories("bot", "ada")

    assert [m.content for m in relevant] == ["key fact"]
    assert len(await provider.get_memories("bot", "ada")) == 2


# --- storing, scoping, clearing ------------------------------------------------------------


async def test_get_memories_returns_the_scope_oldest_first(make_provider: ProviderFactory) -> None:
    provider = make_provider()
    first = memory("first", age=2 * DAY)
    second = Memory(
        content="second",
        category=MemoryCategory.USER_PREFERENCE,
        importance=0.9,
        created_at=NOW - DAY,
        metadata={"source": "chat", "tags": ["tea"]},
    )
    await provider.store_memory("bot", "ada", second)
    await provider.store_memory("bot", "ada", first)

    assert await provider.get_memories("bot", "ada") == [first, second]


async def test_memories_are_scoped_per_agent_and_user(make_provider: ProviderFactory) -> None:
    provider = make_provider()
    scopes: list[tuple[str, str | None]] = [
        ("bot", "ada"),
        ("bot", "bob"),
        ("other-bot", "ada"),
        ("bot", None),
        ("bot", "_"),
        ("bot/ada", None),
    ]
    for agent_id, user_id in scopes:
        await provider.store_memory(agent_id, user_id, memory(f"{agent_id}:{user_id}"))

    for agent_id, user_id in scopes:
        found = await provider.get_memories(agent_id, user_id)
        assert [m.content for m in found] == [f"{agent_id}:{user_id}"]


async def test_storing_a_memory_id_again_replaces_it(make_provider: ProviderFactory) -> None:
    provider = make_provider()
    original = memory("likes tea")
    await provider.store_memory("bot", "ada", original)

    await provider.store_memory(
        "bot", "ada", original.model_copy(update={"content": "likes coffee"})
    )

    assert [m.content for m in await provider.get_memories("bot", "ada")] == ["likes coffee"]


async def test_clear_forgets_only_that_scope(make_provider: ProviderFactory) -> None:
    provider = make_provider()
    await provider.store_memory("bot", "ada", memory("ada's"))
    await provider.store_memory("bot", None, memory("nobody's"))
    await provider.store_memory("bot", "adam", memory("adam's"))

    await provider.clear_memories("bot", "ada")

    assert await provider.get_memories("bot", "ada") == []
    assert [m.content for m in await provider.get_memories("bot", None)] == ["nobody's"]
    assert [m.content for m in await provider.get_memories("bot", "adam")] == ["adam's"]


async def test_changing_a_memory_after_storing_it_changes_nothing_stored(
    make_provider: ProviderFactory,
) -> None:
    provider = make_provider()
    stored = memory("original")
    await provider.store_memory("bot", "ada", stored)

    stored.content = "changed"
    (fetched,) = await provider.get_memories("bot", "ada")
    fetched.content = "changed too"

    assert [m.content for m in await provider.get_memories("bot", "ada")] == ["original"]


async def test_concurrent_stores_all_land(make_provider: ProviderFactory) -> None:
    provider = make_provider()

    await asyncio.gather(*(provider.store_memory("bot", "ada", memory(f"m{i}")) for i in range(50)))

    assert len(await provider.get_memories("bot", "ada")) == 50


# --- before_invoke / after_invoke ----------------------------------------------------------


async def test_before_invoke_injects_the_thread_users_memories(
    make_provider: ProviderFactory,
) -> None:
    provider = make_provider()
    await provider.store_memory("bot", "ada", memory("Prefers metric units", importance=0.9))
    await provider.store_memory("bot", "ada", memory("Lives in Lyon", importance=0.3))
    await provider.store_memory("bot", "bob", memory("Bob's secret"))
    ctx = MemoryContext()

    await provider.before_invoke("bot", AgentThread(metadata={"user_id": "ada"}), ctx)

    assert [m.content for m in ctx.retrieved_memories] == ["Prefers metric units", "Lives in Lyon"]
    (message,) = ctx.system_messages
    assert message.role is Role.SYSTEM
    assert message.text == "Relevant memories:\n- Prefers metric units\n- Lives in Lyon"


async def test_before_invoke_keeps_what_the_context_already_holds(
    make_provider: ProviderFactory,
) -> None:
    provider = make_provider()
    await provider.store_memory("bot", None, memory("shared fact"))
    earlier = ChatMessage.system("from another provider")
    ctx = MemoryContext(extra_instructions="be brief", system_messages=[earlier])

    await provider.before_invoke("bot", AgentThread(), ctx)

    assert ctx.extra_instructions == "be brief"
    assert ctx.system_messages[0] is earlier
    assert ctx.system_messages[1].text == "Relevant memories:\n- shared fact"


async def test_a_multi_line_memory_stays_one_list_item(make_provider: ProviderFactory) -> None:
    provider = make_provider()
    await provider.store_memory("bot", None, memory("line one\nline two"))
    ctx = MemoryContext()

    await provider.before_invoke("bot", AgentThread(), ctx)

    assert ctx.system_messages[0].text == "Relevant memories:\n- line one\n  line two"


async def test_before_invoke_adds_nothing_without_memories(make_provider: ProviderFactory) -> None:
    provider = make_provider()
    ctx = MemoryContext()

    await provider.before_invoke("bot", AgentThread(metadata={"user_id": "ada"}), ctx)

    assert ctx == MemoryContext()


async def test_after_invoke_stores_nothing_without_an_extractor(
    make_provider: ProviderFactory,
) -> None:
    provider = make_provider()
    response = AgentResponse(messages=[ChatMessage.assistant("noted")], text="noted")

    await provider.after_invoke("bot", AgentThread(metadata={"user_id": "ada"}), response)

    assert await provider.get_memories("bot", "ada") == []


async def test_after_invoke_stores_what_the_extractor_finds_in_the_users_scope(
    make_provider: ProviderFactory,
) -> None:
    seen: list[AgentResponse] = []

    def extract(response: AgentResponse) -> Sequence[Memory]:
        seen.append(response)
        return [memory(f"said: {response.text}", importance=0.7)]

    provider = make_provider(extractor=extract)
    response = AgentResponse(messages=[ChatMessage.assistant("hello")], text="hello")

    await provider.after_invoke("bot", AgentThread(metadata={"user_id": "ada"}), response)

    assert seen == [response]
    assert [m.content for m in await provider.get_memories("bot", "ada")] == ["said: hello"]
    assert await provider.get_memories("bot", None) == []


@pytest.mark.parametrize(
    ("setting", "value"),
    [
        ("max_memories", 0),
        ("min_importance", 1.5),
        ("recency_half_life_s", 0.0),
        ("importance_weight", -0.1),
    ],
)
def test_bad_settings_are_refused(
    make_provider: ProviderFactory, setting: str, value: float
) -> None:
    with pytest.raises(ValueError, match=setting):
        make_provider(**{setting: value})


def test_both_providers_satisfy_the_protocol(make_provider: ProviderFactory) -> None:
    assert isinstance(make_provider(), MemoryProvider)


# --- StateStoreMemoryProvider specifics ----------------------------------------------------


async def test_state_store_keeps_each_memory_as_json_under_its_own_key() -> None:
    state = InMemoryStateStore()
    provider = StateStoreMemoryProvider(state, prefix="mem")
    stored = Memory(id="m1", content="likes tea", created_at=NOW)

    await provider.store_memory("bot", "ada", stored)
    await provider.store_memory("bot", None, Memory(id="m2", content="shared"))

    assert await state.keys() == ["mem/bot/_/m2", "mem/bot/ada/m1"]
    assert await state.get("mem/bot/ada/m1") == stored.model_dump(mode="json")


async def test_state_store_key_parts_are_percent_encoded() -> None:
    state = InMemoryStateStore()
    provider = StateStoreMemoryProvider(state)

    await provider.store_memory("team/bot", "_", Memory(id="a/b", content="x"))

    assert await state.keys() == ["memories/team%2Fbot/%5F/a%2Fb"]


async def test_state_store_memories_expire_with_the_ttl() -> None:
    clock = [0.0]
    state = InMemoryStateStore(clock=lambda: clock[0])
    provider = StateStoreMemoryProvider(state, ttl_s=60)
    await provider.store_memory("bot", "ada", memory("short-lived"))

    clock[0] = 61.0

    assert await provider.get_memories("bot", "ada") == []


async def test_state_store_corrupt_memory_names_the_key() -> None:
    state = InMemoryStateStore()
    provider = StateStoreMemoryProvider(state)
    await state.set("memories/bot/ada/bad", {"content": 42})

    with pytest.raises(AgentError, match="memories/bot/ada/bad"):
        await provider.get_memories("bot", "ada")


async def test_state_store_providers_share_memories_through_the_store() -> None:
    state = InMemoryStateStore()
    writer = StateStoreMemoryProvider(state)
    reader = StateStoreMemoryProvider(state)

    await writer.store_memory("bot", "ada", memory("shared across processes"))

    assert [m.content for m in await reader.get_memories("bot", "ada")] == [
        "shared across processes"
    ]


def test_state_store_refuses_a_non_positive_ttl() -> None:
    with pytest.raises(ValueError, match="ttl_s"):
        StateStoreMemoryProvider(InMemoryStateStore(), ttl_s=0)


# --- NoOpMemoryProvider --------------------------------------------------------------------


async def test_noop_provider_remembers_and_injects_nothing() -> None:
    provider = NoOpMemoryProvider()
    thread = AgentThread(metadata={"user_id": "ada"})
    ctx = MemoryContext()

    await provider.store_memory("bot", "ada", memory("forgotten"))
    await provider.before_invoke("bot", thread, ctx)
    await provider.after_invoke("bot", thread, AgentResponse(text="hi"))
    await provider.clear_memories("bot", "ada")

    assert isinstance(provider, MemoryProvider)
    assert await provider.get_memories("bot", "ada") == []
    assert ctx == MemoryContext()
