"""choose_model: an explicit spec, then keys, then a local Ollama, then the embedded model."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import ClassVar

import pytest

from agentic_core.testing import FunctionChatClient
from agentic_orchestrator._cli._errors import UsageError
from agentic_orchestrator._cli._models import choose_model, resolve_model

KEY = "sk-test-not-a-real-key-123"


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def no_ollama(closed_port: int) -> dict[str, str]:
    return {"OLLAMA_HOST": f"http://127.0.0.1:{closed_port}"}


class _Tags(BaseHTTPRequestHandler):
    models: ClassVar[list[dict[str, str]]] = [{"name": "qwen2.5:0.5b"}]

    def do_GET(self) -> None:
        body = json.dumps({"models": self.models if self.path == "/api/tags" else []}).encode()
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        return


@pytest.fixture
def ollama_tags() -> Iterator[str]:
    """An HTTP server answering Ollama's ``/api/tags`` on 127.0.0.1 (the probe's only call)."""
    server = HTTPServer(("127.0.0.1", 0), _Tags)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_without_keys_or_ollama_the_embedded_model_is_chosen(no_ollama: dict[str, str]) -> None:
    label, client = choose_model(environ=no_ollama)
    assert client.provider == "local"
    assert label.startswith("local llama.cpp (SmolLM2-135M-Instruct")


def test_an_openai_key_picks_gpt_4o_mini_and_the_label_hides_the_key(
    no_ollama: dict[str, str],
) -> None:
    environ = {**no_ollama, "OPENAI_API_KEY": KEY, "ANTHROPIC_API_KEY": KEY}
    label, client = choose_model(environ=environ)
    assert (client.provider, client.model) == ("openai", "gpt-4o-mini")
    assert KEY not in label
    assert label == "openai gpt-4o-mini"


def test_keys_are_tried_in_order_openai_anthropic_gemini(no_ollama: dict[str, str]) -> None:
    _, anthropic = choose_model(
        environ={**no_ollama, "ANTHROPIC_API_KEY": KEY, "GEMINI_API_KEY": KEY}
    )
    _, gemini = choose_model(environ={**no_ollama, "GEMINI_API_KEY": KEY})
    assert anthropic.provider == "anthropic"
    assert gemini.provider == "gemini"


def test_a_reachable_ollama_with_a_model_is_chosen_before_the_embedded_one(
    ollama_tags: str,
) -> None:
    label, client = choose_model(environ={"OLLAMA_HOST": ollama_tags})
    assert (client.provider, client.model) == ("ollama", "qwen2.5:0.5b")
    assert label == "ollama qwen2.5:0.5b (local server)"


def test_an_ollama_without_models_is_passed_over(
    ollama_tags: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_Tags, "models", [])
    _, client = choose_model(environ={"OLLAMA_HOST": ollama_tags})
    assert client.provider == "local"


def test_the_agentic_model_variable_beats_keys(no_ollama: dict[str, str]) -> None:
    environ = {**no_ollama, "OPENAI_API_KEY": KEY, "AGENTIC_MODEL": "ollama:llama3.2"}
    _, client = choose_model(environ=environ)
    assert (client.provider, client.model) == ("ollama", "llama3.2")


def test_an_explicit_spec_beats_the_variable(no_ollama: dict[str, str]) -> None:
    environ = {**no_ollama, "AGENTIC_MODEL": "ollama:llama3.2"}
    label, client = choose_model("python:tests.cli_models:scripted", environ=environ)
    assert isinstance(client, FunctionChatClient)
    assert label == "function scripted from python:tests.cli_models:scripted"


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(UsageError, match=r"unknown model provider 'gpt' \(known: .*openai.*python"):
        resolve_model("gpt:4")


def test_a_hosted_spec_without_a_model_name_is_refused() -> None:
    with pytest.raises(UsageError, match="names no model: use 'openai:<model>'"):
        resolve_model("openai", environ={"OPENAI_API_KEY": KEY})


def test_a_factory_returning_no_chat_client_is_refused() -> None:
    with pytest.raises(UsageError, match="pair_workflow returned Workflow, not a ChatClient"):
        resolve_model("python:tests.cli_models:pair_workflow")
