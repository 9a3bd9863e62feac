"""The Anthropic Messages API client: ``_mapping`` (wire format, pure) and ``_client``."""

from agentic_llm._anthropic._client import AnthropicChatClient

__all__ = ["AnthropicChatClient"]
