"""The public API of agentic_core is exactly its sorted ``__all__``, loaded lazily."""

import subprocess
import sys
import types

import pytest

import agentic_core


def test_all_is_sorted_and_unique() -> None:
    assert list(agentic_core.__all__) == sorted(set(agentic_core.__all__))


def test_every_name_in_all_resolves() -> None:
    for name in agentic_core.__all__:
        assert getattr(agentic_core, name) is not None, name


def test_public_names_are_exactly_all() -> None:
    for name in agentic_core.__all__:
        getattr(agentic_core, name)
    public = {
        name
        for name, value in vars(agentic_core).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(agentic_core.__all__) - {"__version__"}


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        getattr(agentic_core, "NoSuchThing")  # noqa: B009


def test_importing_the_package_loads_no_engine_module() -> None:
    code = (
        "import sys, agentic_core\n"
        "prefixes = ('agentic_core.', 'pydantic.main')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(prefixes))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_version_is_a_release_string() -> None:
    assert agentic_core.__version__.count(".") >= 2
