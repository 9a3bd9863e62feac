"""Fixtures of the agentic-llm tests: no real sleeping between retries, a mocked OpenAI client.

Every HTTP test goes through respx's ``respx_mock`` fixture, which fails any request that no
route matches: no test reaches the network. The helpers the provider client tests share live in
``tests/fixtures/llm_http.py``; its asserts are rewritten like a test's, so a failing check shows
its values.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agentic_llm import OpenAIChatClient
from agentic_llm._http import _client as http_client_module

# Before any test module imports it (conftest files load first).
pytest.register_assert_rewrite("tests.fixtures.llm_http")

API_KEY = "sk-test-0123456789abcdefSECRET"
BASE_URL = "https://api.openai.com/v1"
COMPLETIONS_URL = f"{BASE_URL}/chat/completions"


@pytest.fixture(autouse=True)
def backoff_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits between retries, recorded instead of slept."""
    waits: list[float] = []

    async def record(delay: float) -> None:
        waits.append(delay)

    monkeypatch.setattr(http_client_module, "_sleep", record)
    return waits


@pytest.fixture(autouse=True)
def no_openai_key_from_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up a real key from the environment."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
async def openai() -> AsyncIterator[OpenAIChatClient]:
    """A client of api.openai.com with a fake key (respx answers for the server)."""
    async with OpenAIChatClient("gpt-4o-mini", api_key=API_KEY) as client:
        yield client
