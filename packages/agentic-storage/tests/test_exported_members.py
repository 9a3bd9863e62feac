"""The public API of agentic_storage is exactly its sorted ``__all__``."""

import types

import agentic_storage


def test_all_is_sorted_and_unique() -> None:
    assert list(agentic_storage.__all__) == sorted(set(agentic_storage.__all__))


def test_public_names_are_exactly_all() -> None:
    for name in agentic_storage.__all__:  # names load lazily: load each one first
        getattr(agentic_storage, name)
    public = {
        name
        for name, value in vars(agentic_storage).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public | {"__version__"} == set(agentic_storage.__all__)


def test_version_is_a_release_string() -> None:
    assert agentic_storage.__version__.count(".") >= 2
