"""The llama.cpp side of LocalChatClient, on xllamacpp (llama.cpp and its server, a prebuilt
wheel). Importing this module imports ``xllamacpp`` (and loads llama.cpp's shared library), so
``_client`` imports it only when a model is first loaded. No other module imports xllamacpp,
which ships no type information: its surface is typed here, once (``_Server``, ``_start``).
"""

from __future__ import annotations

import os
import queue
import secrets
import shutil
import tempfile
import threading
import uuid
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, Protocol, cast

import xllamacpp  # pyright: ignore[reportMissingTypeStubs] - typed by _XLlamaCpp, _Server

from agentic_llm._json import JSONObject, as_list, as_object

# What LocalChatClient has always sampled with when a request leaves them unset (they were
# llama-cpp-python's defaults); llama.cpp's server would otherwise sample at temperature 0.8.
_SAMPLING: Final = {"temp": 0.2, "top_p": 0.95, "top_k": 40, "min_p": 0.05, "penalty_repeat": 1.0}
_GGUF_MAGIC: Final = b"GGUF"
_CONTEXT_ERROR: Final = "exceed_context_size_error"
_CHAT_TEMPLATE_PROBE: Final[JSONObject] = {
    "messages": [{"role": "user", "content": "Hi"}],
    "max_tokens": 1,
}


class _XLlamaCpp(Protocol):
    """The part of the ``xllamacpp`` module used here (its parameters object is untyped)."""

    def CommonParams(self) -> Any: ...  # noqa: N802 - xllamacpp's name

    def Server(self, params: Any, /) -> _Server: ...  # noqa: N802 - xllamacpp's name


class _Server(Protocol):
    """The part of ``xllamacpp.Server`` used here: llama.cpp's server routes, called in-process
    (request and reply are OpenAI-shaped dicts; a streamed reply goes to ``callback`` chunk by
    chunk until it returns True). Errors come back as ``{"error": {...}}`` or raise."""

    @property
    def listening_address(self) -> str: ...

    def handle_metrics(self) -> str: ...

    def handle_chat_completions(
        self, prompt: JSONObject, callback: Callable[[JSONObject], bool] | None = None, /
    ) -> JSONObject | None: ...


class LlamaEngine:
    """One GGUF model run in this process by llama.cpp's server code (``xllamacpp.Server``),
    called as ``create_chat_completion(**openai_request)`` like llama-cpp-python's ``Llama``:
    a reply dict, or (``stream=True``) an iterator of chunk dicts whose ``close()`` stops the
    generation. ``prompt_tokens``/``completion_tokens`` are the current request's usage (set by
    ``reset_usage``): llama.cpp's own numbers once a reply is complete; a stream left early
    counts its pieces.

    llama.cpp ignores a ``tool_choice`` naming a function (it knows ``"auto"``, ``"none"`` and
    ``"required"``): here the reply is then constrained to that function's parameter schema
    and returned as its tool call (streamed as argument fragments), as llama-cpp-python did.

    llama.cpp's server also serves HTTP; it listens on a Unix socket in a private temporary
    directory (loopback on Windows) and wants a random API key nobody knows.
    """

    def __init__(
        self,
        path: Path,
        *,
        n_ctx: int,
        n_threads: int | None,
        chat_format: str | None,
        seed: int | None,
    ) -> None:
        _check_gguf(path)
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.jinja = chat_format is None or _is_jinja(chat_format)
        """Whether the chat template is Jinja (the GGUF file's, or ``chat_format`` as a Jinja
        template); a built-in template name uses llama.cpp's legacy formatter, which takes no
        tools (they are dropped from requests)."""
        socket_dir = _private_dir()
        self._remove_socket_dir = weakref.finalize(
            self, shutil.rmtree, socket_dir or "", ignore_errors=True
        )
        if socket_dir is None:
            self._remove_socket_dir.detach()
        try:
            server = _start(
                path,
                n_ctx=n_ctx,
                n_threads=n_threads,
                chat_template=chat_format,
                jinja=self.jinja,
                seed=seed,
                http_host=str(Path(socket_dir) / "http.sock") if socket_dir else "127.0.0.1",
            )
        except RuntimeError as exc:  # xllamacpp says only "Failed to init server"
            self._remove_socket_dir()
            raise ValueError(
                f"llama.cpp could not load {path.name} ({exc}): is it a GGUF model llama.cpp "
                f"supports, and does a {n_ctx}-token context fit in memory?"
            ) from exc
        # The server's task loop starts after the constructor returns, and a server dropped
        # before it has started never stops (its destructor waits forever): a metrics request
        # is answered by that loop, so once it returns the server can be dropped any time.
        server.handle_metrics()
        self._server: _Server | None = server
        if chat_format is not None and not self.jinja:
            self._check_chat_template(chat_format)

    @property
    def http_address(self) -> str:
        """Where llama.cpp's HTTP server listens (``unix://...`` on POSIX)."""
        return self._live().listening_address

    def reset_usage(self) -> None:
        """Start counting a new request."""
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def create_chat_completion(self, **body: Any) -> Any:
        """An OpenAI Chat Completions request: the reply (a dict), or with ``stream`` an
        iterator of chunks. Raises ``ValueError`` for a request llama.cpp refuses (the message
        says "context window" when it is too long), ``RuntimeError`` for other failures."""
        request, tool = self._prepared(body)
        if not request.get("stream"):
            reply = _checked(self._live().handle_chat_completions(request))
            self._count(as_object(reply.get("usage")))
            return _as_tool_call(reply, tool) if tool is not None else reply
        request["stream_options"] = {"include_usage": True}
        return self._stream(request, tool)

    def close(self) -> None:
        """Free the model (llama.cpp's server stops when its last reference goes)."""
        self._server = None
        self._remove_socket_dir()

    # -- internals ------------------------------------------------------------------------------

    def _live(self) -> _Server:
        if self._server is None:
            raise RuntimeError("the model was closed")
        return self._server

    def _prepared(self, body: JSONObject) -> tuple[JSONObject, str | None]:
        """``body`` as llama.cpp takes it, and the function a named ``tool_choice`` forces."""
        request = {key: value for key, value in body.items() if key != "model"}
        choice = request.get("tool_choice")
        if isinstance(choice, dict):
            name = str(as_object(as_object(choice).get("function")).get("name", ""))
            return _forced_call_request(request, name), name
        if not self.jinja:
            request.pop("tools", None)
            request.pop("tool_choice", None)
        return request, None

    def _stream(self, request: JSONObject, tool: str | None) -> Iterator[JSONObject]:
        """The streamed chunks. llama.cpp produces them in a helper thread, which this
        generator's ``close()`` stops: the next chunk's callback answers "stop"."""
        chunks: queue.SimpleQueue[JSONObject | BaseException | None] = queue.SimpleQueue()
        stop = threading.Event()
        server = self._live()

        def on_chunk(chunk: JSONObject) -> bool:
            chunks.put(chunk)
            return stop.is_set()

        def produce() -> None:
            try:
                server.handle_chat_completions(request, on_chunk)
            except BaseException as exc:  # noqa: BLE001 - handed to the reader, raised there
                chunks.put(exc)
            finally:
                chunks.put(None)

        producer = threading.Thread(target=produce, name="llama.cpp-stream", daemon=True)
        producer.start()
        call = _ForcedCallChunks(tool) if tool is not None else None
        try:
            while (item := chunks.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                chunk = _checked(item)
                usage = as_object(chunk.get("usage"))
                if usage:
                    self.reset_usage()
                    self._count(usage)
                if not as_list(chunk.get("choices")):
                    continue  # the usage chunk
                if not usage and _has_content(chunk):
                    self.completion_tokens += 1  # exact numbers come with the last chunk
                yield call.rewrite(chunk) if call is not None else chunk
        finally:
            stop.set()
            producer.join()

    def _count(self, usage: JSONObject) -> None:
        self.prompt_tokens += int(usage.get("prompt_tokens") or 0)
        self.completion_tokens += int(usage.get("completion_tokens") or 0)

    def _check_chat_template(self, name: str) -> None:
        """A name llama.cpp's legacy formatter does not know fails every request: say so now."""
        try:
            _checked(self._live().handle_chat_completions(dict(_CHAT_TEMPLATE_PROBE)))
        except (ValueError, RuntimeError) as exc:
            self.close()
            raise ValueError(
                f"chat_format {name!r} is neither one of llama.cpp's built-in chat templates "
                f"nor a Jinja template ({exc})"
            ) from exc


def _start(
    path: Path,
    *,
    n_ctx: int,
    n_threads: int | None,
    chat_template: str | None,
    jinja: bool,
    seed: int | None,
    http_host: str,
) -> _Server:
    """llama.cpp's server on the model at ``path``, quiet (no logs on stderr)."""
    xl = cast("_XLlamaCpp", xllamacpp)
    params = xl.CommonParams()
    params.model.path = str(path)
    params.n_ctx = n_ctx
    params.n_parallel = 1  # one sequence: the client runs one request at a time
    params.verbosity = -1
    params.warmup = False
    params.cache_ram_mib = 0  # no host-memory prompt cache (the slot keeps the last prompt)
    cpus = os.cpu_count() or 1
    params.cpuparams.n_threads = n_threads or max(cpus // 2, 1)
    params.cpuparams_batch.n_threads = cpus  # prompt processing: every core
    params.use_jinja = jinja
    if chat_template is not None:
        params.chat_template = chat_template
    for name, value in _SAMPLING.items():
        setattr(params.sampling, name, value)
    if seed is not None:
        params.sampling.seed = seed
    # The HTTP side, which the client never uses: private socket, unknown key, one thread.
    params.hostnames = [http_host]
    params.api_keys = [secrets.token_urlsafe(32)]
    params.n_threads_http = 1
    params.ui = False
    params.endpoint_slots = False
    params.endpoint_props = False
    params.endpoint_metrics = True  # see LlamaEngine.__init__ (over HTTP, the key is wanted)
    return xl.Server(params)


def _private_dir() -> str | None:
    """A directory only this user can enter, for the HTTP server's Unix socket (None on
    Windows: the server then listens on 127.0.0.1)."""
    if os.name != "posix":
        return None
    return tempfile.mkdtemp(prefix="agentic-llm-")


def _check_gguf(path: Path) -> None:
    """llama.cpp's server reports a file it cannot load only as "Failed to init server"."""
    with path.open("rb") as file:
        magic = file.read(len(_GGUF_MAGIC))
    if magic != _GGUF_MAGIC:
        raise ValueError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")


def _is_jinja(chat_format: str) -> bool:
    return "{{" in chat_format or "{%" in chat_format


def _checked(reply: JSONObject | None) -> JSONObject:
    """``reply``, or the error it carries raised: ``ValueError`` for the request's fault."""
    if reply is None:
        raise RuntimeError("llama.cpp sent no reply")
    if "error" in reply:
        error = as_object(reply["error"]) or {"message": str(reply["error"])}
    elif "choices" not in reply and "message" in reply:
        error = reply  # xllamacpp's own {"code", "type", "message"}
    else:
        return reply
    message = str(error.get("message") or error)
    if error.get("type") == _CONTEXT_ERROR:
        raise ValueError(f"the request does not fit the context window: {message}")
    if error.get("type") == "invalid_request_error" or error.get("code") == 400:
        raise ValueError(message)
    raise RuntimeError(message)


def _forced_call_request(request: JSONObject, name: str) -> JSONObject:
    """``request`` with its reply constrained to the arguments of the tool ``name``."""
    tools = [as_object(as_object(tool).get("function")) for tool in as_list(request.get("tools"))]
    function = next((tool for tool in tools if tool.get("name") == name), None)
    if function is None:
        offered = ", ".join(str(tool.get("name")) for tool in tools) or "none"
        raise ValueError(f"tool_choice names {name!r}, which is not an offered tool ({offered})")
    schema = as_object(function.get("parameters")) or {"type": "object", "properties": {}}
    forced = {
        key: value
        for key, value in request.items()
        if key not in ("tools", "tool_choice", "parallel_tool_calls")
    }
    forced["response_format"] = {"type": "json_object", "schema": schema}
    return forced


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def _as_tool_call(reply: JSONObject, name: str) -> JSONObject:
    """A reply whose text is the arguments of ``name`` as that tool call (OpenAI's shape)."""
    for choice in (as_object(c) for c in as_list(reply.get("choices"))):
        message = as_object(choice.get("message"))
        call = {
            "id": _new_call_id(),
            "type": "function",
            "function": {"name": name, "arguments": str(message.get("content") or "")},
        }
        choice["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
        if choice.get("finish_reason") == "stop":
            choice["finish_reason"] = "tool_calls"
    return reply


def _has_content(chunk: JSONObject) -> bool:
    delta = as_object(as_object(as_list(chunk.get("choices"))[0]).get("delta"))
    return bool(delta.get("content"))


class _ForcedCallChunks:
    """Streamed arguments of a forced call as tool-call fragments (id and name on the first)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._call_id = _new_call_id()
        self._started = False

    def rewrite(self, chunk: JSONObject) -> JSONObject:
        for choice in (as_object(c) for c in as_list(chunk.get("choices"))):
            delta = as_object(choice.get("delta"))
            arguments = str(delta.pop("content", None) or "")
            if arguments:
                fragment: JSONObject = {"index": 0, "function": {"arguments": arguments}}
                if not self._started:
                    self._started = True
                    fragment = {
                        "index": 0,
                        "id": self._call_id,
                        "type": "function",
                        "function": {"name": self._name, "arguments": arguments},
                    }
                delta["tool_calls"] = [fragment]
            if choice.get("finish_reason") == "stop":
                choice["finish_reason"] = "tool_calls"
        return chunk


def load_model(
    path: Path, *, n_ctx: int, n_threads: int | None, chat_format: str | None, seed: int | None
) -> LlamaEngine:
    """The model at ``path``. Raises ``ValueError`` for a file llama.cpp cannot load (or a
    ``chat_format`` it does not know), ``OSError`` for one it cannot read."""
    return LlamaEngine(path, n_ctx=n_ctx, n_threads=n_threads, chat_format=chat_format, seed=seed)
