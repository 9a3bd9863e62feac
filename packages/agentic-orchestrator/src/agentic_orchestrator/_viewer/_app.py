"""The viewer's Starlette app: two pages, their static files, the JSON API and run streams.

Routes (the browser's contract): ``GET /`` and ``GET /runs/{id}`` (pages), ``/static/...``,
``GET /api/runs``, ``POST /api/runs``, ``GET /api/workflows``, ``GET /api/runs/{id}``,
``GET /api/runs/{id}/stream`` (server-sent ``run`` events: the whole view, at connect and after
every change; closed after a finished run's last view) and ``POST /api/runs/{id}/responses``.
Errors are JSON ``{"error": "..."}`` with the status each ``ViewerError`` carries; anything
unexpected is a bare 500 (details go to the log, never to the client). Mounted under a path
(``root_path``, as ``agentic serve --ui`` mounts it at ``/ui``), the pages' links and the
script's requests go under that path.

Hosts, origins, JSON-only writes, body size and the token are checked before this app runs,
by the ``ServerGuard`` that ``RunViewer.app`` wraps it in.
"""

from __future__ import annotations

import html
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import structlog
from sse_starlette import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from agentic_core import AgenticError
from agentic_orchestrator._viewer._errors import SourceError, ViewerError

if TYPE_CHECKING:
    from agentic_orchestrator._viewer._run_viewer import RunViewer

__all__ = ["STATIC_DIR", "create_app"]

STATIC_DIR = Path(__file__).parent / "static"
PING_S = 15
"""A comment line this often keeps a quiet stream open through proxies."""

_log = structlog.get_logger("agentic_orchestrator.viewer")


def _error(message: str, status_code: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status_code)


async def _viewer_error(_: Request, exc: Exception) -> Response:
    status = exc.status_code if isinstance(exc, ViewerError) else 500
    return _error(str(exc), status)


async def _agentic_error(_: Request, exc: Exception) -> Response:
    _log.warning("viewer.request_failed", error=f"{type(exc).__name__}: {exc}")
    return _error(f"{type(exc).__name__}: {exc}", 500)


async def _http_error(_: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, wrong method) as JSON too."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    detail = exc.detail if isinstance(exc, HTTPException) else "error"
    headers = exc.headers if isinstance(exc, HTTPException) else None
    return JSONResponse({"error": detail}, status_code=status, headers=headers)


async def _unexpected_error(_: Request, exc: Exception) -> Response:
    # Starlette logs the traceback and re-raises to the server; the client learns nothing of it.
    del exc
    return _error("internal error: see the viewer's log", 500)


async def _json_body(request: Request) -> dict[str, Any]:
    try:
        body: Any = json.loads(await request.body() or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ViewerError(f"the request body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise ViewerError("the request body must be a JSON object")
    return cast("dict[str, Any]", body)


def _page(request: Request, name: str) -> Response:
    """A page as it is, or, for a viewer mounted under a path (``root_path``, e.g. ``/ui`` in
    ``agentic serve --ui``), with its links under that path and the path on ``<body data-base>``
    for the script's requests."""
    root = str(request.scope.get("root_path", "")).rstrip("/")
    if not root:
        return FileResponse(STATIC_DIR / name)
    base = html.escape(root, quote=True)
    text = (STATIC_DIR / name).read_text(encoding="utf-8")
    text = text.replace('href="/', f'href="{base}/').replace('src="/', f'src="{base}/')
    return HTMLResponse(text.replace("<body ", f'<body data-base="{base}" ', 1))


def create_app(viewer: RunViewer) -> Starlette:
    """The ASGI app serving ``viewer``."""

    async def index(request: Request) -> Response:
        return _page(request, "index.html")

    async def run_page(request: Request) -> Response:
        return _page(request, "run.html")

    async def list_runs(_: Request) -> Response:
        return Response((await viewer.list_runs()).model_dump_json(), media_type="application/json")

    async def list_workflows(_: Request) -> Response:
        return Response(viewer.workflow_list().model_dump_json(), media_type="application/json")

    async def start_run(request: Request) -> Response:
        body = await _json_body(request)
        if "message" not in body:
            raise ViewerError('give the run\'s input: {"message": ..., "workflow": "<name>"}')
        name = body.get("workflow")
        if name is not None and not isinstance(name, str):
            raise ViewerError("workflow must be a workflow's name (a string)")
        run_id = await viewer.start(body["message"], workflow=name)
        return JSONResponse({"run_id": run_id}, status_code=201)

    async def get_run(request: Request) -> Response:
        view = await viewer.get_run(request.path_params["run_id"])
        return Response(view.model_dump_json(), media_type="application/json")

    async def stream_run(request: Request) -> Response:
        run_id: str = request.path_params["run_id"]
        await viewer.get_run(run_id)  # unknown: 404 now, not an empty stream

        async def events() -> AsyncIterator[ServerSentEvent]:
            try:
                async for view in viewer.snapshots(run_id):
                    yield ServerSentEvent(data=view.model_dump_json(), event="run")
            except SourceError as exc:
                yield ServerSentEvent(data=json.dumps({"error": str(exc)}), event="error")

        return EventSourceResponse(events(), ping=PING_S)

    async def answer(request: Request) -> Response:
        run_id: str = request.path_params["run_id"]
        body = await _json_body(request)
        responses: Any = body.get("responses")
        if not isinstance(responses, dict) or not responses:
            raise ViewerError('give the answers: {"responses": {"<request_id>": <value>}}')
        await viewer.answer(run_id, cast("dict[str, Any]", responses))
        return JSONResponse({"run_id": run_id}, status_code=202)

    routes = [
        Route("/", index),
        Route("/runs/{run_id}", run_page),
        Route("/api/runs", list_runs, methods=["GET"]),
        Route("/api/runs", start_run, methods=["POST"]),
        Route("/api/workflows", list_workflows),
        Route("/api/runs/{run_id}", get_run),
        Route("/api/runs/{run_id}/stream", stream_run),
        Route("/api/runs/{run_id}/responses", answer, methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    return Starlette(
        routes=routes,
        exception_handlers={
            ViewerError: _viewer_error,
            AgenticError: _agentic_error,
            HTTPException: _http_error,
            Exception: _unexpected_error,
        },
    )
