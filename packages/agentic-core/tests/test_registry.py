"""The entry-point registry finds installed implementations and explains missing ones."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

from agentic_core import registry


def test_an_unknown_name_names_the_group_and_the_package_to_install() -> None:
    with pytest.raises(
        registry.RegistryError, match=r"no 'nope' registered under 'agentic.chat_clients'"
    ) as info:
        registry.load("agentic.chat_clients", "nope")
    assert "agentic-llm" in str(info.value)


def test_an_empty_group_lists_nothing() -> None:
    assert registry.available("agentic.no_such_group") == []


def test_a_broken_entry_point_is_a_registry_error(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = EntryPoint(name="broken", value="agentic_core:NoSuchThing", group="agentic.test")
    monkeypatch.setattr(registry, "_group", lambda group: {"broken": broken})
    with pytest.raises(registry.RegistryError, match="cannot be loaded"):
        registry.load("agentic.test", "broken")


def test_a_registered_entry_point_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    good = EntryPoint(name="builder", value="agentic_core:WorkflowBuilder", group="agentic.test")
    monkeypatch.setattr(registry, "_group", lambda group: {"builder": good})
    from agentic_core import WorkflowBuilder

    assert registry.load("agentic.test", "builder") is WorkflowBuilder
    assert registry.available("agentic.test") == ["builder"]
