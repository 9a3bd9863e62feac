"""Lazy package exports with one source: the package's ``__init__.pyi`` stub.

A package's public names are written once, as explicit re-exports in ``__init__.pyi``
(``from pkg._module import Name as Name``). Type checkers read the stub; at run time
``lazy_exports`` reads the same stub's import statements to build ``__all__`` and a
``__getattr__`` that imports a name's module on first use. So ``__all__``, the lazy table and
what a type checker sees cannot disagree, and importing the package itself stays cheap.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_exports"]


def _stub_table(package: str, stub_path: str) -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute) from the stub's ``from ... import ... as ...`` lines."""
    with open(stub_path, encoding="utf-8") as stub:  # noqa: PTH123 - pathlib costs an import
        tree = ast.parse(stub.read(), filename=stub_path)
    table: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            for alias in node.names:
                if alias.asname is not None and alias.asname == alias.name:
                    table[alias.name] = (module, alias.name)
                elif alias.asname is not None and not alias.asname.startswith("_"):
                    table[alias.asname] = (module, alias.name)
    return table


def lazy_exports(
    package: str, init_file: str, *, distribution: str | None = None
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package``, from the stub beside ``init_file``.

    Use it as the whole body of a package's ``__init__.py``::

        from agentic_core import lazy_exports

        __getattr__, __dir__, __all__ = lazy_exports(
            __name__, __file__, distribution="agentic-example"
        )

    with every public name re-exported in ``__init__.pyi`` (``from pkg._mod import X as X``)
    and ``__version__: str`` declared there; ``__version__`` is read from the installed
    ``distribution``'s metadata when first asked for (a subpackage passes no distribution and
    has no ``__version__``).
    """
    stub_path = init_file[: -len(".py")] + ".pyi"
    table = _stub_table(package, stub_path)
    names = sorted({*table, "__version__"} if distribution else table)
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:  # noqa: N807 - a module's __getattr__
        target = table.get(name)
        if target is not None:
            module_name, attribute = target
            module = importlib.import_module(module_name)
            try:
                value = getattr(module, attribute)
            except AttributeError:
                raise AttributeError(
                    f"{package}.{name} is listed in {stub_path} as {module_name}.{attribute}, "
                    "which does not exist"
                ) from None
        elif name == "__version__" and distribution is not None:
            # importlib.metadata costs ~30 ms to import: read the version only when asked.
            from importlib.metadata import version

            value = version(distribution)
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def __dir__() -> list[str]:  # noqa: N807 - a module's __dir__
        return sorted({*namespace, *names})

    return __getattr__, __dir__, names
