"""InMemoryBus against the MessageBus conformance suite, plus what is particular to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from agentic_core import InMemoryBus, MessageBus, Subscription
from agentic_core.stores import check_headers, subject_matches
from agentic_core.testing.conformance import MessageBusConformance


class TestInMemoryBus(MessageBusConformance):
    @pytest.fixture
    async def message_bus(self) -> AsyncIterator[MessageBus]:
        bus = InMemoryBus()
        yield bus
        await bus.close()


def test_the_in_memory_bus_is_a_message_bus() -> None:
    bus = InMemoryBus()
    assert isinstance(bus, MessageBus)
    assert repr(bus) == "InMemoryBus(0 subscriptions)"


@pytest.mark.parametrize(
    ("pattern", "subject", "expected"),
    [
        ("a.b", "a.b", True),
        ("a.*", "a.b", True),
        ("a.*", "a", False),
        ("a.>", "a", False),
        ("a.>", "a.b.c", True),
        (">", "a", True),
        ("*.*", "a.b", True),
        ("*.*", "a.b.c", False),
    ],
)
def test_subject_matching(pattern: str, subject: str, expected: bool) -> None:
    assert subject_matches(pattern, subject) is expected


def test_bad_headers_are_refused() -> None:
    assert check_headers({"A": "1"}) == {"A": "1"}
    with pytest.raises(ValueError, match="header name"):
        check_headers({"bad name": "x"})
    with pytest.raises(ValueError, match="one-line"):
        check_headers({"A": "x\r\ny"})


async def test_a_slow_consumer_loses_messages_past_max_pending() -> None:
    bus = InMemoryBus(max_pending=3)
    subscription = await bus.subscribe("s")
    for index in range(5):
        await bus.publish("s", str(index))
    assert [(await anext(subscription)).text for _ in range(3)] == ["0", "1", "2"]
    assert isinstance(subscription, Subscription)
    assert getattr(subscription, "dropped") == 2  # noqa: B009 - InMemoryBus's own counter
    await bus.close()


async def test_an_iteration_waiting_when_the_bus_closes_ends() -> None:
    bus = InMemoryBus()
    subscription = await bus.subscribe("s")
    waiting = asyncio.create_task(anext(subscription))
    await asyncio.sleep(0)
    await bus.close()
    with pytest.raises(StopAsyncIteration):
        await waiting
