"""The real-server fixtures work: a NATS and a Redis round trip against the started servers."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import nats
import pytest
import redis.asyncio as aioredis

from tests.fixtures.servers import (
    REQUIRE_SERVICES_ENV,
    ServerProcess,
    live_children,
    missing_service,
    services_required,
)


async def test_nats_publish_subscribe_round_trip(nats_server: str) -> None:
    nc = await nats.connect(nats_server, connect_timeout=5)
    try:
        sub = await nc.subscribe("agentic.test.ping")
        await nc.publish("agentic.test.ping", b"hello")
        msg = await sub.next_msg(timeout=5)
        assert msg.data == b"hello"
    finally:
        await nc.close()


async def test_nats_jetstream_kv_put_get(nats_server: str) -> None:
    nc = await nats.connect(nats_server, connect_timeout=5)
    try:
        js = nc.jetstream()
        kv = await js.create_key_value(bucket="agentic_fixture_test")
        revision = await kv.put("greeting", b"hello")
        entry = await kv.get("greeting")
        assert entry.value == b"hello"
        assert entry.revision == revision
        await js.delete_key_value("agentic_fixture_test")
    finally:
        await nc.close()


async def test_redis_set_get_round_trip(redis_server: str) -> None:
    client = aioredis.from_url(redis_server)
    try:
        await client.set("agentic:fixture:greeting", "hello")
        assert await client.get("agentic:fixture:greeting") == b"hello"
        assert await client.config_get("save") == {"save": ""}
        assert await client.config_get("appendonly") == {"appendonly": "no"}
    finally:
        await client.delete("agentic:fixture:greeting")
        await client.aclose()


def test_servers_bind_loopback_only(
    nats_server_process: ServerProcess, redis_server_process: ServerProcess
) -> None:
    for server in (nats_server_process, redis_server_process):
        assert server.url.split("//")[1].startswith("127.0.0.1:")
        assert server.process.poll() is None, f"{server.name} is not running"


def test_server_is_a_tracked_child_of_the_test_process(
    nats_server_process: ServerProcess,
) -> None:
    assert nats_server_process.pid in {pid for pid, _ in live_children()}


def test_missing_service_skips_when_not_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_SERVICES_ENV, raising=False)
    assert not services_required()
    with pytest.raises(pytest.skip.Exception, match="no such server"):
        missing_service("no such server")


def test_missing_service_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_SERVICES_ENV, "1")
    assert services_required()
    with pytest.raises(pytest.fail.Exception, match=f"no such server.*{REQUIRE_SERVICES_ENV}=1"):
        missing_service("no such server")


def test_live_children_sees_and_forgets_a_child() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert child.pid in {pid for pid, _ in live_children()}
    finally:
        child.kill()
        child.wait()
    assert child.pid not in {pid for pid, _ in live_children()}


async def test_stopped_nats_server_leaves_no_process_or_data() -> None:
    from tests.fixtures.servers import nats_server_binary, start_nats_server

    binary = nats_server_binary()
    if binary is None:
        missing_service("nats-server binary not found")
    server = start_nats_server(binary)
    nc = await nats.connect(server.url, connect_timeout=5)
    await nc.close()
    server.stop()
    await asyncio.sleep(0)
    assert server.process.poll() is not None
    assert not server.data_dir.exists()
    assert server.pid not in {pid for pid, _ in live_children()}
