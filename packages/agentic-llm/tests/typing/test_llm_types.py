# pyright: strict
"""Type-checked (pyright strict) uses of the agentic_llm API: this file fails CI if the types
regress. It also runs as a test module, so the examples stay executable."""

from __future__ import annotations

from typing import assert_type

from agentic_core import ChatAgent, ChatClient
from agentic_llm import (
    LLMError,
    LLMTimeoutError,
    OpenAIChatClient,
    ProviderError,
    RateLimitError,
)


async def test_openai_client_is_a_chat_client() -> None:
    async with OpenAIChatClient("m", base_url="http://127.0.0.1:1/v1") as client:
        assert_type(client, OpenAIChatClient)
        as_protocol: ChatClient = client
        assert isinstance(as_protocol, ChatClient)
        agent = ChatAgent(client, "Be brief.")
        assert agent.chat_client is client
        assert_type(client.provider, str)
        assert_type(client.base_url, str)


def _failure() -> LLMError:
    return RateLimitError("slow down", provider="openai", retry_after_s=1.5)


def test_error_attributes_are_typed() -> None:
    error = _failure()
    assert_type(error.status, int | None)
    assert_type(error.body, str)
    assert_type(error.provider, str)
    if isinstance(error, RateLimitError):
        assert_type(error.retry_after_s, float | None)
    assert isinstance(ProviderError("x", status=500), LLMError)
    assert isinstance(LLMTimeoutError("x"), TimeoutError)
