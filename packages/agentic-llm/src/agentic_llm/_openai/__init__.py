"""The OpenAI Chat Completions client: ``_mapping`` (wire format, pure) and ``_client``."""

from agentic_llm._openai._client import OpenAIChatClient

__all__ = ["OpenAIChatClient"]
