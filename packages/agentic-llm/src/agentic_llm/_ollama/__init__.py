"""The Ollama client (native ``/api/chat``): ``_mapping`` (wire format, pure) and ``_client``."""

from agentic_llm._ollama._client import OllamaChatClient

__all__ = ["OllamaChatClient"]
