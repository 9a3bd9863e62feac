"""AgentSpec: a sub-agent defined in TOML (name, instructions, model, tools), built on demand."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentic_core import ChatAgent, ChatClient, Tool
from agentic_core.registry import load
from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._secrets import secret_rule_for

_CLIENTS = "agentic.chat_clients"


class ModelSpec(BaseModel):
    """A model as a table: ``{provider = "openai", model = "gpt-4o-mini", ...}``.

    Keys never sit in the file: ``api_key_env`` names the environment variable holding one.
    """

    model_config = ConfigDict(extra="forbid")

    provider: str = Field(min_length=1)
    model: str = ""
    base_url: str | None = None
    api_key_env: str | None = None
    options: dict[str, Any] = Field(default_factory=dict[str, Any])
    """More keyword arguments for the client's constructor (e.g. ``host`` for Ollama)."""

    @field_validator("options")
    @classmethod
    def _no_keys(cls, options: dict[str, Any]) -> dict[str, Any]:
        for name, value in options.items():
            rule = secret_rule_for(name, value) if isinstance(value, str) else None
            if rule is not None:  # the value itself is never quoted
                raise ValueError(
                    f"options.{name}: {rule.what} (secret rule {rule.name!r}): no secrets in "
                    "the file; name the environment variable holding the key in api_key_env"
                )
        return options


class AgentSpec(BaseModel):
    """One sub-agent: what it is told, which model answers, which tools it may use.

    ``model`` is ``"<provider>:<model>"`` (``"openai:gpt-4o-mini"``, ``"ollama:llama3.2"``,
    ``"local"``) or a :class:`ModelSpec` table; providers come from the ``agentic.chat_clients``
    entry points (agentic-llm registers openai, anthropic, gemini, ollama, local).
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    instructions: str = ""
    description: str | None = None
    model: str | ModelSpec | None = None
    tools: list[str] = Field(default_factory=list[str])
    max_tool_iterations: int = Field(default=10, ge=0)

    def build(
        self,
        *,
        chat_client: ChatClient | None = None,
        client_factory: Callable[[AgentSpec], ChatClient] | None = None,
        tools: Mapping[str, Tool | Callable[..., Any]] | None = None,
    ) -> ChatAgent:
        """A ChatAgent for this spec.

        Its chat client is ``chat_client``, else ``client_factory(spec)``, else one made from
        ``model`` through the entry points. ``tools`` maps the names the spec lists to tools; a
        name missing there is an ``OrchestrationConfigError`` naming it.
        """
        available = dict(tools or {})
        missing = [name for name in self.tools if name not in available]
        if missing:
            raise OrchestrationConfigError(
                f"agent spec {self.name!r}: unknown tool(s) {', '.join(map(repr, missing))} "
                f"(tools given: {', '.join(sorted(available)) or 'none'})"
            )
        client = chat_client or (client_factory(self) if client_factory else self._client())
        return ChatAgent(
            client,
            self.instructions or None,
            name=self.name,
            description=self.description,
            tools=[available[name] for name in self.tools],
            max_tool_iterations=self.max_tool_iterations,
        )

    def _client(self) -> ChatClient:
        if self.model is None:
            raise OrchestrationConfigError(
                f'agent spec {self.name!r} names no model; set model = "provider:model" or '
                "pass a chat_client"
            )
        spec = self.model if isinstance(self.model, ModelSpec) else _parse_model(self.model)
        try:
            factory = load(_CLIENTS, spec.provider.lower())
        except Exception as exc:
            raise OrchestrationConfigError(f"agent spec {self.name!r}: {exc}") from exc
        kwargs: dict[str, Any] = dict(spec.options)
        if spec.base_url:
            kwargs["base_url"] = spec.base_url
        if spec.api_key_env:
            key = os.environ.get(spec.api_key_env)
            if not key:
                raise OrchestrationConfigError(
                    f"agent spec {self.name!r}: the environment variable {spec.api_key_env} "
                    "holds no API key"
                )
            kwargs["api_key"] = key
        args = (spec.model,) if spec.model else ()
        try:
            client = factory(*args, **kwargs)
        except TypeError as exc:
            raise OrchestrationConfigError(
                f"agent spec {self.name!r}: provider {spec.provider!r} does not take "
                f"{', '.join(sorted(kwargs)) or 'these arguments'}: {exc}"
            ) from None
        if not isinstance(client, ChatClient):
            raise OrchestrationConfigError(
                f"agent spec {self.name!r}: provider {spec.provider!r} built no ChatClient"
            )
        return client


def _parse_model(text: str) -> ModelSpec:
    provider, _, model = text.strip().partition(":")
    return ModelSpec(provider=provider or text, model=model.strip())


def load_agent_specs(source: str | Path) -> list[AgentSpec]:
    """The ``[[agents]]`` tables of a TOML file (a ``Path``, or the TOML text itself).

    Invalid TOML, an unknown top-level key, a wrong or unknown field, or two agents with one
    name: an ``OrchestrationConfigError`` naming the file, the agent and the field.
    """
    where = str(source) if isinstance(source, Path) else "<toml>"
    try:
        text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
        data = tomllib.loads(text)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise OrchestrationConfigError(f"{where}: cannot read agent specs: {exc}") from exc
    unknown = sorted(set(data) - {"agents"})
    if unknown:
        raise OrchestrationConfigError(
            f"{where}: unknown top-level key(s) {', '.join(map(repr, unknown))}; agents go in "
            "[[agents]] tables"
        )
    tables = data.get("agents", [])
    if not isinstance(tables, list):
        raise OrchestrationConfigError(f"{where}: 'agents' must be an array of tables")
    specs: list[AgentSpec] = []
    for index, table in enumerate(cast("list[Any]", tables), start=1):
        named = cast("dict[str, Any]", table).get("name") if isinstance(table, dict) else None
        label = repr(named) if named else f"#{index}"
        try:
            spec = AgentSpec.model_validate(table)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors()
            )
            raise OrchestrationConfigError(f"{where}: agent {label}: {problems}") from None
        if any(s.name == spec.name for s in specs):
            raise OrchestrationConfigError(f"{where}: two agents are named {spec.name!r}")
        specs.append(spec)
    return specs
