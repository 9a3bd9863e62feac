"""Every store in agentic_core passes the shared conformance suites."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentic_core.protocols import CheckpointStore, StateStore
from agentic_core.stores import (
    FileCheckpointStore,
    InMemoryCheckpointStore,
    InMemoryStateStore,
    StateStoreCheckpointStore,
)
from agentic_core.testing.conformance import CheckpointStoreConformance, StateStoreConformance


class TestInMemoryStateStore(StateStoreConformance):
    @pytest.fixture
    def state_store(self) -> StateStore:
        return InMemoryStateStore()


class TestInMemoryCheckpointStore(CheckpointStoreConformance):
    @pytest.fixture
    def checkpoint_store(self) -> CheckpointStore:
        return InMemoryCheckpointStore()


class TestFileCheckpointStore(CheckpointStoreConformance):
    @pytest.fixture
    def checkpoint_store(self, tmp_path: Path) -> CheckpointStore:
        return FileCheckpointStore(tmp_path / "checkpoints")


class TestStateStoreCheckpointStore(CheckpointStoreConformance):
    @pytest.fixture
    def checkpoint_store(self) -> CheckpointStore:
        return StateStoreCheckpointStore(InMemoryStateStore())


class TestStateStoreCheckpointStoreWithTtl(CheckpointStoreConformance):
    @pytest.fixture
    def checkpoint_store(self) -> CheckpointStore:
        return StateStoreCheckpointStore(InMemoryStateStore(), prefix="cp/", ttl_s=3600)
