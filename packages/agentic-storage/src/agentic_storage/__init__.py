"""agentic-storage.

Redis state and checkpoint stores, Qdrant vector store and semantic memory for agentic.

``RedisStateStore`` and ``RedisCheckpointStore`` (core's ``StateStore`` and ``CheckpointStore`` on
Redis), ``QdrantVectorStore`` (core's ``VectorStore`` on Qdrant), ``VectorMemoryProvider`` (semantic
long-term memory for agents on any vector store) and ``KeyPatterns``. Names load lazily, from
``__init__.pyi``.
"""

from agentic_core import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-storage"
)
