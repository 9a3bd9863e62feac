"""LocalChatClient: offline, in-process llama.cpp (``_client``; ``_engine`` imports xllamacpp)."""

from agentic_llm._local._client import LocalChatClient

__all__ = ["LocalChatClient"]
