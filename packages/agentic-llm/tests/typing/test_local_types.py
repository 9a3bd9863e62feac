# pyright: strict
"""Type-checked (pyright strict) uses of LocalChatClient; also runs as a test module."""

from __future__ import annotations

from pathlib import Path
from typing import assert_type

from agentic_core import ChatAgent, ChatClient
from agentic_llm import LLMError, LocalChatClient


async def test_local_client_is_a_chat_client(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    async with LocalChatClient(
        model, n_ctx=512, n_threads=1, chat_format="chatml", seed=1
    ) as client:
        assert_type(client, LocalChatClient)
        as_protocol: ChatClient = client
        assert isinstance(as_protocol, ChatClient)
        assert ChatAgent(client, "Be brief.").chat_client is client
        assert_type(client.model_path, Path)
        assert_type(client.max_tokens, int | None)


def test_default_model_path_is_a_path_or_an_llm_error() -> None:
    try:
        path = LocalChatClient.default_model_path()
    except LLMError:
        return
    assert_type(path, Path)
    assert path.suffix == ".gguf"
