"""The remote-agent wire protocol: what ``ProxyAgent`` and ``serve_agent`` say to each other.

Every message is one pydantic model as JSON on ``agentic.agent.{id}.{kind}``:

- ``run`` (request/reply): ``AgentRunRequest`` in, ``RunReply`` or ``ErrorReply`` back.
- ``stream`` (request/reply, then frames): ``AgentRunRequest`` with ``reply_to`` set; the server
  acknowledges with ``StreamAccepted`` (or ``ErrorReply``), then publishes ``UpdateFrame``s
  numbered from 0 to ``reply_to``, then one ``DoneFrame`` or ``ErrorFrame``.
- ``thread`` (request/reply): ``ThreadRequest`` to read or extend a served thread's history;
  ``ThreadReply`` or ``ErrorReply`` back.
- ``cancel`` (publish, every server): ``CancelRequest``; whoever runs that request stops it.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from agentic_core import AgentError, AgentResponse, AgentResponseUpdate, ChatMessage

__all__ = [
    "AGENT_PROTOCOL_VERSION",
    "MALFORMED_REQUEST",
    "SERVER_CLOSED",
    "UNSUPPORTED_VERSION",
    "AgentReply",
    "AgentRunRequest",
    "CancelRequest",
    "DoneFrame",
    "ErrorFrame",
    "ErrorReply",
    "RemoteAgentError",
    "RemoteChatOptions",
    "RemoteErrorInfo",
    "RunReply",
    "StreamAccepted",
    "StreamFrame",
    "ThreadReply",
    "ThreadRequest",
    "UpdateFrame",
    "error_info",
    "parse_reply",
    "parse_stream_frame",
]

AGENT_PROTOCOL_VERSION = 1
"""The version of this protocol; a server answers a newer one with an error reply."""

MALFORMED_REQUEST = "MalformedRequest"
"""``RemoteErrorInfo.type`` of a request the server could not read (the message says why)."""
UNSUPPORTED_VERSION = "UnsupportedProtocolVersion"
"""``RemoteErrorInfo.type`` of a request of a newer protocol version."""
SERVER_CLOSED = "AgentServerClosed"
"""``RemoteErrorInfo.type`` of a request cut short because its server shut down."""

_MAX_ERROR_MESSAGE = 4_000
_RESERVED_KEYWORDS = frozenset(
    {"thread", "options", "response_format", "background", "continuation_token"}
)
"""Keywords with a field of their own, or that cannot cross the bus (a class, a local run)."""


def _new_request_id() -> str:
    return uuid.uuid4().hex


class RemoteErrorInfo(BaseModel):
    """An error as it crosses the wire: the exception's class name and its message."""

    type: str
    message: str


class RemoteChatOptions(BaseModel):
    """The JSON-able part of ``ChatOptions`` (tools and ``response_format`` stay served)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    tool_choice: str | None = None
    stop: list[str] | None = None
    seed: int | None = None


class AgentRunRequest(BaseModel):
    """A ``run`` or ``stream`` request: the input, the thread and the JSON-able keywords."""

    version: int = AGENT_PROTOCOL_VERSION
    request_id: str = Field(default_factory=_new_request_id, min_length=1, max_length=128)
    agent_id: str
    """The full agent id (subjects carry an escaped token of it)."""
    messages: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    thread_id: str | None = Field(default=None, min_length=1, max_length=512)
    """The served thread to run in; None runs in a fresh thread nobody keeps."""
    thread_metadata: dict[str, Any] = Field(default_factory=dict[str, Any])
    """The caller's thread metadata (``user_id`` for memory providers), laid over the stored."""
    history: list[ChatMessage] | None = None
    """A caller-kept thread's whole conversation: it replaces the served history first."""
    options: RemoteChatOptions | None = None
    kwargs: dict[str, Any] = Field(default_factory=dict[str, Any])
    """Further keywords for ``agent.run``/``run_stream``, JSON values only."""
    reply_to: str | None = None
    """``stream`` only: the subject the frames go to."""

    @field_validator("kwargs")
    @classmethod
    def _no_reserved_keywords(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        reserved = sorted(_RESERVED_KEYWORDS & kwargs.keys())
        if reserved:
            raise ValueError(f"keywords {reserved} cannot be sent as kwargs")
        return kwargs


class ThreadRequest(BaseModel):
    """Read (``list``) or change (``add``, ``replace``) a served thread's history."""

    version: int = AGENT_PROTOCOL_VERSION
    agent_id: str
    thread_id: str = Field(min_length=1, max_length=512)
    op: Literal["list", "add", "replace"]
    messages: list[ChatMessage] = Field(default_factory=list[ChatMessage])


class CancelRequest(BaseModel):
    """Stop the request ``request_id`` (its caller gave up on it)."""

    request_id: str


class RunReply(BaseModel):
    """The answer to a ``run`` request."""

    kind: Literal["response"] = "response"
    response: AgentResponse
    thread_metadata: dict[str, Any] | None = None
    """The thread's metadata after the run (None without a thread)."""


class StreamAccepted(BaseModel):
    """A ``stream`` request was taken: its frames follow on ``reply_to``."""

    kind: Literal["accepted"] = "accepted"
    request_id: str


class ThreadReply(BaseModel):
    """The answer to a ``thread`` request: the history (for ``list``; empty otherwise)."""

    kind: Literal["thread"] = "thread"
    messages: list[ChatMessage] = Field(default_factory=list[ChatMessage])


class ErrorReply(BaseModel):
    """A request failed: the agent raised, or the request was malformed."""

    kind: Literal["error"] = "error"
    error: RemoteErrorInfo


AgentReply = Annotated[
    RunReply | StreamAccepted | ThreadReply | ErrorReply, Field(discriminator="kind")
]
"""Any reply a server sends on a request's reply subject."""


class UpdateFrame(BaseModel):
    """One streaming update; ``seq`` counts the frames of a stream from 0."""

    kind: Literal["update"] = "update"
    seq: int
    update: AgentResponseUpdate


class DoneFrame(BaseModel):
    """The stream ended well; nothing follows."""

    kind: Literal["done"] = "done"
    seq: int
    thread_metadata: dict[str, Any] | None = None


class ErrorFrame(BaseModel):
    """The stream failed; nothing follows."""

    kind: Literal["error"] = "error"
    seq: int
    error: RemoteErrorInfo


StreamFrame = Annotated[UpdateFrame | DoneFrame | ErrorFrame, Field(discriminator="kind")]
"""Any frame a server publishes to a stream's ``reply_to``."""

_REPLY: TypeAdapter[AgentReply] = TypeAdapter(AgentReply)
_FRAME: TypeAdapter[StreamFrame] = TypeAdapter(StreamFrame)


def parse_reply(data: bytes) -> AgentReply:
    """A server's reply (``ValidationError`` if it is not one)."""
    return _REPLY.validate_json(data)


def parse_stream_frame(data: bytes) -> StreamFrame:
    """A stream frame (``ValidationError`` if it is not one)."""
    return _FRAME.validate_json(data)


def error_info(exc: BaseException) -> RemoteErrorInfo:
    """``exc`` for the wire: its class name and its message (cut to a few thousand characters)."""
    message = str(exc)
    if len(message) > _MAX_ERROR_MESSAGE:
        message = message[:_MAX_ERROR_MESSAGE] + " [...]"
    return RemoteErrorInfo(type=type(exc).__name__, message=message)


class RemoteAgentError(AgentError):
    """A remote agent's run failed; ``remote_type`` and ``remote_message`` say how.

    ``remote_type`` is the class name of the exception raised in the serving process (or
    ``"MalformedRequest"`` when the server could not read the request).

    Example:
        ```python
        agent = ProxyAgent("researcher", bus)
        try:
            await agent.run("find the paper")
        except RemoteAgentError as exc:
            print(exc.agent_id, exc.remote_type, exc.remote_message)
        ```
    """

    def __init__(self, agent_id: str, remote_type: str, remote_message: str) -> None:
        super().__init__(f"remote agent {agent_id!r} failed: {remote_type}: {remote_message}")
        self.agent_id = agent_id
        self.remote_type = remote_type
        self.remote_message = remote_message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.agent_id, self.remote_type, self.remote_message))
