"""``ServedApps``: one ASGI app dispatching by path to each protocol's own app.

Each protocol's app is guarded by its own ``ServerGuard`` (they are built with the same token,
hosts and body limit); what no protocol serves (``/`` and unknown paths) is answered behind one
more guard of the same settings, so no route of the server is unguarded. An app mounted with
``strip`` routes relative to its prefix (Starlette's convention: ``root_path`` gets the prefix,
``path`` stays whole); the others route on the whole path (the OpenAI app serves ``/v1/...``,
the MCP app ``/mcp``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentic_core import ServerGuard
from agentic_orchestrator._cli._serve._lifespan import ASGIApp, LifespanError, running_lifespan

__all__ = ["Mount", "ServedApps"]

Scope = MutableMapping[str, Any]


@dataclass(frozen=True)
class Mount:
    """One protocol's app and the paths it answers."""

    name: str
    """The protocol's label: ``openai``, ``mcp``, ``a2a``, ``ui``."""
    prefix: str
    """``/v1``: the app answers ``/v1`` and everything under ``/v1/``."""
    app: ASGIApp
    strip: bool = False
    """Route the app relative to ``prefix`` (its ``root_path``); ``prefix`` alone becomes
    ``prefix/`` so a client posting to the bare URL reaches the app's root route."""
    root_paths: tuple[str, ...] = ()
    """Exact paths at the server's root the app also answers, given to it unprefixed (the A2A
    card); the same paths under ``prefix`` are given to it as these (a client looking for the
    card under the endpoint's URL finds the same public card)."""

    close: Callable[[], Awaitable[None]] | None = None
    """What stops the app's work when the server stops (the A2A app's running tasks)."""

    def matches(self, path: str) -> bool:
        """Whether ``path`` is this app's (its prefix, under it, or one of its root paths)."""
        return path == self.prefix or path.startswith(f"{self.prefix}/") or path in self.root_paths


class ServedApps:
    """The server's one ASGI app: ``mounts`` by path, the rest guarded and answered here.

    ``lifespan()`` runs every mounted app's lifespan (the MCP session manager's, ...); an ASGI
    ``lifespan`` scope does the same, so the app can be served with a server's lifespan on.
    """

    def __init__(
        self,
        mounts: Sequence[Mount],
        *,
        token: str | None,
        allowed_hosts: Iterable[str],
        max_body_bytes: int,
    ) -> None:
        self.mounts = list(mounts)
        self._index = {m.name: m.prefix for m in self.mounts}
        self._fallback = ServerGuard(
            self._unmounted,
            token=token,
            allowed_hosts=allowed_hosts,
            max_body_bytes=max_body_bytes,
        )

    def __repr__(self) -> str:
        return f"ServedApps({self._index})"

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncGenerator[None]:
        """Every mounted app started for the block (in order), shut down after it (reversed).

        Raises:
            LifespanError: an app failed to start (those started are shut down first).
        """
        async with contextlib.AsyncExitStack() as stack:
            for mount in self.mounts:
                await stack.enter_async_context(running_lifespan(mount.app, mount.name))
            yield

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._serve_lifespan(receive, send)
            return
        path = str(scope.get("path", ""))
        for mount in self.mounts:
            if mount.matches(path):
                await mount.app(_mounted(scope, mount, path), receive, send)
                return
        await self._fallback(scope, receive, send)

    async def _serve_lifespan(self, receive: Any, send: Any) -> None:
        await receive()  # lifespan.startup
        try:
            async with self.lifespan():
                await send({"type": "lifespan.startup.complete"})
                await receive()  # lifespan.shutdown
        except LifespanError as exc:
            await send({"type": "lifespan.startup.failed", "message": str(exc)})
            return
        await send({"type": "lifespan.shutdown.complete"})

    async def _unmounted(self, scope: Scope, receive: Any, send: Any) -> None:
        """``GET /``: the protocols served and their paths; anything else: 404."""
        # Every protocol's app runs on Starlette (the viewer extra, mcp, a2a-sdk's server).
        from starlette.responses import JSONResponse

        if scope["type"] != "http":
            await send({"type": "websocket.close", "code": 1000})
            return
        if scope.get("path") == "/" and scope.get("method") in ("GET", "HEAD"):
            answer = JSONResponse({"served": self._index})
        else:
            known = ", ".join(f"{prefix} ({name})" for name, prefix in self._index.items())
            answer = JSONResponse(
                {"error": f"nothing here: this server serves {known or 'nothing'}"}, 404
            )
        await answer(scope, receive, send)


def _mounted(scope: Scope, mount: Mount, path: str) -> Scope:
    if path in mount.root_paths:
        return scope
    below = path.removeprefix(mount.prefix)
    if below in mount.root_paths:
        return {**scope, "path": below, "raw_path": below.encode()}
    if not mount.strip:
        return scope
    mounted = dict(scope)
    mounted["root_path"] = f"{scope.get('root_path', '')}{mount.prefix}"
    if path == mount.prefix:
        mounted["path"] = f"{path}/"
        raw = scope.get("raw_path")
        if isinstance(raw, bytes) and not raw.endswith(b"/"):
            mounted["raw_path"] = raw + b"/"
    return mounted
