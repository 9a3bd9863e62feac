"""agentic-storage.

Redis state and checkpoint stores, Qdrant vector store and semantic memory for agentic.

Status: in progress. Nothing is built yet: the package exports only ``__version__``; its
issue describes what it will hold.
"""

from agentic_core import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-storage"
)
