"""lazy_exports: a package's ``__init__.pyi`` is the one list of its names, loaded on first use.

(The checks every package shares, ``__all__`` and the import cost, are in the workspace's
``tests/test_exported_members.py``.)
"""

import subprocess
import sys
from pathlib import Path

import agentic_core


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
