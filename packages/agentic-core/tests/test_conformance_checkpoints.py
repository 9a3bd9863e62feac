"""The checkpoints the conformance suite saves hold pending requests as the engine writes them."""

from __future__ import annotations

from agentic_core import (
    Executor,
    InMemoryCheckpointStore,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_core.testing.conformance import make_checkpoint


class AskTwice(Executor):
    """Asks two questions shaped like ``make_checkpoint``'s requests, then waits."""

    @handler
    async def ask(self, message: str, ctx: WorkflowContext[str]) -> None:
        del message
        await ctx.request_info({"question": "approve?"}, str)
        await ctx.request_info({"question": "approve?"}, str)

    @response_handler
    async def answered(
        self, question: dict[str, str], answer: str, ctx: WorkflowContext[str]
    ) -> None:
        del question
        await ctx.send_message(answer)


async def test_make_checkpoint_writes_pending_requests_as_the_engine_does() -> None:
    store = InMemoryCheckpointStore()
    workflow = WorkflowBuilder().set_start_executor(AskTwice("ask")).build()
    paused = await workflow.run("go", checkpoint_store=store)
    written = await store.latest(paused.run_id)
    request_ids = [request.request_id for request in paused.pending_requests]

    built = make_checkpoint(run_id=paused.run_id, pending_request_ids=request_ids)

    assert written is not None
    assert len(request_ids) == 2
    assert built.pending_requests == written.pending_requests
    assert built.to_metadata().pending_request_ids == request_ids
