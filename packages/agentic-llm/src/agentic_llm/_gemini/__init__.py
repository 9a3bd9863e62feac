"""The Gemini API client: ``_mapping`` (wire format, pure) and ``_client``."""

from agentic_llm._gemini._client import GeminiChatClient

__all__ = ["GeminiChatClient"]
