"""The public API of agentic_bus is exactly its sorted ``__all__``, with API.md's names."""

import types

import agentic_bus


def test_all_is_sorted_and_unique() -> None:
    assert list(agentic_bus.__all__) == sorted(set(agentic_bus.__all__))


def test_public_names_are_exactly_all() -> None:
    for name in agentic_bus.__all__:  # names load lazily: load each one first
        getattr(agentic_bus, name)
    public = {
        name
        for name, value in vars(agentic_bus).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public | {"__version__"} == set(agentic_bus.__all__)


def test_version_is_a_release_string() -> None:
    assert agentic_bus.__version__.count(".") >= 2


def test_the_api_names_are_exported() -> None:
    expected = {"NatsBus", "Subjects", "NatsRuntime", "Worker", "ProxyAgent", "serve_agent"}
    assert expected <= set(agentic_bus.__all__)
