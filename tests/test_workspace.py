"""The workspace keeps its shape: seven distributions, the dependency rule, own versions."""

from __future__ import annotations

import ast
import importlib
import shutil
import tomllib
from pathlib import Path

import pytest

from tests.workspace_rules import (
    check_dependency_rule,
    import_cycles,
    import_graph,
    imported_modules,
    layering_violations,
    load_packages,
    requirement_name,
    stub_exports,
)

ROOT = Path(__file__).resolve().parents[1]
EXPECTED = {
    "agentic-core",
    "agentic-llm",
    "agentic-sandbox",
    "agentic-mcp",
    "agentic-bus",
    "agentic-storage",
    "agentic-orchestrator",
}
FIELD_LIBRARY = {
    "agentic-core": {"pydantic", "structlog"},
    "agentic-llm": {"httpx"},
    "agentic-sandbox": {"docker"},
    "agentic-mcp": {"mcp", "jsonschema"},
    "agentic-bus": {"nats-py"},
    "agentic-storage": {"redis", "qdrant-client", "zstandard"},
    "agentic-orchestrator": {"typer", "rich", "httpx"},  # the `agentic` command line
}


def test_workspace_has_exactly_the_seven_distributions() -> None:
    assert {package.name for package in load_packages(ROOT)} == EXPECTED


def test_workspace_root_is_not_published_and_lists_every_member() -> None:
    root = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert root["tool"]["uv"]["package"] is False
    assert root["tool"]["uv"]["workspace"]["members"] == ["packages/*"]
    assert {requirement_name(r) for r in root["project"]["dependencies"]} == EXPECTED


def test_dependency_rule_holds_in_this_repository() -> None:
    assert check_dependency_rule(ROOT) == []


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_package_depends_on_core_and_its_field_library_only(name: str) -> None:
    package = next(p for p in load_packages(ROOT) if p.name == name)
    deps = {requirement_name(r) for r in package.pyproject["project"]["dependencies"]}
    expected = FIELD_LIBRARY[name] | (set() if name == "agentic-core" else {"agentic-core"})
    assert deps == expected


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_package_has_its_own_static_version_and_files(name: str) -> None:
    package = next(p for p in load_packages(ROOT) if p.name == name)
    project = package.pyproject["project"]
    assert "version" not in project.get("dynamic", [])
    assert project["version"].count(".") == 2
    assert project["requires-python"] == ">=3.11"
    assert project["description"]
    assert project["classifiers"]
    for required in ("README.md", "CHANGELOG.md", "tests"):
        assert (package.path / required).exists(), f"{name} lacks {required}"
    assert (package.src_dir / "__init__.py").is_file()
    assert (package.src_dir / "py.typed").is_file()
    module = importlib.import_module(package.import_name)
    assert module.__version__ == project["version"]


def test_versions_are_read_from_metadata_not_hardcoded() -> None:
    for package in load_packages(ROOT):
        init = (package.src_dir / "__init__.py").read_text()
        assert f'distribution="{package.name}"' in init, package.name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_package_lists_its_public_names_once_in_its_stub(name: str) -> None:
    package = next(p for p in load_packages(ROOT) if p.name == name)
    stub = stub_exports(package.src_dir / "__init__.pyi")
    module = importlib.import_module(package.import_name)
    assert module.__all__ == sorted({*stub, "__version__"})
    for public, (module_name, attribute) in stub.items():
        defining = importlib.import_module(module_name)
        assert getattr(module, public) is getattr(defining, attribute), public
    # The stub is the one list: __init__.py itself names no public symbol.
    init = ast.parse((package.src_dir / "__init__.py").read_text())
    assigned = {
        target.id
        for node in ast.walk(init)
        if isinstance(node, ast.Assign)
        for assigned_to in node.targets
        for target in ast.walk(assigned_to)
        if isinstance(target, ast.Name) and not target.id.startswith("_")
    }
    assert assigned == set(), assigned


def _copy_workspace(tmp_path: Path) -> Path:
    tree = tmp_path / "ws"
    for package in load_packages(ROOT):
        target = tree / "packages" / package.path.name
        shutil.copytree(package.path / "src", target / "src")
        shutil.copy(package.path / "pyproject.toml", target / "pyproject.toml")
    return tree


def test_checker_catches_a_sibling_import_in_a_temporary_tree(tmp_path: Path) -> None:
    tree = _copy_workspace(tmp_path)
    assert check_dependency_rule(tree) == []
    bad = tree / "packages" / "agentic-bus" / "src" / "agentic_bus" / "_leak.py"
    bad.write_text("import agentic_llm\n")
    violations = check_dependency_rule(tree)
    assert len(violations) == 1
    assert "agentic_bus/_leak.py:1" in violations[0]
    assert "agentic-bus imports agentic_llm" in violations[0]


@pytest.mark.parametrize(
    "statement",
    [
        "from agentic_llm import x",
        "from agentic_llm._client import x",
        "import agentic_storage.redis as r",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import agentic_mcp",
        "import importlib\nimportlib.import_module('agentic_sandbox.x')",
        "def f():\n    import agentic_orchestrator",
    ],
)
def test_checker_catches_every_import_form(tmp_path: Path, statement: str) -> None:
    tree = _copy_workspace(tmp_path)
    (tree / "packages" / "agentic-bus" / "src" / "agentic_bus" / "_leak.py").write_text(statement)
    assert len(check_dependency_rule(tree)) == 1


def test_checker_catches_a_sibling_import_in_core(tmp_path: Path) -> None:
    tree = _copy_workspace(tmp_path)
    (tree / "packages" / "agentic-core" / "src" / "agentic_core" / "_x.py").write_text(
        "from agentic_bus import NatsBus\n"
    )
    [violation] = check_dependency_rule(tree)
    assert "agentic-core imports agentic_bus" in violation


def test_checker_allows_core_and_own_imports(tmp_path: Path) -> None:
    tree = _copy_workspace(tmp_path)
    (tree / "packages" / "agentic-bus" / "src" / "agentic_bus" / "_ok.py").write_text(
        "import agentic_core\nfrom agentic_bus import __version__\nfrom . import _ok\n"
    )
    assert check_dependency_rule(tree) == []


def test_checker_catches_a_sibling_dependency_in_pyproject(tmp_path: Path) -> None:
    tree = _copy_workspace(tmp_path)
    pyproject = tree / "packages" / "agentic-mcp" / "pyproject.toml"
    text = pyproject.read_text().replace(
        '"agentic-core>=0.1.0,<0.2",', '"agentic-core>=0.1.0,<0.2",\n    "agentic_Sandbox>=0.1",'
    )
    pyproject.write_text(text)
    [violation] = check_dependency_rule(tree)
    assert "agentic-mcp: dependency on sibling agentic-sandbox" in violation


def test_checker_allows_sibling_extras_only_in_the_orchestrator(tmp_path: Path) -> None:
    tree = _copy_workspace(tmp_path)
    for name, expect in (("agentic-orchestrator", 0), ("agentic-llm", 1)):
        pyproject = tree / "packages" / name / "pyproject.toml"
        text = pyproject.read_text()
        bus = 'bus = ["agentic-bus>=0.1"]\n'
        if "\n[project.optional-dependencies]\n" in text:  # add to the extras it has
            text = text.replace(
                "\n[project.optional-dependencies]\n", "\n[project.optional-dependencies]\n" + bus
            )
        else:
            text = text.replace(
                "\n[build-system]", f"\n[project.optional-dependencies]\n{bus}\n[build-system]"
            )
        pyproject.write_text(text)
        assert len(check_dependency_rule(tree)) == expect, name


def test_checker_requires_core_in_every_other_package(tmp_path: Path) -> None:
    tree = _copy_workspace(tmp_path)
    pyproject = tree / "packages" / "agentic-llm" / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('"agentic-core>=0.1.0,<0.2",', ""))
    assert check_dependency_rule(tree) == ["agentic-llm: does not depend on agentic-core"]


def test_imported_modules_reads_absolute_imports_only() -> None:
    found = imported_modules("import a.b\nfrom c.d import e\nfrom . import f\nfrom .g import h\n")
    assert found == [(1, "a"), (2, "c")]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_package_has_an_import_cycle_type_only_imports_included(name: str) -> None:
    package = next(p for p in load_packages(ROOT) if p.name == name)
    assert import_cycles(import_graph(package.path / "src")) == []


def test_core_is_layered_protocols_below_graph_below_agents() -> None:
    core = next(p for p in load_packages(ROOT) if p.name == "agentic-core")
    assert layering_violations(import_graph(core.path / "src")) == []


def test_cycle_checker_sees_a_type_only_cycle(tmp_path: Path) -> None:
    src = tmp_path / "src" / "pkg"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "a.py").write_text("from pkg.b import B\n")
    (src / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\nB = 1\n"
    )
    (src / "c.py").write_text("def f():\n    from pkg import a\n")  # deferred: no edge
    graph = import_graph(tmp_path / "src")
    assert import_cycles(graph) == [["pkg.a", "pkg.b"]]
    assert "pkg.a" not in graph["pkg.c"]


def test_layering_checker_sees_the_graph_importing_agents(tmp_path: Path) -> None:
    src = tmp_path / "src" / "agentic_core"
    for sub in ("graph", "agents", "protocols"):
        (src / sub).mkdir(parents=True)
        (src / sub / "__init__.py").write_text("")
    (src / "__init__.py").write_text("")
    (src / "agents" / "_agent.py").write_text("X = 1\n")
    (src / "graph" / "_workflow.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from agentic_core.agents._agent import X\n"
    )
    (src / "protocols" / "_chat.py").write_text("from agentic_core.graph._workflow import Y\n")
    graph_rule, floor_rule = layering_violations(import_graph(tmp_path / "src"))
    assert graph_rule.startswith("agentic_core.graph._workflow imports agentic_core.agents._agent")
    assert floor_rule.startswith(
        "agentic_core.protocols._chat imports agentic_core.graph._workflow"
    )
