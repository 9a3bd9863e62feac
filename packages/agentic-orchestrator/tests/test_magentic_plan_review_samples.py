"""Microsoft Agent Framework's Magentic plan-review samples, ported and run.

- ``03-workflows/orchestrations/magentic_human_plan_review.py``: a researcher, an analyst and
  a manager; every plan is shown to a human who approves it (an empty reply) or revises it
  with feedback, in a loop of streamed runs answered with ``responses=``. The human's
  ``input()`` is a list of scripted replies; the Foundry model is ``ScriptedChatClient``.
  MAF's ``intermediate_output_from`` has no counterpart: participants' streamed text arrives as
  ``AgentRunUpdateEvent``s anyway.
- ``03-workflows/orchestrations/magentic_checkpoint.py``: run until the plan-review request,
  take the latest checkpoint, resume it in a freshly built workflow, approve the re-emitted
  request, read the final answer; then resume again from a later checkpoint of the approved
  run (stage 3) and reach the same answer.

The port keeps the samples' structure and prints; asserts check what they print.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable

import pytest

from agentic_core import (
    AgentRunUpdateEvent,
    ChatAgent,
    ChatMessage,
    InMemoryCheckpointStore,
    RequestInfoEvent,
    Workflow,
    WorkflowCompletedEvent,
    WorkflowEvent,
    WorkflowOutputEvent,
    WorkflowRunState,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import (
    MagenticBuilder,
    MagenticPlanReviewRequest,
    MagenticPlanReviewResponse,
)


def ledger(*, done: bool = False, speaker: str = "", instruction: str = "") -> str:
    item = lambda answer: {"reason": "scripted", "answer": answer}  # noqa: E731
    return json.dumps(
        {
            "is_request_satisfied": item(done),
            "is_in_loop": item(False),
            "is_progress_being_made": item(True),
            "next_speaker": item(speaker),
            "instruction_or_question": item(instruction),
        }
    )


# --- magentic_human_plan_review ---------------------------------------------------------------


class Sample:
    """The sample's module: its global ``last_response_id``, its prints and the human."""

    def __init__(self, human: list[str]) -> None:
        self.last_response_id: str | None = None
        self.human = iter(human)
        self.printed: list[str] = []

    def print(self, *parts: object, end: str = "\n") -> None:
        self.printed.append(" ".join(map(str, parts)) + end)

    def input(self, prompt: str) -> str:
        reply = next(self.human)
        self.print(prompt + reply)
        return reply

    @property
    def output(self) -> str:
        return "".join(self.printed)

    async def process_event_stream(
        self, stream: AsyncIterable[WorkflowEvent]
    ) -> dict[str, MagenticPlanReviewResponse] | None:
        """Process events from the workflow stream to capture human feedback requests."""
        requests: dict[str, MagenticPlanReviewRequest] = {}
        async for event in stream:
            if isinstance(event, RequestInfoEvent) and isinstance(
                event.data, MagenticPlanReviewRequest
            ):
                requests[event.request_id] = event.data

            if isinstance(event, AgentRunUpdateEvent):
                data = event.update
                rid = event.executor_id
                if rid != self.last_response_id:
                    if self.last_response_id is not None:
                        self.print("\n")
                    self.print(f"{data.author_name or rid}:", end=" ")
                    self.last_response_id = rid
                self.print(data.text, end="")
            elif isinstance(event, WorkflowOutputEvent):
                # The output of the workflow comes from the manager: its final answer
                self.print("\n" + "=" * 60)
                self.print("DISCUSSION COMPLETE")
                self.print("=" * 60)
                self.print("Final discussion summary:")
                msg = event.data
                assert isinstance(msg, ChatMessage)
                speaker = msg.author_name or msg.role
                self.print(f"[{speaker}]: {msg.text}")

        responses: dict[str, MagenticPlanReviewResponse] = {}
        if requests:
            for request_id, request in requests.items():
                self.print("\n\n[Magentic Plan Review Request]")
                if request.current_progress is not None:
                    self.print("Current Progress Ledger:")
                    self.print(json.dumps(request.current_progress.model_dump(), indent=2))
                    self.print()
                self.print(f"Proposed Plan:\n{request.plan.text}\n")
                self.print("Please provide your feedback (press Enter to approve):")

                reply = self.input("> ")
                if reply.strip() == "":
                    self.print("Plan approved.\n")
                    responses[request_id] = request.approve()
                else:
                    self.print("Plan revised by human.\n")
                    responses[request_id] = request.revise(reply)

        return responses if responses else None

    async def main(self, manager: ScriptedChatClient) -> Workflow:
        researcher_agent = ChatAgent(
            ScriptedChatClient(["SAF cuts lifecycle CO2 by up to 80%; HEFA is most mature."]),
            name="ResearcherAgent",
            description="Specialist in research and information gathering",
            instructions="You are a Researcher. You find information and gather facts.",
        )
        analyst_agent = ChatAgent(
            ScriptedChatClient(["Summary: HEFA leads today; costs are 2-5x jet fuel."]),
            name="AnalystAgent",
            description="Data analyst who processes and summarizes research findings",
            instructions="You are an Analyst. You analyze findings and create summaries.",
        )
        manager_agent = ChatAgent(
            manager,
            name="MagenticManager",
            description="Orchestrator that coordinates the workflow",
            instructions="You coordinate a team to complete tasks efficiently.",
        )

        self.print("\nBuilding Magentic Workflow with Human Plan Review...")

        # enable_plan_review=True: Request human input for plan review.
        workflow = MagenticBuilder(
            participants=[researcher_agent, analyst_agent],
            enable_plan_review=True,
            manager=manager_agent,
            max_rounds=10,
            max_stalls=1,
            max_resets=2,
        ).build()

        task = "Research sustainable aviation fuel technology and summarize the findings."

        self.print(f"\nTask: {task}")
        self.print("\nStarting workflow execution...")
        self.print("=" * 60)

        # Initiate the first run of the workflow.
        stream = workflow.run_stream(task)

        pending_responses = await self.process_event_stream(stream)
        while pending_responses is not None:
            # Run the workflow until there is no more human feedback to provide,
            # in which case this workflow completes.
            stream = workflow.run_stream(responses=pending_responses)
            pending_responses = await self.process_event_stream(stream)
        return workflow


async def test_magentic_human_plan_review_sample() -> None:
    manager = ScriptedChatClient(
        [
            "GIVEN OR VERIFIED FACTS\n- SAF is a drop-in jet fuel",
            "- ResearcherAgent: gather SAF pathways\n- AnalystAgent: summarize",
            # the human asks for costs: facts and plan again
            "GIVEN OR VERIFIED FACTS\n- SAF is a drop-in jet fuel\n- costs matter",
            "- ResearcherAgent: gather SAF pathways\n- AnalystAgent: summarize, with costs",
            ledger(speaker="ResearcherAgent", instruction="Gather SAF pathways."),
            ledger(speaker="AnalystAgent", instruction="Summarize, with costs."),
            ledger(done=True),
            "SAF: HEFA is the mature pathway, cutting CO2 up to 80% at 2-5x the cost.",
        ]
    )
    sample = Sample(human=["Include a cost comparison with jet fuel.", ""])
    await sample.main(manager)

    out = sample.output
    assert out.count("[Magentic Plan Review Request]") == 2
    assert "Plan revised by human." in out
    assert out.index("Plan revised by human.") < out.index("Plan approved.")
    assert "AnalystAgent: summarize, with costs" in out  # the revised plan was shown
    assert "ResearcherAgent: SAF cuts lifecycle CO2 by up to 80%" in out
    assert "AnalystAgent: Summary: HEFA leads today" in out
    assert "DISCUSSION COMPLETE" in out
    assert (
        "[MagenticManager]: SAF: HEFA is the mature pathway, cutting CO2 up to 80% at 2-5x the "
        "cost." in out
    )
    assert out.index("Plan approved.") < out.index("DISCUSSION COMPLETE")
    # The feedback reached the re-planning prompts.
    revision_prompts = [m[-1].text for m, _ in manager.calls[2:4]]
    assert all("Include a cost comparison" in p for p in revision_prompts)


# --- magentic_checkpoint ----------------------------------------------------------------------

TASK = (
    "Draft a concise internal brief describing how our research and implementation teams should "
    "collaborate to launch a beta feature for data-driven email summarization. Highlight the key "
    "milestones, risks, and communication cadence."
)

BRIEF = "Internal Brief: kickoff, prototype, integrate, beta; weekly syncs; privacy risk."

MANAGER_SCRIPT = [
    "GIVEN OR VERIFIED FACTS\n- two teams",
    "- ResearcherAgent: collect facts\n- WriterAgent: write the brief",
    ledger(speaker="ResearcherAgent", instruction="Collect the facts."),
    ledger(speaker="WriterAgent", instruction="Write the brief."),
    ledger(done=True),
    BRIEF,
]


def build_workflow(
    checkpoint_storage: InMemoryCheckpointStore, manager_replies: list[str]
) -> Workflow:
    """Construct the Magentic workflow graph with checkpointing enabled."""
    # Two vanilla ChatAgents act as participants in the orchestration.
    researcher = ChatAgent(
        ScriptedChatClient(["- beta in Q3\n- privacy review needed"]),
        name="ResearcherAgent",
        description="Collects background facts and references for the project.",
        instructions="You are the research lead. Gather crisp bullet points the team should know.",
    )
    writer = ChatAgent(
        ScriptedChatClient(["Brief: milestones, risks, cadence."]),
        name="WriterAgent",
        description="Synthesizes the final brief for stakeholders.",
        instructions="You convert the research notes into a structured brief.",
    )
    # Create a manager agent for orchestration
    manager_agent = ChatAgent(
        ScriptedChatClient(manager_replies),
        name="MagenticManager",
        description="Orchestrator that coordinates the research and writing workflow",
        instructions="You coordinate a team to complete complex tasks efficiently.",
    )
    # The builder wires in the Magentic manager, sets the plan review path, and stores the
    # checkpoint backend so the runtime knows where to persist snapshots.
    return MagenticBuilder(
        participants=[researcher, writer],
        enable_plan_review=True,
        checkpoint_store=checkpoint_storage,
        manager=manager_agent,
        max_rounds=10,
        max_stalls=3,
    ).build()


async def test_magentic_checkpoint_sample(capsys: pytest.CaptureFixture[str]) -> None:
    checkpoint_storage = InMemoryCheckpointStore()

    print("\n=== Stage 1: run until plan review request (checkpointing active) ===")
    workflow = build_workflow(checkpoint_storage, MANAGER_SCRIPT)

    plan_review_request: MagenticPlanReviewRequest | None = None
    run_id = ""
    async for event in workflow.run_stream(TASK):
        if isinstance(event, RequestInfoEvent) and isinstance(
            event.data, MagenticPlanReviewRequest
        ):
            plan_review_request = event.data
            run_id = event.run_id
            print(f"Captured plan review request: {event.request_id}")
        if (
            isinstance(event, WorkflowCompletedEvent)
            and event.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
        ):
            break

    assert plan_review_request is not None, "No plan review request emitted; nothing to resume."

    resume_checkpoint = await checkpoint_storage.latest(run_id)
    assert resume_checkpoint is not None, "No checkpoints persisted."
    print(f"Using checkpoint {resume_checkpoint.id} at superstep {resume_checkpoint.superstep}")

    # Show that the checkpoint indeed contains the pending plan-review request record.
    snapshot = json.loads(resume_checkpoint.model_dump_json())
    request_map = snapshot.get("pending_requests", [])
    print(f"Pending plan-review requests persisted in checkpoint: {len(request_map)}")
    assert len(request_map) == 1

    print("\n=== Stage 2: resume from checkpoint and approve plan ===")
    # A new workflow object; its manager has only what is left to say after the plan.
    resumed_workflow = build_workflow(checkpoint_storage, MANAGER_SCRIPT[2:])

    # Construct an approval reply to supply when the plan review request is re-emitted.
    approval = plan_review_request.approve()

    # Resume execution and capture the re-emitted plan review request.
    request_info_event: RequestInfoEvent | None = None
    async for event in resumed_workflow.run_stream(checkpoint_id=resume_checkpoint.id):
        if isinstance(event, RequestInfoEvent) and isinstance(
            event.data, MagenticPlanReviewRequest
        ):
            request_info_event = event

    assert request_info_event is not None, "No plan review request re-emitted on resume."
    print(f"Resumed plan review request: {request_info_event.request_id}")

    # Supply the approval and continue to run to completion.
    final_event: WorkflowOutputEvent | None = None
    async for event in resumed_workflow.run_stream(
        responses={request_info_event.request_id: approval}
    ):
        if isinstance(event, WorkflowOutputEvent):
            final_event = event

    assert final_event is not None, "Workflow did not complete after resume."
    output_message: ChatMessage = final_event.data
    print("\n=== Final Answer ===")
    print(output_message.text)
    assert output_message.text == BRIEF

    # ------------------------------------------------------------------
    # Stage 3: demonstrate resuming from a later checkpoint (post-plan)
    # ------------------------------------------------------------------
    all_checkpoints = [
        await checkpoint_storage.load(meta.id)
        for meta in await checkpoint_storage.list(run_id=run_id)
    ]
    later_checkpoints_with_messages = [
        cp
        for cp in all_checkpoints
        if cp is not None
        and cp.superstep > resume_checkpoint.superstep
        and sum(len(m) for m in cp.pending_messages.values()) > 0
    ]
    assert later_checkpoints_with_messages
    # The first one after the approval: the researcher's turn is pending.
    post_plan_checkpoint = later_checkpoints_with_messages[0]
    print("\n=== Stage 3: resume from post-plan checkpoint ===")
    pending = sum(len(m) for m in post_plan_checkpoint.pending_messages.values())
    print(
        f"Resuming from checkpoint {post_plan_checkpoint.id} at superstep "
        f"{post_plan_checkpoint.superstep} (pending messages: {pending})"
    )
    post_plan_workflow = build_workflow(checkpoint_storage, MANAGER_SCRIPT[3:])
    final_event_post: WorkflowOutputEvent | None = None
    async for event in post_plan_workflow.run_stream(checkpoint_id=post_plan_checkpoint.id):
        assert not isinstance(event, RequestInfoEvent)  # the plan was approved before
        if isinstance(event, WorkflowOutputEvent):
            final_event_post = event

    assert final_event_post is not None, "Workflow did not complete after post-plan resume."
    print("\n=== Final Answer (post-plan resume) ===")
    print(final_event_post.data.text)
    assert final_event_post.data.text == BRIEF

    out = capsys.readouterr().out
    assert "Captured plan review request:" in out
    assert "Pending plan-review requests persisted in checkpoint: 1" in out
    assert out.count(BRIEF) == 2
