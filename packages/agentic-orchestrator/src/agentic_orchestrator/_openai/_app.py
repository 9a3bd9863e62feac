"""The endpoint's ASGI app: Starlette routes behind ``ServerGuard``, errors in OpenAI's shape.

Routes: ``GET /v1/models``, ``GET /v1/models/{model}``, ``POST /v1/chat/completions``. Every
error body is OpenAI's ``{"error": {"message", "type", "param", "code"}}``, the guard's
refusals (421 foreign host, 401 token, 413 body, 415 not JSON) included, so an OpenAI client
raises its usual exceptions (``AuthenticationError``, ``NotFoundError``, ...).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Mapping, Sequence
from typing import Any

import structlog

from agentic_core import ServerGuard
from agentic_orchestrator._errors import OrchestrationConfigError
from agentic_orchestrator._openai._models import RunSlots, ServedModel, Target, served_models
from agentic_orchestrator._openai._wire import (
    EndpointError,
    error_body,
    model_list,
    now,
    parse_request,
    to_chat_messages,
)

__all__ = ["OpenAIApp", "create_openai_app"]

Scope = Any
Receive = Any
Send = Any

_log = structlog.get_logger("agentic_orchestrator.openai")

_GUARD_TYPES = {
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "forbidden"),
    413: ("invalid_request_error", "request_too_large"),
    415: ("invalid_request_error", "unsupported_media_type"),
    421: ("invalid_request_error", "misdirected_request"),
}


class OpenAIApp:
    """The ASGI app ``create_openai_app`` returns: the guarded endpoint.

    ``check_bind(host)`` refuses serving beyond loopback without a token; ``models`` holds the
    served targets by model name.
    """

    def __init__(self, models: dict[str, ServedModel], guard: ServerGuard, slots: RunSlots) -> None:
        self.models = models
        self.guard = guard
        self.slots = slots

    def __repr__(self) -> str:
        return f"OpenAIApp(models={list(self.models)}, guard={self.guard!r})"

    def check_bind(self, host: str) -> None:
        """Raise ``ServerGuardError`` when serving on ``host`` would need a token it has not."""
        self.guard.check_bind(host, option="create_openai_app(token=...)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.guard(scope, receive, send)
            return
        await self.guard(scope, receive, _openai_shaped(send))


def create_openai_app(
    targets: Mapping[str, Target] | Sequence[Target],
    *,
    token: str | None = None,
    allowed_hosts: Sequence[str] = (),
    max_body_bytes: int = ServerGuard.DEFAULT_MAX_BODY_BYTES,
    max_concurrent_runs: int = 8,
    run_timeout_s: float = 300.0,
) -> OpenAIApp:
    """An OpenAI-compatible ASGI app serving agents and workflows as "models".

    ``targets``: core ``Agent``s and ``Workflow``s, as a mapping model name -> target or a
    sequence named by their ``name``. A workflow answers as ``workflow.as_agent()`` does (its
    start executor takes the conversation as ``list[ChatMessage]``). Routes: ``GET /v1/models``
    and ``POST /v1/chat/completions`` (plain, or ``stream: true`` as server-sent
    ``chat.completion.chunk`` events ending with ``data: [DONE]``;
    ``stream_options.include_usage`` adds the usage chunk).

    The request's messages are the agent's input; the agent runs its own tools, so a request
    carrying ``tools`` is refused (400); sampling options are ignored. ``usage`` is filled when
    the agent's client reports it. A run that waits for a person (a tool approval, a workflow's
    ``request_info``) is answered with a 409 ``input_required`` error.

    Safety: guarded by ``ServerGuard`` (loopback and ``allowed_hosts`` only, JSON posts,
    ``max_body_bytes``; with ``token`` every request needs ``Authorization: Bearer <token>``,
    which OpenAI clients send as their ``api_key``); at most ``max_concurrent_runs`` runs at
    once (429 beyond); each run bounded by ``run_timeout_s`` (504, or an error event in a
    stream); a client that disconnects cancels the run it started.

    Example:
        ```python
        app = create_openai_app([agent], token=secret)
        uvicorn.run(app, host="127.0.0.1", port=8000)  # or: await serve_openai(...)
        # OpenAI(base_url="http://127.0.0.1:8000/v1", api_key=secret)
        ```
    """
    if importlib.util.find_spec("starlette") is None:
        raise OrchestrationConfigError(
            "the OpenAI endpoint needs Starlette: pip install 'agentic-orchestrator[viewer]'"
        )
    models = served_models(targets)
    slots = RunSlots(max_concurrent_runs)
    if run_timeout_s <= 0:
        raise OrchestrationConfigError(f"run_timeout_s must be positive, got {run_timeout_s}")
    routes = _starlette(models, slots, run_timeout_s)
    guard = ServerGuard(
        routes, allowed_hosts=allowed_hosts, token=token, max_body_bytes=max_body_bytes
    )
    return OpenAIApp(models, guard, slots)


def _starlette(models: dict[str, ServedModel], slots: RunSlots, timeout_s: float) -> Any:
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from agentic_orchestrator._openai._responses import CompletionResponse, error_response

    created = now()

    def model_of(name: str) -> ServedModel:
        model = models.get(name)
        if model is None:
            raise EndpointError(
                404,
                f"the model {name!r} does not exist: this server serves "
                f"{', '.join(map(repr, models))}",
                code="model_not_found",
            )
        return model

    async def list_models(_: Request) -> Response:
        return JSONResponse(model_list(list(models), created))

    async def get_model(request: Request) -> Response:
        name: str = request.path_params["model"]
        model_of(name)
        return JSONResponse(model_list([name], created)["data"][0])

    async def chat_completions(request: Request) -> Response:
        body = parse_request(await request.body())
        model = model_of(body.model)
        messages = to_chat_messages(body.messages)
        return CompletionResponse(model, body, messages, slots=slots, timeout_s=timeout_s)

    async def endpoint_error(_: Request, exc: Exception) -> Response:
        if not isinstance(exc, EndpointError):
            return await unexpected_error(_, exc)
        return error_response(exc)

    async def http_error(_: Request, exc: Exception) -> Response:
        if not isinstance(exc, HTTPException):
            return await unexpected_error(_, exc)
        code = "not_found" if exc.status_code == 404 else None
        body = error_body(str(exc.detail), type="invalid_request_error", code=code)
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)

    async def unexpected_error(_: Request, exc: Exception) -> Response:
        del exc  # Starlette logs it; the client learns nothing of it
        body = error_body("internal error: see the server's log", type="server_error", code=None)
        return JSONResponse(body, status_code=500)

    return Starlette(
        routes=[
            Route("/v1/models", list_models, methods=["GET"]),
            Route("/v1/models/{model:path}", get_model, methods=["GET"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        ],
        exception_handlers={
            EndpointError: endpoint_error,
            HTTPException: http_error,
            Exception: unexpected_error,
        },
    )


def _openai_shaped(send: Send) -> Send:
    """``send`` rewriting the guard's refusals (``{"error": "<text>"}``) into OpenAI's shape;
    anything else passes as it is."""
    held: dict[str, Any] = {}

    async def shaped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start" and message["status"] in _GUARD_TYPES:
            held["start"] = message
            return
        start = held.pop("start", None)
        if start is None:
            await send(message)
            return
        body = _reshaped(start["status"], message.get("body", b""))
        headers = [
            (name, str(len(body)).encode() if name == b"content-length" else value)
            for name, value in start["headers"]
        ]
        await send({**start, "headers": headers})
        await send({**message, "body": body})

    return shaped


def _reshaped(status: int, body: bytes) -> bytes:
    try:
        data: Any = json.loads(body)
    except ValueError:
        return body
    if not isinstance(data, dict) or not isinstance(data.get("error"), str):  # pyright: ignore[reportUnknownMemberType]
        return body  # already OpenAI's shape (the app's own errors)
    kind, code = _GUARD_TYPES[status]
    return json.dumps(error_body(str(data["error"]), type=kind, code=code)).encode()  # pyright: ignore[reportUnknownArgumentType]
