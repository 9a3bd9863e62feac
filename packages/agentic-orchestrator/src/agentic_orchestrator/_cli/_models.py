"""Which model answers: a spec from the user, else the best one this machine can reach.

Model specs are the registry's (``"openai:gpt-4o-mini"``, ``"ollama:llama3.2"``, ``"local"``:
providers come from the ``agentic.chat_clients`` entry points, never an import of agentic-llm)
plus ``python:MODULE:FACTORY``, a zero-argument factory returning a ``ChatClient`` (how tests and
users plug in a scripted or home-made model).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import httpx

from agentic_core import ChatClient, ObjectReferenceError, load_object
from agentic_core.registry import RegistryError, available, load
from agentic_orchestrator._agent_spec import ModelSpec
from agentic_orchestrator._cli._errors import UsageError

__all__ = ["choose_model", "model_label", "resolve_model"]

CLIENTS: Final = "agentic.chat_clients"
MODEL_VARIABLE: Final = "AGENTIC_MODEL"
OLLAMA_HOST_VARIABLE: Final = "OLLAMA_HOST"
OLLAMA_DEFAULT_HOST: Final = "http://127.0.0.1:11434"
OLLAMA_PROBE_S: Final = 0.5
"""A local Ollama answers in milliseconds; anything slower is not worth waiting for."""

# Environment variable holding each hosted provider's key, and the model used when only the key
# is known (small, cheap and good at tool calls).
_HOSTED: Final[tuple[tuple[str, tuple[str, ...], str], ...]] = (
    ("openai", ("OPENAI_API_KEY",), "gpt-4o-mini"),
    ("anthropic", ("ANTHROPIC_API_KEY",), "claude-haiku-4-5"),
    ("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash"),
)
_KEY_VARIABLES: Final = {provider: variables for provider, variables, _ in _HOSTED}
_QUANTIZATION = re.compile(r"[.-](?:I?Q\d\w*|F16|F32|BF16)$", re.IGNORECASE)


def choose_model(
    spec: str | None = None, *, environ: Mapping[str, str] = os.environ
) -> tuple[str, ChatClient]:
    """``(label, client)`` for the model to use.

    ``spec`` (or the ``AGENTIC_MODEL`` variable) wins. Else the first of: ``OPENAI_API_KEY``
    (``openai:gpt-4o-mini``), ``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY``, an Ollama server
    answering on ``OLLAMA_HOST`` (default 127.0.0.1:11434) within half a second with a model
    pulled, else the embedded ``local`` llama.cpp model. The label says which, never a key.
    """
    chosen = (spec or "").strip() or environ.get(MODEL_VARIABLE, "").strip()
    if chosen:
        return resolve_model(chosen, environ=environ)
    for provider, variables, default_model in _HOSTED:
        if any(environ.get(variable, "").strip() for variable in variables):
            return resolve_model(f"{provider}:{default_model}", environ=environ)
    pulled = _ollama_model(_ollama_host(environ))
    if pulled is not None:
        return resolve_model(f"ollama:{pulled}", environ=environ)
    return resolve_model("local", environ=environ)


def resolve_model(
    spec: str | ModelSpec, *, environ: Mapping[str, str] = os.environ
) -> tuple[str, ChatClient]:
    """``(label, client)`` for one spec: ``provider:model``, ``local``, ``python:MODULE:FACTORY``
    or a ``ModelSpec`` table. A spec naming nothing installed raises ``UsageError``."""
    if isinstance(spec, str) and spec.strip().startswith("python:"):
        return _from_factory(spec.strip().removeprefix("python:"))
    table = spec if isinstance(spec, ModelSpec) else _parse(spec)
    provider = table.provider.strip().lower()
    try:
        factory: Callable[..., Any] = load(CLIENTS, provider)
    except RegistryError:
        known = ", ".join([*available(CLIENTS), "python"])
        raise UsageError(
            f"unknown model provider {provider!r} (known: {known}); a model is "
            "'provider:model', 'local' or 'python:MODULE:FACTORY'"
        ) from None
    kwargs = _client_keywords(provider, table, environ)
    if not table.model and provider != "local":
        raise UsageError(f"model spec {provider!r} names no model: use '{provider}:<model>'")
    args = (table.model,) if table.model else ()
    try:
        client = factory(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - a provider's own check (no key, no model file)
        raise UsageError(f"model {_spec_text(table)!r}: {type(exc).__name__}: {exc}") from None
    if not isinstance(client, ChatClient):
        raise UsageError(f"model {_spec_text(table)!r}: provider built no ChatClient")
    return model_label(client), client


def model_label(client: ChatClient) -> str:
    """A human name for a client, e.g. ``local llama.cpp (SmolLM2-135M-Instruct)``."""
    provider = str(getattr(client, "provider", "") or type(client).__name__)
    model = str(getattr(client, "model", "") or "")
    if provider == "local":
        return f"local llama.cpp ({_QUANTIZATION.sub('', model) or 'default model'})"
    if provider == "ollama":
        return f"ollama {model} (local server)"
    return f"{provider} {model}".strip()


def _parse(text: str) -> ModelSpec:
    provider, _, model = text.strip().partition(":")
    if not provider:
        raise UsageError(f"empty model spec {text!r}: use 'provider:model' or 'local'")
    return ModelSpec(provider=provider, model=model.strip())


def _spec_text(table: ModelSpec) -> str:
    return f"{table.provider}:{table.model}" if table.model else table.provider


def _client_keywords(provider: str, table: ModelSpec, environ: Mapping[str, str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = dict(table.options)
    if table.base_url:
        kwargs["base_url"] = table.base_url
    variables = (table.api_key_env,) if table.api_key_env else _KEY_VARIABLES.get(provider, ())
    for variable in variables:
        key = environ.get(variable, "").strip()
        if key:
            kwargs["api_key"] = key  # read from the given environ, not only the process's
            break
    else:
        if table.api_key_env:
            raise UsageError(f"the environment variable {table.api_key_env} holds no API key")
    if provider == "ollama" and "host" not in kwargs and environ.get(OLLAMA_HOST_VARIABLE):
        kwargs["host"] = _ollama_host(environ)
    return kwargs


def _from_factory(reference: str) -> tuple[str, ChatClient]:
    try:
        factory = load_object(reference, what="model factory")
    except ObjectReferenceError as exc:
        raise UsageError(str(exc)) from None
    if not callable(factory):
        raise UsageError(f"python:{reference} is not callable (a model factory takes no arguments)")
    try:
        client = factory()
    except Exception as exc:  # noqa: BLE001 - the user's factory: say which and why, once
        raise UsageError(f"python:{reference} failed: {type(exc).__name__}: {exc}") from None
    if not isinstance(client, ChatClient):
        raise UsageError(f"python:{reference} returned {type(client).__name__}, not a ChatClient")
    return f"{model_label(client)} from python:{reference}", client


def _ollama_host(environ: Mapping[str, str]) -> str:
    host = environ.get(OLLAMA_HOST_VARIABLE, "").strip() or OLLAMA_DEFAULT_HOST
    if "://" not in host:
        host = f"http://{host}"
    return host.rstrip("/")


def _ollama_model(host: str) -> str | None:
    """The first model pulled on the Ollama server at ``host``, or None (no server, no model)."""
    try:
        reply = httpx.get(f"{host}/api/tags", timeout=OLLAMA_PROBE_S)
        reply.raise_for_status()
        models: Any = reply.json().get("models")
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    if not isinstance(models, list):
        return None
    for entry in cast("list[Any]", models):
        name: Any = cast("dict[str, Any]", entry).get("name") if isinstance(entry, dict) else None
        if isinstance(name, str) and name:
            return name
    return None
