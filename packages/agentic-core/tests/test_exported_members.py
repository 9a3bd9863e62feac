"""The public API of agentic_core is exactly its sorted ``__all__``, loaded lazily."""

import subprocess
import sys
import types
from pathlib import Path

import pytest

import agentic_core
from agentic_core import lazy_exports


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
    assert out.stdout.strip() == "['agentic_core._lazy']"


def test_protocols_lists_every_protocol_lazily() -> None:
    from agentic_core import protocols

    assert protocols.__all__ == sorted(protocols.__all__)
    for name in protocols.__all__:
        assert getattr(protocols, name) is getattr(agentic_core, name), name
    assert not hasattr(protocols, "__version__")


def _package(tmp_path: Path, stub: str) -> str:
    package = tmp_path / "lazy_probe_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from agentic_core import lazy_exports\n"
        "__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)\n"
    )
    (package / "__init__.pyi").write_text(stub)
    (package / "_impl.py").write_text("class Thing: ...\nVALUE = 3\n")
    return str(tmp_path)


def test_lazy_exports_reads_the_stub_as_the_one_list(tmp_path: Path) -> None:
    stub = (
        "from lazy_probe_pkg._impl import Thing as Thing\n"
        "from ._impl import VALUE as VALUE\n"
        "from lazy_probe_pkg._impl import Thing as _Private\n"
    )
    code = (
        "import lazy_probe_pkg as p\n"
        "from lazy_probe_pkg import *\n"
        "print(p.__all__, p.Thing.__name__, p.VALUE, VALUE, 'Thing' in dir(p))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": _package(tmp_path, stub)},
    )
    assert out.stdout.split() == ["['Thing',", "'VALUE']", "Thing", "3", "3", "True"]


def test_lazy_exports_names_the_stub_line_that_points_nowhere(tmp_path: Path) -> None:
    stub = "from lazy_probe_pkg._impl import Missing as Missing\n"
    code = "import lazy_probe_pkg as p\np.Missing\n"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": _package(tmp_path, stub)},
    )
    assert "lazy_probe_pkg.Missing is listed in" in out.stderr
    assert "__init__.pyi as lazy_probe_pkg._impl.Missing" in out.stderr


def test_lazy_exports_is_public() -> None:
    assert callable(lazy_exports)


def test_version_is_a_release_string() -> None:
    assert agentic_core.__version__.count(".") >= 2
