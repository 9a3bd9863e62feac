"""The public API of agentic_orchestrator is exactly its sorted ``__all__``, loaded lazily."""

import subprocess
import sys
import types

import pytest

import agentic_orchestrator


def test_all_is_sorted_and_unique() -> None:
    assert list(agentic_orchestrator.__all__) == sorted(set(agentic_orchestrator.__all__))


def test_every_name_in_all_resolves() -> None:
    for name in agentic_orchestrator.__all__:
        assert getattr(agentic_orchestrator, name) is not None, name


def test_public_names_are_exactly_all() -> None:
    for name in agentic_orchestrator.__all__:
        getattr(agentic_orchestrator, name)
    public = {
        name
        for name, value in vars(agentic_orchestrator).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(agentic_orchestrator.__all__) - {"__version__"}


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchThing"):
        getattr(agentic_orchestrator, "NoSuchThing")  # noqa: B009


def test_importing_the_package_loads_no_pattern_module() -> None:
    code = (
        "import sys, agentic_orchestrator\n"
        "print(sorted(m for m in sys.modules if m.startswith('agentic_orchestrator.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_error_derives_from_orchestrator_error_and_the_workspace_root() -> None:
    from agentic_core import AgenticError

    errors = [
        getattr(agentic_orchestrator, name)
        for name in agentic_orchestrator.__all__
        if name.endswith("Error")
    ]
    assert errors
    assert all(issubclass(error, agentic_orchestrator.OrchestratorError) for error in errors)
    assert all(issubclass(error, AgenticError) for error in errors)


def test_version_is_a_release_string() -> None:
    assert agentic_orchestrator.__version__.count(".") >= 2
