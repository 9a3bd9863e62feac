"""``serve_a2a``: a core ``Agent`` or ``Workflow`` served as an A2A agent, on the ``a2a-sdk``.

The SDK does the protocol: its agent-card and JSON-RPC routes (Starlette), its
``DefaultRequestHandler`` (tasks, streaming, resubscribing, cancelling). Ours are the
``AgentExecutor`` running the target, the ``TaskStore`` over a core ``StateStore``, the card,
and the ``ServerGuard`` in front (see ``A2AApp``).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
from collections.abc import AsyncGenerator, Sequence

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.types import AgentCard
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH
from starlette.applications import Starlette

from agentic_bus._a2a._agent_task import AgentTaskExecutor
from agentic_bus._a2a._app import A2AApp, Busy, skip_idle_sdk_spans
from agentic_bus._a2a._card import RPC_PATH, card_for, card_with_url
from agentic_bus._a2a._errors import A2AServeError
from agentic_bus._a2a._executor import RunSlots, TaskExecutor
from agentic_bus._a2a._served_state import ServedState
from agentic_bus._a2a._task_store import StateTaskStore, TaskContextBuilder
from agentic_bus._a2a._workflow_task import WorkflowTaskExecutor
from agentic_core import (
    Agent,
    CheckpointStore,
    InMemoryStateStore,
    ServerGuard,
    StateStore,
    StateStoreCheckpointStore,
    Workflow,
    redact_url,
)

__all__ = ["A2AApp", "serve_a2a"]

_PREFIX = "a2a"
_PARKED_RELEASE_S = 60.0
"""How long a task waiting for input stays in memory; later answers reload it from the store."""


def serve_a2a(
    target: Agent | Workflow,
    *,
    card: AgentCard | None = None,
    state_store: StateStore | None = None,
    token: str | None = None,
    checkpoint_store: CheckpointStore | None = None,
    url: str | None = None,
    allowed_hosts: Sequence[str] = (),
    max_body_bytes: int = ServerGuard.DEFAULT_MAX_BODY_BYTES,
    max_concurrent_runs: int = 8,
    run_timeout_s: float = 300.0,
) -> A2AApp:
    """An A2A server (an ASGI app) serving ``target``, a core ``Agent`` or ``Workflow``.

    - The agent card (``/.well-known/agent-card.json``) is built from the target's name,
      description and tools (skills), with streaming on and the JSON-RPC endpoint at ``/``
      (``url`` when given, without credentials, else the URL the card is asked for at);
      ``card`` replaces the whole card.
    - An agent: the A2A ``contextId`` is an ``AgentThread`` (kept in ``state_store``); text
      streams as the agent writes it (chunks of the ``response`` artifact); tool calls
      waiting for approval make the task ``input-required`` and the next message on the
      task answers them (``yes`` approves, other text rejects with itself as the reason, or a
      data part ``{"approved": ..., "reason": ..., "arguments": ...}``).
    - A workflow: each task is a run checkpointed in ``checkpoint_store`` (default: a
      ``StateStoreCheckpointStore`` over ``state_store``); outputs are ``output`` artifacts;
      ``request_info`` makes the task ``input-required`` and the next message answers it
      (the run resumes from its checkpoint, in a restarted server too); cancelling the task
      stops the run.
    - Tasks are kept in ``state_store`` (in memory by default; ``RedisStateStore`` or
      ``NatsKVStateStore`` keep them across restarts).
    - Safety: ``ServerGuard`` in front (loopback and ``allowed_hosts`` only, JSON posts,
      bodies up to ``max_body_bytes``, 413 past it); with ``token`` every request but the
      card's needs ``Authorization: Bearer <token>``, and serving beyond loopback needs one.
      At most ``max_concurrent_runs`` runs at once (a new message past it: 429); each run is
      bounded by ``run_timeout_s`` (the task fails).

    Raises ``A2AServeError`` naming what cannot be served (a target that is no ``Agent`` or
    ``Workflow``, a bound below one, a ``url`` with credentials). Serve it with
    ``await app.run(port=...)`` or any ASGI server.

    Example:
        ```python
        app = serve_a2a(ChatAgent(client, name="helper"), token=secret)
        await app.run(port=9999)  # A2AAgent("http://127.0.0.1:9999", headers=...)
        ```
    """
    _check_bounds(max_concurrent_runs, run_timeout_s, max_body_bytes)
    skip_idle_sdk_spans()
    if url is not None and redact_url(url) != url:
        raise A2AServeError(
            f"serve_a2a: url={redact_url(url)!r} holds credentials; the card is public, give "
            "the endpoint's URL without them (clients send the token as a header)"
        )
    state = state_store if state_store is not None else InMemoryStateStore()
    served = ServedState(state, prefix=_PREFIX)
    slots = RunSlots(max_concurrent_runs)
    executor = _executor(target, served, slots, run_timeout_s, checkpoint_store)
    agent_card = card or card_for(
        target, url=url, token_required=token is not None, version=_version()
    )
    tasks = StateTaskStore(state, prefix=_PREFIX)
    handler = DefaultRequestHandler(
        agent_executor=executor,
        task_store=tasks,
        agent_card=agent_card,
        request_context_builder=TaskContextBuilder(tasks),
        interrupted_task_timeout=_PARKED_RELEASE_S,
    )

    async def fill_url(shown: AgentCard) -> AgentCard:
        return card_with_url(shown)

    routes = [
        *create_agent_card_routes(
            agent_card, card_modifier=fill_url if card is None and url is None else None
        ),
        *create_jsonrpc_routes(handler, RPC_PATH),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncGenerator[None]:
        yield
        await handler.aclose()  # under an ASGI server with lifespan on: stop running tasks

    guard = ServerGuard(
        Busy(Starlette(routes=routes, lifespan=lifespan), slots),
        allowed_hosts=allowed_hosts,
        token=token,
        max_body_bytes=max_body_bytes,
        public_paths=[AGENT_CARD_WELL_KNOWN_PATH],
    )
    return A2AApp(guard, handler, agent_card, executor.name)


def _executor(
    target: object,
    served: ServedState,
    slots: RunSlots,
    timeout_s: float,
    checkpoint_store: CheckpointStore | None,
) -> TaskExecutor:
    if isinstance(target, Workflow):
        checkpoints = checkpoint_store or StateStoreCheckpointStore(
            served.store, prefix=f"{_PREFIX}/checkpoints"
        )
        return WorkflowTaskExecutor(target, checkpoints, served, slots, timeout_s)
    if isinstance(target, Agent):
        if checkpoint_store is not None:
            raise A2AServeError(
                "serve_a2a: checkpoint_store is for workflows; an agent keeps its "
                "conversations in state_store"
            )
        return AgentTaskExecutor(target, served, slots, timeout_s)
    raise A2AServeError(
        f"serve_a2a serves a core Agent or Workflow, not a {type(target).__name__} "
        "(wrap a function in ChatAgent tools, or build a Workflow)"
    )


def _check_bounds(max_runs: int, timeout_s: float, max_body_bytes: int) -> None:
    if max_runs < 1:
        raise A2AServeError(f"serve_a2a: max_concurrent_runs must be at least 1, got {max_runs}")
    if timeout_s <= 0:
        raise A2AServeError(f"serve_a2a: run_timeout_s must be positive, got {timeout_s}")
    if max_body_bytes < 1:
        raise A2AServeError(f"serve_a2a: max_body_bytes must be at least 1, got {max_body_bytes}")


def _version() -> str:
    try:
        return importlib.metadata.version("agentic-bus")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - not installed
        return "0"
