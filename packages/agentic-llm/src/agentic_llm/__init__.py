"""agentic-llm.

LLM chat clients for agentic: OpenAI-compatible, Anthropic, Gemini, Ollama and offline llama.cpp.

Public names load lazily, on first use: ``import agentic_llm`` stays cheap (httpx is imported
only when a client or error class is first touched).
"""

import typing as _typing

__all__ = [
    "AnthropicChatClient",
    "AuthenticationError",
    "ContextLengthError",
    "GeminiChatClient",
    "InvalidRequestError",
    "LLMConnectionError",
    "LLMError",
    "LLMTimeoutError",
    "LocalChatClient",
    "OllamaChatClient",
    "OpenAIChatClient",
    "PermissionDeniedError",
    "ProviderError",
    "RateLimitError",
    "__version__",
    "create_chat_client",
]

# Public name -> the module that defines it (imported on first access).
_LAZY: dict[str, str] = {
    "AnthropicChatClient": "agentic_llm._anthropic",
    "AuthenticationError": "agentic_llm._errors",
    "ContextLengthError": "agentic_llm._errors",
    "GeminiChatClient": "agentic_llm._gemini",
    "InvalidRequestError": "agentic_llm._errors",
    "LLMConnectionError": "agentic_llm._errors",
    "LLMError": "agentic_llm._errors",
    "LLMTimeoutError": "agentic_llm._errors",
    "LocalChatClient": "agentic_llm._local",
    "OllamaChatClient": "agentic_llm._ollama",
    "OpenAIChatClient": "agentic_llm._openai",
    "PermissionDeniedError": "agentic_llm._errors",
    "ProviderError": "agentic_llm._errors",
    "RateLimitError": "agentic_llm._errors",
    "create_chat_client": "agentic_llm._factory",
}

if _typing.TYPE_CHECKING:
    from agentic_llm._anthropic import AnthropicChatClient
    from agentic_llm._errors import (
        AuthenticationError,
        ContextLengthError,
        InvalidRequestError,
        LLMConnectionError,
        LLMError,
        LLMTimeoutError,
        PermissionDeniedError,
        ProviderError,
        RateLimitError,
    )
    from agentic_llm._factory import create_chat_client
    from agentic_llm._gemini import GeminiChatClient
    from agentic_llm._local import LocalChatClient
    from agentic_llm._ollama import OllamaChatClient
    from agentic_llm._openai import OpenAIChatClient

    __version__: str
else:

    def __getattr__(name: str) -> object:
        module_name = _LAZY.get(name)
        if module_name is not None:
            import importlib

            value = getattr(importlib.import_module(module_name), name)
        elif name == "__version__":
            # The version is read from the installed metadata on first use: importing
            # importlib.metadata costs ~30 ms, which `import agentic_llm` should not pay.
            from importlib.metadata import version

            value = version("agentic-llm")
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
