"""Chat clients for tests: scripted replies or a function in place of a model, no network.

Both record every request in ``.calls`` and stream a reply the way a provider would: text in
several chunks, each tool call as fragments (id and name first, then its JSON arguments in
pieces), and a last update with usage and finish reason, so ``ChatResponse.from_updates`` folds
the stream back into the reply.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeAlias, TypeVar, cast

from pydantic import BaseModel

from agentic_core._errors import AgentError
from agentic_core.agents._base_client import BaseChatClient
from agentic_core.protocols._chat import (
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
    ToolCallDelta,
)
from agentic_core.protocols._messages import (
    ChatMessage,
    Content,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    UsageDetails,
)
from agentic_core.protocols._trusted import trusted

Reply: TypeAlias = ChatResponse | ChatMessage | str
"""What a test double may answer: a whole response, an assistant message, or plain text."""

ReplyFunction: TypeAlias = Callable[
    [list[ChatMessage], ChatOptions | None], Reply | Awaitable[Reply]
]
"""``FunctionChatClient``'s stand-in for a model: ``(messages, options) -> reply``, maybe async."""

RecordedCall: TypeAlias = tuple[list[ChatMessage], ChatOptions | None]
"""One request as a test double saw it: a copy of the messages list, and the options given."""

_CHARS_PER_TOKEN = 4
# json.dumps(value, default=str) without making an encoder per call (a call per tool call and
# result in every request, for the usage estimate).
_to_json = json.JSONEncoder(default=str).encode
_Model = TypeVar("_Model", bound=BaseModel)
_WORD = re.compile(r"\s+|\S+\s*")  # leading whitespace alone, then each word with what follows


class _RecordingChatClient(BaseChatClient):
    """Records each request, asks the subclass for a reply, answers whole or streamed."""

    def __init__(self, *, model: str, chunk_size: int | None) -> None:
        if chunk_size is not None and chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1 (or None for words), not {chunk_size}")
        self.model = model
        self.chunk_size = chunk_size
        self.calls: list[RecordedCall] = []

    @abstractmethod
    async def _reply(
        self, call_number: int, messages: list[ChatMessage], options: ChatOptions | None
    ) -> object:
        """The reply to the ``call_number``-th request (0-based), in any of the ``Reply`` forms."""

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        """The whole reply to ``messages``; the request is recorded in ``.calls``."""
        call_number, recorded = self._record(messages, options)
        return await self._respond(call_number, recorded, options)

    def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The reply to ``messages`` in chunks; the request is recorded in ``.calls`` at once."""
        # Recorded here, not inside the generator, so the copy and the call order are those of
        # the call even when the stream is iterated later.
        call_number, recorded = self._record(messages, options)
        return self._stream(call_number, recorded, options)

    async def _stream(
        self, call_number: int, messages: list[ChatMessage], options: ChatOptions | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        response = await self._respond(call_number, messages, options)
        for update in split_into_updates(response, self.chunk_size):
            yield update

    def _record(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None
    ) -> tuple[int, list[ChatMessage]]:
        # No await between reading and appending: concurrent calls get distinct numbers.
        recorded = list(messages)
        self.calls.append((recorded, options))
        return len(self.calls) - 1, recorded

    async def _respond(
        self, call_number: int, messages: list[ChatMessage], options: ChatOptions | None
    ) -> ChatResponse:
        reply = await self._reply(call_number, messages, options)
        model = options.model if options is not None and options.model else self.model
        return to_chat_response(reply, messages, model=model, source=self._describe(call_number))

    def _describe(self, call_number: int) -> str:
        return f"{type(self).__name__} reply to call {call_number + 1}"


class ScriptedChatClient(_RecordingChatClient):
    """A chat client that answers each request with the next reply of a script.

    A ``str`` is a plain assistant reply; a ``ChatMessage`` is the assistant message as given and
    may hold ``FunctionCallContent``s (finish reason ``TOOL_CALLS`` then); a ``ChatResponse`` is
    returned as given, with only the fields it leaves unset filled in (usage, finish reason,
    model). Usage, when not given, counts about four characters per token. ``.calls`` holds every
    request as ``(messages, options)``; one request more than the script holds raises
    ``AgentError``. Streaming splits text at whitespace (or into ``chunk_size`` characters) and
    each tool call's JSON arguments likewise.

    ```python
    client = ScriptedChatClient(
        [
            ChatMessage.assistant(
                contents=[
                    FunctionCallContent(call_id="1", name="weather", arguments={"city": "Paris"})
                ]
            ),
            "Sunny in Paris.",
        ]
    )
    agent = client.as_agent("You answer weather questions.")
    assert (await agent.run("Weather in Paris?")).text == "Sunny in Paris."
    assert len(client.calls) == 2
    ```
    """

    provider = "scripted"

    def __init__(
        self,
        responses: Sequence[Reply],
        *,
        model: str = "scripted",
        chunk_size: int | None = None,
    ) -> None:
        super().__init__(model=model, chunk_size=chunk_size)
        for position, reply in enumerate(responses, start=1):
            _check_reply_form(reply, f"ScriptedChatClient reply {position}")
        self.responses: tuple[Reply, ...] = tuple(responses)

    async def _reply(
        self, call_number: int, messages: list[ChatMessage], options: ChatOptions | None
    ) -> object:
        if call_number >= len(self.responses):
            raise AgentError(
                f"ScriptedChatClient ran out of replies: {len(self.responses)} scripted, "
                f"{call_number + 1} calls made (the last request ended with "
                f"{_describe_last_message(messages)}). Script another reply, or find out why "
                "the model was called more often than expected."
            )
        return self.responses[call_number]


class FunctionChatClient(_RecordingChatClient):
    """A chat client whose replies come from ``fn(messages, options)``, sync or async.

    ``fn`` gets a copy of the request's messages list and the options as given, and returns a
    reply in any form ``ScriptedChatClient`` accepts (``str``, ``ChatMessage``, ``ChatResponse``).
    Streaming splits the reply the same way; ``.calls`` records every request.

    ```python
    def echo(messages: list[ChatMessage], options: ChatOptions | None) -> str:
        return f"you said: {messages[-1].text}"


    client = FunctionChatClient(echo)
    assert (await client.generate([ChatMessage.user("hi")])).text == "you said: hi"
    ```
    """

    provider = "function"

    def __init__(
        self, fn: ReplyFunction, *, model: str = "function", chunk_size: int | None = None
    ) -> None:
        super().__init__(model=model, chunk_size=chunk_size)
        self.fn = fn

    async def _reply(
        self, call_number: int, messages: list[ChatMessage], options: ChatOptions | None
    ) -> object:
        reply: object = self.fn(messages, options)
        if inspect.isawaitable(reply):
            reply = await reply
        return reply


def to_chat_response(
    reply: object, messages: Sequence[ChatMessage], *, model: str, source: str
) -> ChatResponse:
    """``reply`` (str, ChatMessage or ChatResponse) as a complete ``ChatResponse``.

    A copy: the script's objects are never handed out, so a reply changed by its receiver
    changes nothing else. Fields a ``ChatResponse`` leaves unset are filled like a message's.
    """
    given: ChatResponse | None = None
    if isinstance(reply, str):
        message = ChatMessage.assistant(reply)
    elif isinstance(reply, ChatMessage):
        message = _copy_message(reply)
    elif isinstance(reply, ChatResponse):
        given = reply.model_copy(deep=True)
        message = given.message
    else:
        raise _not_a_reply(reply, source)
    inferred = ChatResponse(
        message=message,
        usage=_estimate_usage(messages, message),
        finish_reason=FinishReason.TOOL_CALLS if message.function_calls else FinishReason.STOP,
        model=model,
    )
    if given is None:
        return inferred
    unset = {"usage", "finish_reason", "model"} - given.model_fields_set
    return given.model_copy(update={name: getattr(inferred, name) for name in unset})


def split_into_updates(
    response: ChatResponse, chunk_size: int | None
) -> Iterator[ChatResponseUpdate]:
    """``response`` as a provider would stream it; ``ChatResponse.from_updates`` folds it back.

    Text first, in pieces; then each tool call: one delta with its id and name, then its JSON
    arguments in pieces; last, an update with usage, finish reason and model. Pieces are words
    with their trailing whitespace (``chunk_size=None``) or ``chunk_size`` characters.
    """
    for piece in _pieces(response.message.text, chunk_size):
        yield ChatResponseUpdate(text=piece)
    for index, call in enumerate(response.message.function_calls):
        yield ChatResponseUpdate(
            tool_call_deltas=[ToolCallDelta(index=index, call_id=call.call_id, name=call.name)]
        )
        for piece in _pieces(json.dumps(call.arguments), chunk_size):
            yield ChatResponseUpdate(tool_call_deltas=[ToolCallDelta(index=index, arguments=piece)])
    yield ChatResponseUpdate(
        usage=response.usage, finish_reason=response.finish_reason, model=response.model
    )


def _pieces(text: str, chunk_size: int | None) -> list[str]:
    if chunk_size is None:
        return _WORD.findall(text)
    return [text[start : start + chunk_size] for start in range(0, len(text), chunk_size)]


def _check_reply_form(reply: object, source: str) -> None:
    if not isinstance(reply, str | ChatMessage | ChatResponse):
        raise _not_a_reply(reply, source)


def _not_a_reply(reply: object, source: str) -> AgentError:
    return AgentError(
        f"{source} is a {type(reply).__name__}; a reply must be a str, a ChatMessage "
        "or a ChatResponse"
    )


def _copy_message(message: ChatMessage) -> ChatMessage:
    """``message.model_copy(deep=True)``, made content by content: text and the other str
    fields are immutable and shared, a call's arguments and a result are copied (with one
    ``deepcopy`` memo, so values shared inside the message stay shared in the copy) unless
    they are flat. A generic deep copy cost more than the rest of a scripted reply."""
    if type(message) is not ChatMessage or message.__pydantic_private__ is not None:
        return message.model_copy(deep=True)
    memo: dict[int, Any] = {}
    contents: list[Content] = []
    for content in message.contents:
        kind = type(content)
        if kind is TextContent:
            contents.append(_copy_model(content, {}))
        elif kind is FunctionCallContent:
            arguments = cast("FunctionCallContent", content).arguments
            contents.append(_copy_model(content, {"arguments": _copy_value(arguments, memo)}))
        elif kind is FunctionResultContent:
            result = cast("FunctionResultContent", content).result
            contents.append(_copy_model(content, {"result": _copy_value(result, memo)}))
        else:  # a subclass of a content type
            contents.append(copy.deepcopy(content, memo))
    return _copy_model(message, {"contents": contents})


def _copy_model(model: _Model, changes: dict[str, Any]) -> _Model:
    """A copy of ``model`` (no extra or private attributes) with ``changes``; its fields set
    unchanged."""
    fields = {**model.__dict__, **changes}
    return trusted(type(model), fields, set(model.__pydantic_fields_set__))


_FLAT = frozenset({str, int, float, bool, type(None)})


def _copy_value(value: object, memo: dict[int, Any]) -> object:
    """``copy.deepcopy(value, memo)``; a flat value or a dict of flat values by str keys is
    copied without the generic machinery."""
    kind = type(value)
    if kind in _FLAT:
        return value
    if kind is dict and id(value) not in memo:
        flat = cast("dict[Any, Any]", value)
        if all(type(k) is str and type(v) in _FLAT for k, v in flat.items()):
            memo[id(value)] = copied = dict(flat)
            return copied
    return copy.deepcopy(value, memo)


def _estimate_usage(messages: Sequence[ChatMessage], reply: ChatMessage) -> UsageDetails:
    """A deterministic, plausible count: about four characters per token, rounded up."""
    chars = 0
    for message in messages:
        chars += _message_chars(message)
    input_tokens = _tokens(chars)
    output_tokens = _tokens(_message_chars(reply))
    return UsageDetails(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )


def _tokens(chars: int) -> int:
    return -(-chars // _CHARS_PER_TOKEN)


def _message_chars(message: ChatMessage) -> int:
    chars = 0
    for content in message.contents:
        if isinstance(content, TextContent):
            chars += len(content.text)
        elif isinstance(content, FunctionCallContent):
            chars += len(content.name) + len(_to_json(content.arguments))
        else:
            result = content.result
            chars += len(result if isinstance(result, str) else _to_json(result))
    return chars


def _describe_last_message(messages: Sequence[ChatMessage]) -> str:
    if not messages:
        return "no message"
    last = messages[-1]
    summary = last.text or ", ".join(c.type for c in last.contents) or "no content"
    if len(summary) > 80:
        summary = summary[:77] + "..."
    return f"a {last.role.value} message: {summary!r}"
