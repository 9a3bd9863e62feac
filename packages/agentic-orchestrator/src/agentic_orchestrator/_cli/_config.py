"""``agentic run`` configuration: a TOML file read into pydantic models, errors with their line.

::

    [models]
    fast = "local"  # a spec, or a table (provider, model, ...)

    [[agents]]
    name = "writer"
    instructions = "Write one sentence."
    model = "fast"  # a [models] name or a spec
    tools = ["python:myapp.tools:word_count", "mcp:time"]

    [mcp.servers.time]
    command = "mcp-server-time"

    [pattern]
    type = "sequential"  # or concurrent, group-chat, handoff, ...

Every problem is a ``ConfigError`` reading ``file:line: key.path: message``, whatever the
bytes (``_toml_file``). tomllib reports no positions, so :func:`key_lines` finds a key's line
with a small scan of the text. Secrets are refused by the named rules of ``_secrets``; the MCP
tables refer to them as ``${NAME}`` instead, read from the environment when a server starts.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from agentic_core.registry import available
from agentic_orchestrator._agent_spec import AgentSpec, ModelSpec
from agentic_orchestrator._cli._errors import ConfigError
from agentic_orchestrator._cli._positions import Path_, dotted, key_lines, line_of
from agentic_orchestrator._cli._toml_file import read_toml
from agentic_orchestrator._secrets import (
    REFERENCE_FIELDS,
    UnsetVariableError,
    expand_references,
    find_secret,
)

__all__ = ["Path_", "RunAgentSpec", "RunConfig", "key_lines", "load_run_config"]

_NAME = r"^[A-Za-z0-9_.-]+$"
_TOOL = re.compile(r"^(python:[\w.]+:[\w.]+|mcp:[A-Za-z0-9_-]+)$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunAgentSpec(AgentSpec):
    """One ``[[agents]]`` table: an :class:`AgentSpec` as a run file writes it.

    Stricter than a plain spec: ``model`` is text (a ``[models]`` name or a spec; model tables go
    under ``[models]``), each tool is ``python:package.module:function`` or ``mcp:<server>``, and
    the table is frozen like the rest of the file.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    # Narrowed on a frozen model (no one can assign a ModelSpec back), so not unsound here.
    model: str | None = None  # pyright: ignore[reportIncompatibleVariableOverride]
    """A ``[models]`` name or a spec (``openai:gpt-4o-mini``, ``local``, ``python:MOD:FACTORY``);
    none: the model ``--model`` or the machine picks."""

    @field_validator("tools")
    @classmethod
    def _tool_specs(cls, tools: list[str]) -> list[str]:
        for spec in tools:
            if not _TOOL.match(spec):
                raise ValueError(
                    f"tool {spec!r} is neither 'python:package.module:function' nor 'mcp:<server>'"
                )
        return tools


class MCPServerTable(_Strict):
    """One ``[mcp.servers.<name>]`` table: a command (stdio) or a url (streamable HTTP)."""

    command: str | None = None
    args: list[str] = Field(default_factory=list[str])
    env: dict[str, str] = Field(default_factory=dict[str, str])
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    allowed_tools: list[str] | None = None
    call_timeout_s: float | None = Field(default=None, gt=0)
    connect_timeout_s: float | None = Field(default=None, gt=0)


class MCPTable(_Strict):
    servers: dict[str, MCPServerTable] = Field(default_factory=dict[str, MCPServerTable])


class _PatternBase(_Strict):
    agents: list[str] | None = None
    """The participants, in order; default: every ``[[agents]]`` in file order."""


class SequentialPattern(_PatternBase):
    type: Literal["sequential"]


class ConcurrentPattern(_PatternBase):
    type: Literal["concurrent"]


class GroupChatPattern(_PatternBase):
    type: Literal["group-chat"]
    selector: Literal["round-robin", "smart", "llm"] = "round-robin"
    selector_model: str | None = None
    """With ``selector = "llm"``: the model picking speakers (default: the run's model)."""
    max_rounds: int = Field(default=6, ge=1)
    termination_keyword: str | None = None


class HandoffPattern(_PatternBase):
    type: Literal["handoff"]
    start: str | None = None
    routes: dict[str, list[str]] = Field(default_factory=dict[str, list[str]])
    max_handoffs: int = Field(default=20, ge=0)


class MagenticPattern(_PatternBase):
    type: Literal["magentic"]
    manager_model: str | None = None
    max_rounds: int = Field(default=20, ge=1)
    max_stalls: int = Field(default=3, ge=0)
    max_resets: int = Field(default=2, ge=0)


class DelegatingPattern(_PatternBase):
    type: Literal["delegating"]
    lead: str
    """The ``[[agents]]`` name of the agent that delegates (its model and instructions)."""
    delegation_timeout_s: float = Field(default=120.0, gt=0)
    max_parallel: int | None = Field(default=None, ge=1)


PatternConfig = Annotated[
    SequentialPattern
    | ConcurrentPattern
    | GroupChatPattern
    | HandoffPattern
    | MagenticPattern
    | DelegatingPattern,
    Field(discriminator="type"),
]


class RunConfig(_Strict):
    """A whole ``agentic run`` file."""

    name: str = Field(default="agentic-run", min_length=1, pattern=_NAME)
    models: dict[str, str | ModelSpec] = Field(default_factory=dict[str, str | ModelSpec])
    agents: list[RunAgentSpec] = Field(min_length=1)
    mcp: MCPTable = Field(default_factory=MCPTable)
    pattern: PatternConfig

    def participants(self) -> list[str]:
        """The pattern's agents, in order."""
        return list(self.pattern.agents or [a.name for a in self.agents])


class LoadedConfig(BaseModel):
    """A validated config with what error messages need: the file name and each key's line."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    file: str
    config: RunConfig
    lines: dict[Path_, int]

    def error(self, path: Path_, message: str) -> ConfigError:
        """A ``ConfigError`` at ``path`` (its line, or its nearest enclosing key's)."""
        return ConfigError(self.file, line_of(self.lines, path), dotted(path), message)


def load_run_config(file: str | Path) -> LoadedConfig:
    """Read and check ``file``: bytes and TOML syntax, secrets, shapes (pydantic), then cross
    references. Every problem is a ``ConfigError`` naming the file, the line and the key."""
    toml = read_toml(file)
    name, lines = toml.name, toml.lines
    secret = find_secret(toml.data)
    if secret is not None:  # before pydantic, whose messages could quote the value
        raise ConfigError(name, line_of(lines, secret.path), dotted(secret.path), secret.message)
    try:
        config = RunConfig.model_validate(toml.data)
    except ValidationError as exc:
        first = _first_error(exc)
        path = _clean_loc(first["loc"])
        if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
            path = (*path, "type")  # the discriminator's own key
        raise ConfigError(
            name, line_of(lines, path), dotted(path), _message(first["msg"], first["type"], path)
        ) from None
    loaded = LoadedConfig(file=name, config=config, lines=lines)
    check_references(loaded)
    return loaded


def check_references(loaded: LoadedConfig) -> None:
    """Names that must point somewhere do: agents, models, MCP servers, pattern roles."""
    config = loaded.config
    agent_names = [a.name for a in config.agents]
    for index, agent in enumerate(config.agents):
        if agent_names.index(agent.name) != index:
            raise loaded.error(("agents", index, "name"), f"two agents are named {agent.name!r}")
        if agent.model is not None:
            _check_model(loaded, agent.model, ("agents", index, "model"))
        for tool in agent.tools:
            server = tool.removeprefix("mcp:") if tool.startswith("mcp:") else None
            if server is not None and server not in config.mcp.servers:
                raise loaded.error(
                    ("agents", index, "tools"),
                    f"unknown MCP server {server!r} (declared: "
                    f"{', '.join(sorted(config.mcp.servers)) or 'none'}; "
                    f"add [mcp.servers.{server}])",
                )
    for name, table in config.mcp.servers.items():
        if (table.command is None) == (table.url is None):
            raise loaded.error(
                ("mcp", "servers", name), "give exactly one of command (stdio) and url (HTTP)"
            )
    _check_pattern(loaded, set(agent_names))


def _check_pattern(loaded: LoadedConfig, agents: set[str]) -> None:
    pattern = loaded.config.pattern
    for index, name in enumerate(pattern.agents or []):
        if name not in agents:
            raise loaded.error(("pattern", "agents", index), _unknown_agent(name, agents))
    if isinstance(pattern, HandoffPattern):
        if pattern.start is not None and pattern.start not in agents:
            raise loaded.error(("pattern", "start"), _unknown_agent(pattern.start, agents))
        for source, targets in pattern.routes.items():
            for name in (source, *targets):
                if name not in agents:
                    raise loaded.error(("pattern", "routes", source), _unknown_agent(name, agents))
    if isinstance(pattern, DelegatingPattern):
        if pattern.lead not in agents:
            raise loaded.error(("pattern", "lead"), _unknown_agent(pattern.lead, agents))
        if pattern.lead in loaded.config.participants():
            raise loaded.error(
                ("pattern", "lead"), f"the lead {pattern.lead!r} cannot also be a sub-agent"
            )
    if isinstance(pattern, GroupChatPattern) and pattern.selector_model is not None:
        _check_model(loaded, pattern.selector_model, ("pattern", "selector_model"))
    if isinstance(pattern, MagenticPattern) and pattern.manager_model is not None:
        _check_model(loaded, pattern.manager_model, ("pattern", "manager_model"))


def _check_model(loaded: LoadedConfig, model: str, path: Path_) -> None:
    if model in loaded.config.models or model.startswith("python:"):
        return
    provider = model.partition(":")[0].strip().lower()
    if provider in available("agentic.chat_clients"):
        return
    named = ", ".join(sorted(loaded.config.models)) or "none"
    raise loaded.error(
        path,
        f"unknown model {model!r} (not a [models] name: {named}; nor a spec "
        f"'provider:model' with provider one of {', '.join(available('agentic.chat_clients'))})",
    )


def _unknown_agent(name: str, agents: set[str]) -> str:
    return f"unknown agent {name!r} (agents: {', '.join(sorted(agents))})"


def _clean_loc(loc: Sequence[str | int]) -> Path_:
    # pydantic adds the discriminator's tag ("pattern", "sequential", ...) and union branch
    # names ("str", "ModelSpec"): not keys of the file.
    tags = {"sequential", "concurrent", "group-chat", "handoff", "magentic", "delegating"}
    path: list[str | int] = []
    for index, part in enumerate(loc):
        if index == 1 and loc[0] == "pattern" and part in tags:
            continue
        if isinstance(part, str) and (part in {"str", "ModelSpec"} or "[" in part):
            continue
        path.append(part)
    return tuple(path)


def _first_error(exc: ValidationError) -> ErrorDetails:
    # A [models] value is `str | ModelSpec`: pydantic reports both branches, and the string
    # branch's "Input should be a valid string" says nothing of a table's actual mistake.
    errors = exc.errors()
    for error in errors:
        if not (error["type"] == "string_type" and "str" in error["loc"]):
            return error
    return errors[0]


def _message(message: str, kind: str, path: Path_) -> str:
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "model_type" and path[:1] == ("models",):
        return 'expected a model spec ("provider:model") or a table (provider = ..., model = ...)'
    if kind == "union_tag_invalid":
        return (
            "unknown pattern type; use sequential, concurrent, group-chat, handoff, magentic or "
            "delegating"
        )
    if kind == "union_tag_not_found" or (kind == "missing" and "pattern" in message):
        return "missing 'type' (sequential, concurrent, group-chat, handoff, magentic, delegating)"
    return message.removeprefix("Value error, ")


def describe_sources(
    loaded: LoadedConfig, names: Collection[str], environ: Mapping[str, str] = os.environ
) -> dict[str, dict[str, Any]]:
    """The MCP server tables ``names`` as plain dicts for the ``mcp`` tool source (defaults left
    out), each ``${NAME}`` in their env, headers, url and args read from ``environ``."""
    described: dict[str, dict[str, Any]] = {}
    for name in sorted(names):
        table = loaded.config.mcp.servers[name].model_dump(exclude_defaults=True)
        for field in REFERENCE_FIELDS & table.keys():
            table[field] = _expanded(loaded, ("mcp", "servers", name, field), table[field], environ)
        described[name] = table
    return described


def _expanded(loaded: LoadedConfig, path: Path_, value: object, environ: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        try:
            return expand_references(value, environ)
        except UnsetVariableError as exc:
            raise loaded.error(
                path, f"the environment variable {exc.name} is not set (the file refers to it)"
            ) from None
    if isinstance(value, list):
        items = cast("list[object]", value)
        return [_expanded(loaded, (*path, i), item, environ) for i, item in enumerate(items)]
    table = cast("dict[str, object]", value)
    return {key: _expanded(loaded, (*path, key), item, environ) for key, item in table.items()}
