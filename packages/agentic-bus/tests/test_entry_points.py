"""agentic-bus's checkpoint store and event replay are found by name through core's registry
(the run viewer of agentic-orchestrator reaches them only this way)."""

from __future__ import annotations

from agentic_bus import NatsCheckpointStore, replay_events
from agentic_core import registry


def test_the_kv_checkpoint_store_and_the_event_source_are_registered() -> None:
    assert registry.load("agentic.checkpoint_stores", "nats") is NatsCheckpointStore
    assert registry.load("agentic.event_sources", "nats") is replay_events
    assert registry.load("agentic.runtimes", "nats").__name__ == "NatsRuntime"
