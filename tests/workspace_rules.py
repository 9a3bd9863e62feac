"""The dependency rule of ARCHITECTURE.md, checked from pyproject files and import statements.

``agentic-core`` depends on no sibling. Every other package depends on ``agentic-core`` and on
nothing else of ours, in its dependencies and in every ``import`` of its ``src/`` files.
``agentic-orchestrator`` alone may name siblings, and only in optional extras: it composes the
others through extras and entry points, never by importing them.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CORE = "agentic-core"
COMPOSER = "agentic-orchestrator"
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True)
class WorkspacePackage:
    """One distribution of the workspace."""

    name: str  # distribution name, e.g. "agentic-bus"
    import_name: str  # e.g. "agentic_bus"
    path: Path
    pyproject: dict[str, Any]

    @property
    def src_dir(self) -> Path:
        return self.path / "src" / self.import_name


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The normalized distribution name of a PEP 508 requirement string."""
    match = _REQUIREMENT_NAME.match(requirement)
    if match is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    return _normalize(match.group(1))


def load_packages(root: Path) -> list[WorkspacePackage]:
    """Every ``packages/*/pyproject.toml`` under ``root``, sorted by name."""
    packages: list[WorkspacePackage] = []
    for pyproject_path in sorted((root / "packages").glob("*/pyproject.toml")):
        data = tomllib.loads(pyproject_path.read_text())
        name = _normalize(data["project"]["name"])
        packages.append(WorkspacePackage(name, name.replace("-", "_"), pyproject_path.parent, data))
    return packages


def imported_modules(source: str, filename: str = "<src>") -> list[tuple[int, str]]:
    """Top-level module names a file imports, with line numbers.

    Covers ``import x``, ``from x import y`` (absolute only) and literal-string dynamic imports
    (``importlib.import_module("x")``, ``__import__("x")``), wherever they appear, including under
    ``if TYPE_CHECKING``.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name.split(".")[0]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            func_name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0]
            if (
                func_name in ("import_module", "__import__")
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
            ):
                found.append((node.lineno, first.value.split(".")[0]))
    return found


def check_dependency_rule(root: Path) -> list[str]:
    """Every violation of the dependency rule under ``root``, as readable messages."""
    packages = load_packages(root)
    ours = {package.name for package in packages}
    our_imports = {package.import_name: package.name for package in packages}
    violations: list[str] = []
    for package in packages:
        allowed = {package.name} if package.name == CORE else {package.name, CORE}
        project = package.pyproject["project"]
        for requirement in project.get("dependencies", []):
            dep = requirement_name(requirement)
            if dep in ours and dep not in allowed:
                violations.append(
                    f"{package.name}: dependency on sibling {dep} ({requirement!r}); "
                    f"only {CORE} may be depended on"
                )
        required = {requirement_name(r) for r in project.get("dependencies", [])}
        if package.name != CORE and CORE not in required:
            violations.append(f"{package.name}: does not depend on {CORE}")
        for extra, requirements in project.get("optional-dependencies", {}).items():
            for requirement in requirements:
                dep = requirement_name(requirement)
                if dep in ours and dep not in allowed and package.name != COMPOSER:
                    violations.append(
                        f"{package.name}: extra [{extra}] names sibling {dep}; only "
                        f"{COMPOSER} may compose siblings, and only through extras"
                    )
        allowed_imports = {name.replace("-", "_") for name in allowed}
        for path in sorted(package.src_dir.rglob("*.py")):
            for lineno, module in imported_modules(path.read_text(), str(path)):
                if module in our_imports and module not in allowed_imports:
                    where = path.relative_to(root)
                    violations.append(
                        f"{where}:{lineno}: {package.name} imports {module} "
                        f"(from {our_imports[module]}); a package may import only "
                        f"{' and '.join(sorted(allowed_imports))}"
                    )
    return violations


def stub_exports(stub: Path) -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute) of a package's ``__init__.pyi`` re-exports.

    Read independently of ``agentic_core.lazy_exports``, so a test comparing the two catches a
    helper that drifts from what type checkers see.
    """
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if alias.asname == alias.name:
                    found[alias.name] = (node.module, alias.name)
    return found


def _module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports a module runs or a type checker follows: top level, under ``if`` (including
    ``if TYPE_CHECKING:``) and ``try``; not those inside functions, which run on first use."""
    found: list[ast.Import | ast.ImportFrom] = []

    def walk(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.append(node)
            elif isinstance(node, ast.If):
                walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                walk(node.orelse)
                walk(node.finalbody)
                for handler in node.handlers:
                    walk(handler.body)

    walk(tree.body)
    return found


def import_graph(src: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same source tree it imports at module level."""
    modules: dict[str, Path] = {}
    for path in src.rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _module_level_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    base = ".".join([*anchor, *([node.module] if node.module else [])])
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            for imported in targets:
                module = imported
                while module and module not in modules:
                    module = module.rpartition(".")[0]
                if module and module != name:
                    graph[name].add(module)
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import cycle of ``graph`` (strongly connected components of 2+ modules), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component: list[str] = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(cycles)


def layering_violations(graph: dict[str, set[str]]) -> list[str]:
    """agentic_core's layers: the protocols import only themselves and ``_errors``, and the
    graph engine does not import the agent layer that builds on it."""
    found: list[str] = []
    floor_ok = ("agentic_core.protocols", "agentic_core._errors", "agentic_core._lazy")
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if module.startswith("agentic_core.protocols") and not target.startswith(floor_ok):
                found.append(f"{module} imports {target}: the protocols import no implementation")
            if module.startswith("agentic_core.graph") and target.startswith("agentic_core.agents"):
                found.append(f"{module} imports {target}: the graph engine must not import agents/")
    return found
