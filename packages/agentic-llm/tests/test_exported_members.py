"""The public API of agentic_llm is exactly its sorted ``__all__``."""

import types

import agentic_llm


def test_all_is_sorted_and_unique() -> None:
    assert list(agentic_llm.__all__) == sorted(set(agentic_llm.__all__))


def test_public_names_are_exactly_all() -> None:
    public = {
        name
        for name, value in vars(agentic_llm).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public | {"__version__"} == set(agentic_llm.__all__)


def test_version_is_a_release_string() -> None:
    assert agentic_llm.__version__.count(".") >= 2
