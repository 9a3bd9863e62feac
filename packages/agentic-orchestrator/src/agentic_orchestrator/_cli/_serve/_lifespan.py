"""Running a mounted ASGI app's lifespan: its startup before serving, its shutdown after.

A server runs the lifespan of the one app it serves; an app mounted inside another would never
see its own (the MCP app's session manager lives in it). ``running_lifespan`` speaks the ASGI
lifespan protocol to such an app, as uvicorn does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping
from typing import Any

import structlog

from agentic_orchestrator._cli._errors import CLIError

__all__ = ["ASGIApp", "LifespanError", "running_lifespan"]

Message = MutableMapping[str, Any]
ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[Message]],
        Callable[[Message], Awaitable[None]],
    ],
    Awaitable[None],
]

SHUTDOWN_GRACE_S = 5.0
"""How long an app's shutdown may take before its lifespan task is cancelled."""

_log = structlog.get_logger("agentic_orchestrator.serve")


class LifespanError(CLIError):
    """A mounted app failed to start (its lifespan reported ``lifespan.startup.failed``)."""


@contextlib.asynccontextmanager
async def running_lifespan(
    app: ASGIApp, name: str, state: MutableMapping[str, Any] | None = None
) -> AsyncGenerator[None]:
    """``app`` started (``lifespan.startup`` answered) for the block, shut down after it.

    An app that ends (or raises) without answering the startup message does not speak the
    lifespan protocol: it is served without one, as uvicorn's ``lifespan="auto"`` does.
    ``state`` is the server's lifespan state, shared with the app.

    Raises:
        LifespanError: the app reported ``lifespan.startup.failed``.
    """
    inbox: asyncio.Queue[Message] = asyncio.Queue()
    outbox: asyncio.Queue[Message] = asyncio.Queue()
    scope: dict[str, Any] = {
        "type": "lifespan",
        "asgi": {"version": "3.0", "spec_version": "2.0"},
        "state": state if state is not None else {},
    }
    task = asyncio.create_task(_run(app, scope, inbox, outbox), name=f"lifespan-{name}")
    await inbox.put({"type": "lifespan.startup"})
    answer = await _answer(task, outbox)
    if answer is None:
        # Ended, or raised, without a word: the app does not speak the lifespan protocol (as
        # uvicorn's "auto" judges it); it is served without one.
        error = None if task.cancelled() else task.exception()
        _log.debug("serve.no_lifespan", app=name, error=None if error is None else repr(error))
        yield
        return
    if answer["type"] == "lifespan.startup.failed":
        await _finish(task)
        # Starlette sends the whole traceback: its last line says what failed.
        lines = str(answer.get("message") or "").strip().splitlines() or ["no reason given"]
        raise LifespanError(f"the {name} app failed to start: {lines[-1]}")
    try:
        yield
    finally:
        await inbox.put({"type": "lifespan.shutdown"})
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(SHUTDOWN_GRACE_S):
                done = await _answer(task, outbox)
                if done is not None and done["type"] == "lifespan.shutdown.failed":
                    _log.warning("serve.shutdown_failed", app=name, reason=done.get("message"))
        await _finish(task)


async def _run(
    app: ASGIApp,
    scope: MutableMapping[str, Any],
    inbox: asyncio.Queue[Message],
    outbox: asyncio.Queue[Message],
) -> None:
    await app(scope, inbox.get, outbox.put)


async def _answer(task: asyncio.Task[None], outbox: asyncio.Queue[Message]) -> Message | None:
    """The app's next lifespan message, or None when its task ends first."""
    getting = asyncio.ensure_future(outbox.get())
    await asyncio.wait({task, getting}, return_when=asyncio.FIRST_COMPLETED)
    if getting.done():
        return getting.result()
    getting.cancel()
    return None if outbox.empty() else outbox.get_nowait()


async def _finish(task: asyncio.Task[None]) -> None:
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
