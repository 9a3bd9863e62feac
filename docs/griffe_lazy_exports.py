"""A griffe extension: a lazily exported package's public names are its runtime ``__all__``.

agentic's packages list their public names once, as ``from pkg._mod import X as X`` lines in
``__init__.pyi``; ``__init__.py`` is ``__getattr__, __dir__, __all__ = lazy_exports(...)``
(``agentic_core._lazy``). griffe reads both files (the stub's imports become aliases), but it
cannot evaluate that ``__all__``, so it takes every alias for a private import and
mkdocstrings would render none of them. This extension imports each such package once, reads
its ``__all__`` (cheap: nothing behind the names is loaded) and gives it to griffe as the
module's exports, so ``::: agentic_llm`` renders exactly the public API, and the aliases
resolve to the classes and functions where they are defined.

mkdocs.yml loads it by path: ``extensions: [docs/griffe_lazy_exports.py:LazyExports]``.
"""

from __future__ import annotations

import importlib
from typing import Any

import griffe

_VERSION_DOC = "The installed distribution's version, read from its metadata when first asked for."


class LazyExports(griffe.Extension):
    """Set ``exports`` of every module whose ``__getattr__`` serves lazily loaded names."""

    def on_package(self, *, pkg: griffe.Module, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        self._export(pkg)

    def _export(self, module: griffe.Module) -> None:
        try:
            runtime = importlib.import_module(module.path)
        except ImportError:  # an optional dependency missing: leave griffe's view as it is
            return
        names = getattr(runtime, "__all__", None)
        if names is not None and callable(runtime.__dict__.get("__getattr__")):
            module.exports = list(names)
            _describe_undocumented(module, names)
        for child in module.modules.values():
            if not child.is_alias and not child.name.startswith("_"):
                self._export(child)


def _describe_undocumented(module: griffe.Module, names: list[str]) -> None:
    """Give the two kinds of docstring-less exports a line, so mkdocstrings renders them.

    ``__version__`` (declared in the stub), and a renamed name kept as an alias of the new one
    (``passed = code_passed``: CONTRIBUTING.md's rule that an exported name never disappears).
    """
    for name in names:
        member = module.members.get(name)
        if member is None:
            continue
        try:
            target = member.final_target if isinstance(member, griffe.Alias) else member
        except (griffe.AliasResolutionError, griffe.CyclicAliasError):
            continue
        if not isinstance(target, griffe.Attribute) or target.docstring is not None:
            continue
        if name == "__version__":
            target.docstring = griffe.Docstring(_VERSION_DOC, parent=target)
        elif isinstance(target.value, griffe.ExprName):
            text = f"The earlier name of `{target.value.name}`: the same object."
            target.docstring = griffe.Docstring(text, parent=target)
