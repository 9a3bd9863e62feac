"""The ground floor of agentic: every protocol the packages implement, and the data they speak.

The modules here import nothing of agentic_core but each other and ``agentic_core._errors``;
implementations (the engine, the agent layer, the stores, the other packages) build on them,
never the other way round. In-memory implementations of each protocol live in agentic_core.
Each protocol is ``runtime_checkable`` so a registry or a test can verify an implementation.

Names load lazily (see ``__init__.pyi``, the one list of them).
"""

from agentic_core._lazy import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__
)
