"""agentic-core.

Graph workflow engine, agent layer and protocols for agentic multi-agent systems.

Public names load lazily, on first use: ``import agentic_core`` stays cheap, and a program
pays only for the parts it touches. ``__init__.pyi`` is the one list of them.
"""

from agentic_core._lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-core"
)
