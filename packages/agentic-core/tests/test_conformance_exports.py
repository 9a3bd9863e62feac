"""agentic_core.testing.conformance exports every suite other packages run, and nothing else."""

import types

from agentic_core.testing import conformance
from agentic_core.testing.conformance import (
    _checkpoint_store,
    _message_bus,
    _sandbox,
    _state_store,
    _vector_store,
)


def test_conformance_exports_every_suite_and_the_checkpoint_helper() -> None:
    assert set(conformance.__all__) == {
        "CheckpointStoreConformance",
        "InteractiveSandboxConformance",
        "MessageBusConformance",
        "SandboxConformance",
        "StateStoreConformance",
        "VectorStoreConformance",
        "make_checkpoint",
    }


def test_conformance_all_is_sorted_and_unique() -> None:
    assert list(conformance.__all__) == sorted(set(conformance.__all__))


def test_conformance_public_names_are_exactly_all() -> None:
    public = {
        name
        for name, value in vars(conformance).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(conformance.__all__)


def test_pytest_rewrites_the_suites_asserts_so_failures_show_the_values() -> None:
    for module in [_checkpoint_store, _message_bus, _sandbox, _state_store, _vector_store]:
        assert "@pytest_ar" in vars(module), module.__name__
