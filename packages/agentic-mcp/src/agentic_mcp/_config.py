"""MCPServerConfig: how to reach one MCP server and what of it to expose."""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Self
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentic_core import redact_url

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

RetryInFlight = Literal["never", "safe", "always"]
StderrMode = Literal["log", "inherit", "devnull"]


class MCPServerConfig(BaseModel):
    """One MCP server: a command to spawn (stdio) or a URL (streamable HTTP), and its policy.

    Every wait has a bound by default (``connect_timeout_s``, ``call_timeout_s``). ``env`` and
    ``headers`` carry credentials: they stay out of reprs, logs and errors, and a stdio server
    gets only ``env`` on top of a minimal environment (never the parent's secrets).

    Example::

        git = MCPServerConfig.stdio("git", "mcp-server-git", "--repository", "/src/app")
        api = MCPServerConfig.http(
            "api", "https://mcp.example.com/mcp", headers={"Authorization": "Bearer ..."}
        )
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """``[A-Za-z0-9_-]``, unique in a client; the default tool prefix and Code Mode module."""
    command: str | None = None
    args: list[str] = Field(default_factory=list[str])
    env: dict[str, str] | None = Field(default=None, repr=False)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = Field(default=None, repr=False)
    protocol: Literal["auto", "legacy"] = "auto"
    """``auto``: the newest protocol both sides speak; ``legacy``: the initialize handshake."""
    connect_timeout_s: float = Field(default=30.0, gt=0)
    call_timeout_s: float = Field(default=60.0, gt=0)
    """Default bound of one tool call (a call may pass its own)."""
    allowed_tools: list[str] | None = None
    """Globs on the server's tool names; ``None`` allows every tool, ``[]`` none."""
    denied_tools: list[str] = Field(default_factory=list[str])
    """Globs on the server's tool names, checked after ``allowed_tools``."""
    tool_prefix: str | None = None
    """Prefix of the names models see; ``None`` means ``f"{name}__"``, ``""`` no prefix."""
    max_result_chars: int = Field(default=50_000, ge=100)
    """What one tool result may put in a model's context (head and tail kept, with a notice)."""
    max_sse_event_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    """Largest server-sent event accepted over HTTP (the SDK's default of 1 MiB is too small)."""
    reconnect: bool = True
    """Open a new session after the server died or dropped the connection."""
    max_reconnect_attempts: int = Field(default=5, ge=0)
    """Consecutive failed attempts before the server is ``failed`` (``reconnect_server`` resets)."""
    reconnect_backoff_s: float = Field(default=0.1, gt=0)
    """First pause between attempts; doubles up to ``reconnect_backoff_max_s``. Each pause is
    drawn from the upper half of that (jitter: clients that lost a server together do not all
    come back at once)."""
    reconnect_backoff_max_s: float = Field(default=5.0, gt=0)
    retry_in_flight: RetryInFlight = "safe"
    """A call the connection loss interrupted: retry ``never``, only when the tool is annotated
    read-only or idempotent (``safe``), or ``always``. Calls issued after are always retried."""
    health_check_interval_s: float | None = Field(default=None, gt=0)
    """Ping the server this often to notice a dead connection before a call does."""
    stderr: StderrMode = "log"
    """A stdio server's stderr: to our logger (``agentic_mcp.server``), ours, or nowhere."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME.fullmatch(value):
            raise ValueError(
                f"server name {value!r} must be 1-64 characters of letters, digits, '_' or '-'"
            )
        return value

    @model_validator(mode="after")
    def _check_transport(self) -> Self:
        if (self.command is None) == (self.url is None):
            raise ValueError(
                f"server {self.name!r} needs exactly one of command (stdio) and url (HTTP)"
            )
        if self.url is not None:
            scheme = urlsplit(self.url).scheme
            if scheme not in ("http", "https"):
                raise ValueError(
                    f"server {self.name!r}: url must be http(s)://..., got {redact_url(self.url)!r}"
                )
        return self

    def __repr_args__(self) -> Any:
        for name, value in super().__repr_args__():
            yield name, (redact_url(value) if name == "url" and isinstance(value, str) else value)

    # -- constructors ---------------------------------------------------------------------------

    @classmethod
    def stdio(
        cls,
        name: str,
        command: str,
        *args: str,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> MCPServerConfig:
        """A server spawned as ``command *args``, spoken to over its stdin and stdout."""
        return cls(
            name=name,
            command=command,
            args=list(args),
            env=dict(env) if env is not None else None,
            cwd=os.fspath(cwd) if cwd is not None else None,
            **options,
        )

    @classmethod
    def http(
        cls,
        name: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        **options: Any,
    ) -> MCPServerConfig:
        """A server at ``url`` over streamable HTTP (``headers`` sent with every request)."""
        return cls(
            name=name, url=url, headers=dict(headers) if headers is not None else None, **options
        )

    @classmethod
    def from_mcp_json(
        cls, data: Mapping[str, Any] | str | os.PathLike[str], **options: Any
    ) -> list[MCPServerConfig]:
        """The servers of a ``{"mcpServers": {name: {...}}}`` file (Claude Desktop, Cursor, ...).

        ``data`` is the parsed mapping or the path of the file. Entries with ``"disabled": true``
        are left out; ``options`` apply to every server (e.g. ``call_timeout_s=120``). A malformed
        entry raises ``ValueError`` naming it.
        """
        source = "mcp.json"
        if not isinstance(data, Mapping):
            source = os.fspath(data)
            try:
                data = json.loads(Path(source).read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise ValueError(f"cannot read MCP servers from {source}: {exc}") from exc
        if not isinstance(data, Mapping):
            raise ValueError(f"{source}: expected a JSON object with an 'mcpServers' object")
        servers_any: Any = data.get("mcpServers", data.get("servers"))  # pyright: ignore[reportUnknownMemberType]
        if not isinstance(servers_any, Mapping):
            raise ValueError(f"{source}: expected an 'mcpServers' object mapping names to servers")
        configs: list[MCPServerConfig] = []
        for name, entry in servers_any.items():  # pyright: ignore[reportUnknownVariableType]
            if not isinstance(entry, Mapping):
                raise ValueError(f"{source}: mcpServers.{name} must be an object")
            entry_map: Mapping[str, Any] = entry  # pyright: ignore[reportUnknownVariableType]
            if entry_map.get("disabled"):
                continue
            configs.append(cls._from_entry(str(name), entry_map, source, options))  # pyright: ignore[reportUnknownArgumentType]
        return configs

    @classmethod
    def _from_entry(
        cls, name: str, entry: Mapping[str, Any], source: str, options: Mapping[str, Any]
    ) -> MCPServerConfig:
        kind = entry.get("type") or entry.get("transport")
        if kind in ("sse", "ws", "websocket"):
            raise ValueError(
                f"{source}: mcpServers.{name} uses transport {kind!r}; "
                "agentic-mcp speaks stdio and streamable HTTP"
            )
        fields: dict[str, Any] = {"name": name}
        for key in ("command", "args", "env", "cwd", "url", "headers"):
            if key in entry:
                fields[key] = entry[key]
        if "timeout" in entry and "call_timeout_s" not in options:  # milliseconds in mcp.json files
            fields["call_timeout_s"] = float(entry["timeout"]) / 1000
        fields.update(options)
        try:
            return cls(**fields)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or 'entry'}: {error['msg']}"
                for error in exc.errors()
            )
            raise ValueError(f"{source}: mcpServers.{name}: {problems}") from None

    # -- derived --------------------------------------------------------------------------------

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    @property
    def prefix(self) -> str:
        """The prefix of the tool names models see."""
        return f"{self.name}__" if self.tool_prefix is None else self.tool_prefix

    def allows(self, tool: str) -> bool:
        """Whether ``tool`` (the server's name for it) passes the allow and deny globs."""
        if self.allowed_tools is not None and not any(
            fnmatch.fnmatchcase(tool, pattern) for pattern in self.allowed_tools
        ):
            return False
        return not any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.denied_tools)

    def where(self) -> str:
        """Where the server is, safe to log: the command, or the URL without credentials
        (``agentic_core.redact_url``: a password, a token user, secret query parameters)."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return redact_url(self.url or "")
