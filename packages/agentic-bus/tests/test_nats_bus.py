"""NatsBus against core's MessageBus conformance suite and a real nats-server, plus its own
failure cases: unreachable server, credentials kept out of errors, oversize payloads,
a server restart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import structlog

from agentic_bus import (
    NatsBus,
    NatsCheckpointStore,
    NatsConnectionError,
    NatsKVStateStore,
    NatsRuntime,
    PayloadTooLargeError,
)
from agentic_core import BusClosedError, MessageBus
from agentic_core.testing.conformance import MessageBusConformance


class TestNatsBus(MessageBusConformance):
    @pytest.fixture
    async def message_bus(self, nats_server: str) -> AsyncIterator[MessageBus]:
        bus = await NatsBus.connect(nats_server)
        yield bus
        await bus.close()


async def test_the_nats_bus_is_a_message_bus(nats_server: str) -> None:
    bus = NatsBus(nats_server)
    assert isinstance(bus, MessageBus)
    assert not bus.is_connected  # connects on first use
    async with bus:
        assert bus.is_connected
        assert "connected" in repr(bus)
    assert "closed" in repr(bus)


async def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    url = "nats://alice:s3cret-pw@127.0.0.1:1"
    with pytest.raises(NatsConnectionError) as caught:
        await NatsBus.connect(url, connect_timeout_s=0.5)
    message = str(caught.value)
    assert "127.0.0.1:1" in message
    assert "s3cret-pw" not in message
    assert "alice:***@" in message


async def test_a_token_url_is_redacted_in_repr_and_errors() -> None:
    bus = NatsBus("nats://tok3n-value@127.0.0.1:1", connect_timeout_s=0.3)
    assert "tok3n-value" not in repr(bus)
    with pytest.raises(NatsConnectionError) as caught:
        await bus.publish("a.b", b"x")
    assert "tok3n-value" not in str(caught.value)


@pytest.mark.parametrize(
    ("servers", "shown"),
    [
        ("nats://tok3n-value@h:4222", "nats://***@h:4222"),
        ("nats://ada:s3cret@h:4222", "nats://ada:***@h:4222"),
        ("nats://h:4222/?token=s3cret&name=x", "nats://h:4222/?token=***&name=x"),
        (["nats://a:1", "nats://tok3n@b:2"], "nats://a:1, nats://***@b:2"),
    ],
)
def test_every_store_and_the_bus_show_urls_by_cores_one_rule(
    servers: str | list[str], shown: str
) -> None:
    assert NatsBus(servers).url == shown
    assert NatsKVStateStore(servers).url == shown
    assert NatsCheckpointStore(servers).url == shown
    assert shown in repr(NatsRuntime(servers))


async def test_a_payload_over_max_payload_is_a_typed_error(nats_server: str) -> None:
    async with NatsBus(nats_server) as bus:
        limit = (await bus.client()).max_payload
        with pytest.raises(PayloadTooLargeError, match="max_payload"):
            await bus.publish("big.one", b"x" * (limit + 1))
        # the connection is still fine afterwards
        sub = await bus.subscribe("big.two")
        await bus.publish("big.two", b"ok")
        assert (await asyncio.wait_for(anext(sub), 5)).data == b"ok"


async def test_subscribers_on_other_connections_see_messages_published_after_subscribe(
    nats_server: str,
) -> None:
    async with NatsBus(nats_server) as one, NatsBus(nats_server) as two:
        sub = await one.subscribe("cross.>")
        await two.publish("cross.a.b", {"n": 1})
        message = await asyncio.wait_for(anext(sub), 5)
        assert message.json_value() == {"n": 1}
        assert message.subject == "cross.a.b"


async def test_responders_on_another_connection_answer_requests(nats_server: str) -> None:
    async with NatsBus(nats_server) as server_side, NatsBus(nats_server) as client_side:
        sub = await server_side.subscribe("svc.echo", queue="echoers")

        async def serve() -> None:
            async for message in sub:
                assert message.reply is not None
                await server_side.publish(message.reply, message.data.upper())

        task = asyncio.create_task(serve())
        reply = await client_side.request("svc.echo", "hi", timeout_s=5)
        assert reply.text == "HI"
        task.cancel()


async def test_the_bus_survives_a_server_restart() -> None:
    from tests.fixtures.servers import nats_server_binary, start_nats_server

    binary = nats_server_binary()
    assert binary is not None
    server = start_nats_server(binary)
    try:
        with structlog.testing.capture_logs() as logs:
            bus = await NatsBus.connect(server.url)
            sub = await bus.subscribe("restart.x")
            server.restart()
            for _ in range(200):  # the client notices the loss, then reconnects
                if any(entry["event"] == "nats_reconnected" for entry in logs):
                    break
                await asyncio.sleep(0.05)
            assert bus.is_connected
            await bus.publish("restart.x", b"after")
            assert (await asyncio.wait_for(anext(sub), 5)).data == b"after"
            await bus.close()
        names = [entry["event"] for entry in logs]
        assert "nats_reconnected" in names
        assert not any("Traceback" in str(entry) for entry in logs)
    finally:
        server.stop()
    with pytest.raises(BusClosedError):
        await bus.publish("restart.x", b"closed")
