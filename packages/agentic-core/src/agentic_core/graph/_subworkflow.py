"""SubWorkflowExecutor: a whole workflow as one node of another."""

from __future__ import annotations

from typing import Any

from agentic_core.graph._context import WorkflowContext
from agentic_core.graph._executor import Executor, ExecutorKind, handler
from agentic_core.graph._workflow import Workflow, WorkflowRunResult
from agentic_core.stores._memory_checkpoint import InMemoryCheckpointStore


class SubWorkflowExecutor(Executor):
    """Runs a child workflow with each message it receives; child outputs are sent on.

    A child ``request_info`` surfaces in the parent as the parent's own request (same data and
    response type); the parent's answer resumes the child. The paused child travels in this
    executor's per-run state, so it survives checkpoints and process boundaries.
    """

    def __init__(self, workflow: Workflow, *, id: str) -> None:  # noqa: A002
        super().__init__(id, kind=ExecutorKind.ORCHESTRATOR)
        self.workflow = workflow
        self._state: dict[str, Any] = {"paused": {}}

    def snapshot_state(self) -> Any:
        """Paused children: parent request id -> (child checkpoint, child request id)."""
        return self._state

    def restore_state(self, state: Any) -> None:
        """Take the paused children of ``state`` (a fresh dict per run)."""
        paused = dict(state["paused"]) if state else {}
        self._state = {"paused": paused}

    @handler
    async def run_child(self, message: Any, ctx: WorkflowContext[Any]) -> None:
        """Start a child run with ``message``."""
        store = InMemoryCheckpointStore()
        # The store only keeps the child's state where it pauses: exit mode writes just that.
        result = await self.workflow.run(message, checkpoint_store=store, durability="exit")
        await self._forward(result, store, ctx)

    async def _handle_response(
        self, request_id: str, request: Any, response: Any, ctx: WorkflowContext[Any, Any]
    ) -> None:
        del request
        entry = self._state["paused"].pop(request_id, None)
        if entry is None:
            await super()._handle_response(request_id, None, response, ctx)
            return
        checkpoint_json, child_request_id = entry
        store = InMemoryCheckpointStore()
        from agentic_core.protocols._checkpoint import Checkpoint

        checkpoint = Checkpoint.model_validate_json(checkpoint_json)
        await store.save(checkpoint)
        result = await self.workflow.run(
            checkpoint_id=checkpoint.id,
            checkpoint_store=store,
            responses={child_request_id: response},
            durability="exit",
        )
        await self._forward(result, store, ctx)

    async def _forward(
        self, result: WorkflowRunResult, store: InMemoryCheckpointStore, ctx: WorkflowContext[Any]
    ) -> None:
        for output in result.outputs:
            await ctx.send_message(output)
        if not result.pending_requests:
            return
        checkpoint = await store.latest(result.run_id)
        if checkpoint is None:  # the child ran with this store, so it saved where it paused
            raise RuntimeError(f"sub-workflow '{self.id}' paused without a checkpoint")
        snapshot = checkpoint.model_dump_json()
        paused: dict[str, list[str]] = self._state["paused"]
        surfaced = {child_id: parent_id for parent_id, (_, child_id) in paused.items()}
        for request in result.pending_requests:
            parent_id = surfaced.get(request.request_id)
            if parent_id is None:  # new: ask the parent's caller
                parent_id = await ctx.request_info(request.data, request.response_type)
            paused[parent_id] = [snapshot, request.request_id]  # always the newest child state
