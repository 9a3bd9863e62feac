"""The public API of agentic_sandbox is exactly its sorted ``__all__``, loaded lazily."""

import subprocess
import sys
import types

import pytest

import agentic_sandbox


def test_all_is_sorted_and_unique() -> None:
    assert list(agentic_sandbox.__all__) == sorted(set(agentic_sandbox.__all__))


def test_every_name_in_all_resolves() -> None:
    for name in agentic_sandbox.__all__:
        assert getattr(agentic_sandbox, name) is not None, name


def test_public_names_are_exactly_all() -> None:
    for name in agentic_sandbox.__all__:
        getattr(agentic_sandbox, name)
    public = {
        name
        for name, value in vars(agentic_sandbox).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(agentic_sandbox.__all__) - {"__version__"}


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        getattr(agentic_sandbox, "NoSuchThing")  # noqa: B009


def test_importing_the_package_loads_nothing_else() -> None:
    code = (
        "import sys, agentic_sandbox\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('agentic_', 'pydantic')))\n"
        "print(loaded)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # agentic_core's lazy-export helper, and nothing that loads pydantic or a sandbox module.
    assert out.stdout.strip() == "['agentic_core', 'agentic_core._lazy', 'agentic_sandbox']"


def test_the_errors_share_one_root() -> None:
    from agentic_core import AgenticError

    assert issubclass(agentic_sandbox.SandboxNotReadyError, agentic_sandbox.SandboxError)
    assert issubclass(agentic_sandbox.SandboxError, AgenticError)
    assert issubclass(agentic_sandbox.SandboxNotReadyError, AgenticError)


def test_version_is_a_release_string() -> None:
    assert agentic_sandbox.__version__.count(".") >= 2
