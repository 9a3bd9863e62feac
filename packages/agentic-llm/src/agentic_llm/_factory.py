"""create_chat_client: a chat client from a spec string such as ``"openai:gpt-4o-mini"``."""

from __future__ import annotations

from typing import Any

from agentic_core import ChatClient
from agentic_core.registry import RegistryError, available, load
from agentic_llm._errors import LLMError

GROUP = "agentic.chat_clients"


def create_chat_client(spec: str, **kwargs: Any) -> ChatClient:
    """A chat client for ``spec``: ``"<provider>:<model>"`` or ``"local"``.

    Providers are found through the ``agentic.chat_clients`` entry points (agentic-llm
    registers ``openai``, ``anthropic``, ``gemini``, ``ollama`` and ``local``; other packages
    may add more). Keys come from the environment (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``,
    ``GEMINI_API_KEY``/``GOOGLE_API_KEY``; ``OLLAMA_HOST`` for Ollama) unless passed in
    ``kwargs``, which go to the client's constructor.

    >>> create_chat_client("ollama:llama3.2")  # doctest: +SKIP
    """
    provider, _, model = spec.strip().partition(":")
    provider = provider.strip().lower()
    if not provider:
        raise LLMError(f"empty chat client spec {spec!r}: use '<provider>:<model>' or 'local'")
    try:
        factory = load(GROUP, provider)
    except RegistryError as exc:
        raise LLMError(
            f"unknown chat client provider {provider!r} in {spec!r} "
            f"(known: {', '.join(available(GROUP)) or 'none'})"
        ) from exc
    model = model.strip()
    if provider == "local":
        client = factory(model, **kwargs) if model else factory(**kwargs)
    elif not model:
        raise LLMError(f"chat client spec {spec!r} names no model: use '{provider}:<model>'")
    else:
        client = factory(model, **kwargs)
    if not isinstance(client, ChatClient):
        raise LLMError(f"{provider!r} in {GROUP!r} built {client!r}, which is not a ChatClient")
    return client
