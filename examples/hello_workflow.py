"""Hello, workflow: a writer/reviewer feedback loop, then a fan-out/fan-in of three editors.

Runs offline: `uv run python examples/hello_workflow.py`. It prints each output, the run's
status, and the graph as a Mermaid diagram.
"""

from __future__ import annotations

import asyncio
from typing import Never

from pydantic import BaseModel

from agentic_core import Executor, Workflow, WorkflowBuilder, WorkflowContext, executor, handler


class Draft(BaseModel):
    text: str
    revision: int = 0


class Review(BaseModel):
    draft: Draft
    approved: bool


@executor
async def writer(draft: Draft, ctx: WorkflowContext[Draft]) -> None:
    """Improves the draft a little each time it comes back."""
    improved = f"{draft.text} (revised)" if draft.revision else draft.text
    await ctx.send_message(Draft(text=improved, revision=draft.revision + 1))


@executor
async def reviewer(draft: Draft, ctx: WorkflowContext[Review]) -> None:
    """Approves the third revision; until then, sends it back."""
    await ctx.send_message(Review(draft=draft, approved=draft.revision >= 3))


@executor
async def back_to_writer(review: Review, ctx: WorkflowContext[Draft]) -> None:
    await ctx.send_message(review.draft)


@executor
async def publish(review: Review, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(review.draft.text)


class Editor(Executor):
    """One editor's pass over the approved text."""

    def __init__(self, id: str, mark: str) -> None:  # noqa: A002
        super().__init__(id)
        self.mark = mark

    @handler
    async def edit(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.send_message(f"{self.mark} {text}")


@executor
async def assemble(versions: list[str], ctx: WorkflowContext[Never, str]) -> None:
    for version in versions:
        await ctx.yield_output(version)


def build_workflow() -> Workflow:
    editors = [
        Editor("grammar", "[grammar]"),
        Editor("style", "[style]"),
        Editor("facts", "[facts]"),
    ]
    return (
        WorkflowBuilder("hello")
        .set_start_executor(writer)
        .add_edge(writer, reviewer)
        .add_conditional_edge(reviewer, back_to_writer, lambda review: not review.approved)
        .add_edge(back_to_writer, writer)
        .add_conditional_edge(reviewer, publish, lambda review: review.approved)
        .add_fan_out_edge(publish, editors)
        .add_fan_in_edge(editors, assemble)
        .build()
    )


async def main() -> None:
    workflow = build_workflow()
    result = await workflow.run(Draft(text="Agents compose."))
    for output in result.outputs:
        print(output)
    print(f"status={result.status.value} supersteps={result.superstep_count}")
    print(workflow.to_mermaid())


if __name__ == "__main__":
    asyncio.run(main())
