from agentic_core import StorageError as StorageError
from agentic_storage._keys import KeyPatterns as KeyPatterns
from agentic_storage._qdrant import QdrantVectorStore as QdrantVectorStore
from agentic_storage._redis_checkpoint import RedisCheckpointStore as RedisCheckpointStore
from agentic_storage._redis_state import RedisStateStore as RedisStateStore
from agentic_storage._vector_memory import VectorMemoryProvider as VectorMemoryProvider

__version__: str
__all__: list[str]
