"""The message bus conformance suite: what every ``MessageBus`` must do.

Subclass ``MessageBusConformance`` as ``Test...`` and provide the bus as a fixture named
``message_bus`` (a fresh, connected bus for every test; the suite closes it in one test only):

```python
class TestNatsBus(MessageBusConformance):
    @pytest_asyncio.fixture
    async def message_bus(self, nats_url: str) -> AsyncIterator[MessageBus]:
        bus = await NatsBus.connect(nats_url)
        yield bus
        await bus.close()
```

The rules it checks are those of ``agentic_core.protocols._bus``'s module docstring. Messages
cross a network for real back-ends, so every receive here waits (``receive_timeout_s``).
"""

# ruff: noqa: S101  (a test suite: plain asserts are how pytest reports failures)

from __future__ import annotations

import asyncio
from collections import Counter
from typing import ClassVar

import pytest
from pydantic import BaseModel

from agentic_core._errors import (
    BusClosedError,
    BusTimeoutError,
    InvalidSubjectError,
    NoRespondersError,
    SerializationError,
)
from agentic_core.protocols._bus import BusMessage, MessageBus, Subscription

__all__ = ["MessageBusConformance"]


class _Order(BaseModel):
    id: int
    item: str


class MessageBusConformance:
    """Publish/subscribe, wildcards, queue groups, request/reply, headers, ordering, close."""

    # Marked here, not left to the project's asyncio_mode: the suite runs in strict mode too.
    pytestmark: ClassVar[list[pytest.MarkDecorator]] = [pytest.mark.asyncio]
    receive_timeout_s: ClassVar[float] = 5.0
    """How long a message may take to arrive."""
    quiet_s: ClassVar[float] = 0.2
    """How long to wait to be sure a message does not arrive."""

    async def _receive(self, subscription: Subscription) -> BusMessage:
        return await asyncio.wait_for(anext(subscription), self.receive_timeout_s)

    async def _nothing_arrives(self, subscription: Subscription) -> None:
        with pytest.raises((TimeoutError, asyncio.TimeoutError)):
            await asyncio.wait_for(anext(subscription), self.quiet_s)

    async def test_bytes_and_headers_arrive_unchanged(self, message_bus: MessageBus) -> None:
        subscription = await message_bus.subscribe("conf.raw")
        payload = bytes(range(256)) * 4
        await message_bus.publish("conf.raw", payload, headers={"Agentic-Run": "r1", "X-N": "7"})
        message = await self._receive(subscription)
        assert message.subject == "conf.raw"
        assert message.data == payload
        assert message.headers.get("Agentic-Run") == "r1"
        assert message.headers.get("X-N") == "7"

    async def test_text_dicts_and_models_travel_as_utf8_and_json(
        self, message_bus: MessageBus
    ) -> None:
        subscription = await message_bus.subscribe("conf.json")
        await message_bus.publish("conf.json", "héllo")
        await message_bus.publish("conf.json", {"a": [1, 2], "b": "é"})
        await message_bus.publish("conf.json", _Order(id=3, item="tea"))
        assert (await self._receive(subscription)).text == "héllo"
        assert (await self._receive(subscription)).json_value() == {"a": [1, 2], "b": "é"}
        model = await self._receive(subscription)
        assert _Order.model_validate_json(model.data) == _Order(id=3, item="tea")

    async def test_a_dict_that_is_not_json_is_refused(self, message_bus: MessageBus) -> None:
        with pytest.raises(SerializationError):
            await message_bus.publish("conf.bad", {"when": object()})

    @pytest.mark.parametrize(
        ("pattern", "matching", "not_matching"),
        [
            ("conf.w.*", ["conf.w.a", "conf.w.b"], ["conf.w", "conf.w.a.b", "conf.x.a"]),
            ("conf.w.>", ["conf.w.a", "conf.w.a.b.c"], ["conf.w", "conf.x.a"]),
            ("conf.*.end", ["conf.a.end", "conf.b.end"], ["conf.a.b.end", "conf.a.other"]),
        ],
    )
    async def test_wildcards(
        self,
        message_bus: MessageBus,
        pattern: str,
        matching: list[str],
        not_matching: list[str],
    ) -> None:
        subscription = await message_bus.subscribe(pattern)
        for subject in not_matching + matching:
            await message_bus.publish(subject, subject)
        received = [(await self._receive(subscription)).subject for _ in matching]
        assert received == matching
        await self._nothing_arrives(subscription)

    async def test_each_plain_subscription_gets_every_message(
        self, message_bus: MessageBus
    ) -> None:
        first = await message_bus.subscribe("conf.fan")
        second = await message_bus.subscribe("conf.fan")
        await message_bus.publish("conf.fan", b"x")
        assert (await self._receive(first)).data == b"x"
        assert (await self._receive(second)).data == b"x"

    async def test_a_queue_group_gets_each_message_once(self, message_bus: MessageBus) -> None:
        members = [await message_bus.subscribe("conf.work", queue="workers") for _ in range(3)]
        watcher = await message_bus.subscribe("conf.work")
        count = 60
        for index in range(count):
            await message_bus.publish("conf.work", str(index))
        seen = [(await self._receive(watcher)).text for _ in range(count)]
        assert seen == [str(index) for index in range(count)]
        got: Counter[str] = Counter()

        async def drain(member: Subscription) -> None:
            while True:
                try:
                    message = await asyncio.wait_for(anext(member), self.quiet_s * 2)
                except TimeoutError:
                    return
                got[message.text] += 1

        await asyncio.gather(*(drain(member) for member in members))
        assert got == Counter(str(index) for index in range(count))

    async def test_one_publishers_messages_arrive_in_order(self, message_bus: MessageBus) -> None:
        subscription = await message_bus.subscribe("conf.order")
        for index in range(500):
            await message_bus.publish("conf.order", str(index))
        received = [int((await self._receive(subscription)).text) for _ in range(500)]
        assert received == list(range(500))

    async def test_request_reply(self, message_bus: MessageBus) -> None:
        service = await message_bus.subscribe("conf.svc.upper")

        async def serve() -> None:
            async for message in service:
                assert message.reply is not None
                await message_bus.publish(
                    message.reply, message.text.upper(), headers={"Served-By": "conf"}
                )

        server = asyncio.create_task(serve())
        try:
            answers = await asyncio.gather(
                *(message_bus.request("conf.svc.upper", f"ping {i}", timeout_s=5) for i in range(5))
            )
            assert [answer.text for answer in answers] == [f"PING {i}" for i in range(5)]
            assert answers[0].headers.get("Served-By") == "conf"
        finally:
            await service.unsubscribe()
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)

    async def test_a_request_nobody_hears_fails_fast(self, message_bus: MessageBus) -> None:
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(NoRespondersError):
            await message_bus.request("conf.nobody.home", b"?", timeout_s=3)
        assert loop.time() - started < 2.5

    async def test_a_request_without_a_reply_times_out(self, message_bus: MessageBus) -> None:
        mute = await message_bus.subscribe("conf.mute")
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(BusTimeoutError) as raised:
            await message_bus.request("conf.mute", b"?", timeout_s=0.3)
        assert isinstance(raised.value, TimeoutError)
        assert 0.25 <= loop.time() - started < 3
        assert (await self._receive(mute)).reply is not None

    async def test_unsubscribe_ends_the_iteration(self, message_bus: MessageBus) -> None:
        subscription = await message_bus.subscribe("conf.stop")
        other = await message_bus.subscribe("conf.stop")
        await subscription.unsubscribe()
        await message_bus.publish("conf.stop", b"after")
        assert (await self._receive(other)).data == b"after"
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(anext(subscription), self.receive_timeout_s)
        await subscription.unsubscribe()  # idempotent

    @pytest.mark.parametrize(
        "subject", ["", "a..b", ".a", "a.", "a b", "a.*", "a.>", "a.b*", "a.>.b"]
    )
    async def test_malformed_publish_subjects_are_refused(
        self, message_bus: MessageBus, subject: str
    ) -> None:
        with pytest.raises(InvalidSubjectError):
            await message_bus.publish(subject, b"x")

    @pytest.mark.parametrize("subject", ["", "a..b", "a.>.b", "a.b*", "a b"])
    async def test_malformed_subscriptions_are_refused(
        self, message_bus: MessageBus, subject: str
    ) -> None:
        with pytest.raises(InvalidSubjectError):
            await message_bus.subscribe(subject)

    async def test_a_large_message(self, message_bus: MessageBus) -> None:
        subscription = await message_bus.subscribe("conf.large")
        payload = b"z" * 512_000
        await message_bus.publish("conf.large", payload)
        assert (await self._receive(subscription)).data == payload

    async def test_close_ends_subscriptions_and_refuses_calls(
        self, message_bus: MessageBus
    ) -> None:
        subscription = await message_bus.subscribe("conf.bye")
        assert message_bus.is_connected
        await message_bus.close()
        assert not message_bus.is_connected
        with pytest.raises(StopAsyncIteration):
            await asyncio.wait_for(anext(subscription), self.receive_timeout_s)
        with pytest.raises(BusClosedError):
            await message_bus.publish("conf.bye", b"x")
        with pytest.raises(BusClosedError):
            await message_bus.subscribe("conf.bye")
        with pytest.raises(BusClosedError):
            await message_bus.request("conf.bye", b"x", timeout_s=0.5)
        await message_bus.close()  # idempotent
