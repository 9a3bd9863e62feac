"""Each distribution builds on its own, and its wheel installs alone next to agentic-core's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.fixtures.servers import missing_service
from tests.workspace_rules import load_packages

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {package.name: package for package in load_packages(ROOT)}
SIBLINGS = sorted(name for name in PACKAGES if name != "agentic-core")

pytestmark = pytest.mark.slow


def _uv() -> str:
    found = os.environ.get("UV") or shutil.which("uv")
    if not found:
        missing_service("the uv command is needed to build wheels (pip install uv)")
    return found


def _run(*argv: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One wheel per distribution, each built by its own ``uv build --package`` call."""
    out = tmp_path_factory.mktemp("dist")
    uv = _uv()
    built: dict[str, Path] = {}
    for name in sorted(PACKAGES):
        _run(uv, "build", "--package", name, "--wheel", "--out-dir", str(out / name))
        [wheel] = (out / name).glob("*.whl")
        built[name] = wheel
    return built


def test_seven_wheels_build_each_on_its_own(wheels: dict[str, Path]) -> None:
    assert sorted(wheels) == sorted(PACKAGES)
    for name, wheel in wheels.items():
        import_name = PACKAGES[name].import_name
        version = PACKAGES[name].pyproject["project"]["version"]
        assert wheel.name == f"{import_name}-{version}-py3-none-any.whl"
        files = set(zipfile.ZipFile(wheel).namelist())
        assert f"{import_name}/__init__.py" in files
        assert f"{import_name}/py.typed" in files
        assert not any(f.startswith("tests/") for f in files), f"{name} ships its tests"
        others = {p.import_name for p in PACKAGES.values()} - {import_name}
        assert not any(f.split("/")[0] in others for f in files), f"{name} ships a sibling"


@pytest.mark.parametrize("name", SIBLINGS)
def test_wheel_installs_alone_beside_core_into_an_empty_venv(
    name: str, wheels: dict[str, Path], tmp_path: Path
) -> None:
    uv = _uv()
    venv = tmp_path / "venv"
    _run(uv, "venv", "--quiet", "--python", sys.executable, str(venv))
    python = venv / "bin" / "python"
    _run(uv, "pip", "install", "--quiet", "--python", str(python),
         str(wheels["agentic-core"]), str(wheels[name]))  # fmt: skip
    import_name = PACKAGES[name].import_name
    siblings = sorted(
        p.import_name
        for p in PACKAGES.values()
        if p.import_name not in (import_name, "agentic_core")
    )
    probe = (
        f"import importlib.util, json, {import_name}, agentic_core\n"
        f"others = [n for n in {siblings!r} if importlib.util.find_spec(n)]\n"
        f"print(json.dumps([{import_name}.__version__, agentic_core.__version__, others]))\n"
    )
    out = _run(str(python), "-c", probe, cwd=tmp_path)
    version = PACKAGES[name].pyproject["project"]["version"]
    assert out.strip() == f'["{version}", "0.1.0", []]'
