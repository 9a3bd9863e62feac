"""Microsoft Agent Framework's checkpoint and sub-workflow samples, ported and run.

- ``checkpoint/checkpoint_with_resume.py``: a worker with executor state (its
  ``on_checkpoint_save``/``on_checkpoint_restore`` are our ``snapshot_state``/``restore_state``)
  loops on itself; the program is interrupted after some supersteps and resumed from the latest
  checkpoint by a freshly built workflow, until it finishes.
- ``checkpoint/checkpoint_with_human_in_the_loop.py``: a brief, a writer agent, a review gateway
  asking a human; the program stops while the human is away and a new one resumes from the
  checkpoint with the answer supplied up front, so the request is not asked again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Never

from agentic_core import (
    AgentExecutor,
    AgentExecutorResponse,
    ChatAgent,
    ChatMessage,
    Executor,
    FileCheckpointStore,
    InMemoryCheckpointStore,
    RequestInfoEvent,
    SubWorkflowExecutor,
    SuperstepCompletedEvent,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowOutputEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
    handler,
    response_handler,
)
from agentic_core.testing import ScriptedChatClient

# --- checkpoint_with_resume ------------------------------------------------------------------


@dataclass
class ComputeTask:
    """Task containing the list of numbers remaining to be processed."""

    remaining_numbers: list[int]


class StartExecutor(Executor):
    @handler
    async def start(self, upper_limit: int, ctx: WorkflowContext[ComputeTask]) -> None:
        await ctx.send_message(ComputeTask(remaining_numbers=list(range(1, upper_limit + 1))))


class WorkerExecutor(Executor):
    def __init__(self, id: str) -> None:  # noqa: A002
        super().__init__(id)
        self._composite_number_pairs: dict[int, list[tuple[int, int]]] = {}

    @handler
    async def compute(
        self, task: ComputeTask, ctx: WorkflowContext[ComputeTask, dict[int, list[tuple[int, int]]]]
    ) -> None:
        next_number = task.remaining_numbers.pop(0)
        pairs = [(i, next_number // i) for i in range(1, next_number) if next_number % i == 0]
        self._composite_number_pairs[next_number] = pairs
        if not task.remaining_numbers:
            await ctx.yield_output(self._composite_number_pairs)
        else:
            await ctx.send_message(task)

    def snapshot_state(self) -> Any:
        return {"composite_number_pairs": self._composite_number_pairs}

    def restore_state(self, state: Any) -> None:
        self._composite_number_pairs = state.get("composite_number_pairs", {})


def factor_workflow_builder(store: InMemoryCheckpointStore) -> WorkflowBuilder:
    start, worker = StartExecutor("start"), WorkerExecutor("worker")
    return (
        WorkflowBuilder("factor-pairs")
        .set_start_executor(start)
        .add_edge(start, worker)
        .add_edge(worker, worker)  # self-loop for iterative processing
        .with_checkpointing(store)
    )


async def test_checkpoint_with_resume_survives_interruptions() -> None:
    store = InMemoryCheckpointStore()
    builder = factor_workflow_builder(store)
    latest_id: str | None = None
    run_id: str | None = None
    output: Any = None
    interruptions = 0
    while output is None:
        workflow = builder.build()  # a "restarted program" every time
        stream = (
            workflow.run_stream(10)
            if latest_id is None
            else workflow.run_stream(checkpoint_id=latest_id)
        )
        completed = 0
        async for event in stream:
            if isinstance(event, WorkflowStartedEvent):
                run_id = event.run_id
            if isinstance(event, WorkflowOutputEvent):
                output = event.data
                break
            if isinstance(event, SuperstepCompletedEvent):
                completed += 1
                if completed == 3:  # the sample interrupts at random; here, every 3 supersteps
                    interruptions += 1
                    break
        assert run_id is not None
        latest = await store.latest(run_id)
        assert latest is not None
        latest_id = latest.id
    assert interruptions >= 3
    expected = {n: [(i, n // i) for i in range(1, n) if n % i == 0] for n in range(1, 11)}
    assert output == expected


# --- checkpoint_with_human_in_the_loop ---------------------------------------------------------


class BriefPreparer(Executor):
    """Normalises the user brief and sends it to the writer agent."""

    def __init__(self, id: str, agent_id: str) -> None:  # noqa: A002
        super().__init__(id)
        self._agent_id = agent_id

    @handler
    async def prepare(self, brief: str, ctx: WorkflowContext[list[ChatMessage], str]) -> None:
        normalized = " ".join(brief.split()).strip()
        if not normalized.endswith("."):
            normalized += "."
        await ctx.set_shared_state("brief", normalized)
        prompt = f"Summarise the brief below in two sentences.\n\nBRIEF: {normalized}"
        await ctx.send_message([ChatMessage.user(prompt)], target_id=self._agent_id)


@dataclass
class HumanApprovalRequest:
    prompt: str = ""
    draft: str = ""
    iteration: int = 0


class ReviewGateway(Executor):
    """Routes agent drafts to humans and optionally back for revisions."""

    def __init__(self, id: str, writer_id: str) -> None:  # noqa: A002
        super().__init__(id)
        self._writer_id = writer_id
        self._iteration = 0

    @handler
    async def on_agent_response(
        self, response: AgentExecutorResponse, ctx: WorkflowContext
    ) -> None:
        self._iteration += 1
        await ctx.request_info(
            HumanApprovalRequest(
                prompt="Review the draft. Reply 'approve' or provide edit instructions.",
                draft=response.agent_response.text,
                iteration=self._iteration,
            ),
            str,
        )

    @response_handler
    async def on_human_feedback(
        self,
        original_request: HumanApprovalRequest,
        feedback: str,
        ctx: WorkflowContext[list[ChatMessage], str],
    ) -> None:
        reply = feedback.strip()
        if not reply or reply.lower() == "approve":
            await ctx.yield_output(original_request.draft)
            return
        prompt = (
            "Revise the launch note. Respond with the new copy only.\n\n"
            f"Previous draft:\n{original_request.draft}\n\nHuman guidance: {reply}"
        )
        await ctx.send_message([ChatMessage.user(prompt)], target_id=self._writer_id)

    def snapshot_state(self) -> Any:
        return {"iteration": self._iteration}

    def restore_state(self, state: Any) -> None:
        self._iteration = state.get("iteration", 0)


def create_workflow(store: FileCheckpointStore, drafts: list[str]) -> Workflow:
    writer_agent = ChatAgent(
        ScriptedChatClient(drafts),
        "Write concise, warm release notes that sound human and helpful.",
        name="writer",
    )
    writer = AgentExecutor(writer_agent)
    review_gateway = ReviewGateway("review_gateway", writer_id="writer")
    prepare_brief = BriefPreparer("prepare_brief", agent_id="writer")
    return (
        # MAF's max_iterations=6 counts one call's supersteps; ours is the run's budget across
        # every resume (API.md), and this run takes 7 supersteps over its three calls.
        WorkflowBuilder("release-notes", max_supersteps=12)
        .set_start_executor(prepare_brief)
        .add_edge(prepare_brief, writer)
        .add_edge(writer, review_gateway)
        .add_edge(review_gateway, writer)  # revisions loop
        .with_checkpointing(store)
        .build()
    )


async def test_checkpoint_with_human_in_the_loop_resumes_with_a_pre_supplied_answer(
    tmp_path: Path,
) -> None:
    store = FileCheckpointStore(tmp_path)
    first = create_workflow(store, ["Draft one.", "Draft two, warmer."])
    paused = await first.run("  Ship the   new export feature ")
    assert paused.status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
    [request] = paused.pending_requests
    assert request.data.iteration == 1
    # The human is away: the program stops. Later a new one asks for a revision.
    listing = await store.list(run_id=paused.run_id)
    waiting = [m for m in listing if m.pending_request_ids == [request.request_id]]
    assert waiting
    second = create_workflow(store, ["Draft two, warmer."])
    revised = await second.run(
        checkpoint_id=waiting[-1].id, responses={request.request_id: "make it warmer"}
    )
    assert not any(
        isinstance(e, RequestInfoEvent) and e.request_id == request.request_id
        for e in revised.events
    )
    [again] = revised.pending_requests
    assert (again.data.iteration, again.data.draft) == (2, "Draft two, warmer.")
    # A third program approves.
    third = create_workflow(store, [])
    done = await third.run(
        checkpoint_id=revised.last_checkpoint_id, responses={again.request_id: "approve"}
    )
    assert done.outputs == ["Draft two, warmer."]
    checkpoint = await store.load(done.last_checkpoint_id or "")
    assert checkpoint is not None
    assert checkpoint.shared_state == {"brief": "Ship the new export feature."}


# --- composition/sub_workflow_basics ------------------------------------------------------------


@dataclass
class TextProcessingRequest:
    text: str
    task_id: str


@dataclass
class TextProcessingResult:
    task_id: str
    text: str
    word_count: int
    char_count: int


class TextProcessor(Executor):
    def __init__(self) -> None:
        super().__init__("text_processor")

    @handler
    async def process_text(
        self, request: TextProcessingRequest, ctx: WorkflowContext[Never, TextProcessingResult]
    ) -> None:
        word_count = len(request.text.split()) if request.text.strip() else 0
        await ctx.yield_output(
            TextProcessingResult(
                task_id=request.task_id,
                text=request.text,
                word_count=word_count,
                char_count=len(request.text),
            )
        )


class TextProcessingOrchestrator(Executor):
    """Keeps its results in attributes, the way the MAF sample does."""

    def __init__(self) -> None:
        super().__init__("text_orchestrator")
        self.results: list[TextProcessingResult] = []
        self.expected_count = 0

    @handler
    async def start_processing(
        self, texts: list[str], ctx: WorkflowContext[TextProcessingRequest]
    ) -> None:
        self.expected_count = len(texts)
        for i, text in enumerate(texts):
            request = TextProcessingRequest(text=text, task_id=f"task_{i + 1}")
            await ctx.send_message(request, target_id="text_processor_workflow")

    @handler
    async def collect_result(
        self, result: TextProcessingResult, ctx: WorkflowContext[Never, list[TextProcessingResult]]
    ) -> None:
        self.results.append(result)
        if len(self.results) == self.expected_count:
            await ctx.yield_output(self.results)


async def test_sub_workflow_basics() -> None:
    processing = WorkflowBuilder().set_start_executor(TextProcessor()).build()
    sub_workflow = SubWorkflowExecutor(processing, id="text_processor_workflow")
    orchestrator = TextProcessingOrchestrator()
    main_workflow = (
        WorkflowBuilder()
        .set_start_executor(orchestrator)
        .add_edge(orchestrator, sub_workflow)
        .add_edge(sub_workflow, orchestrator)
        .build()
    )
    texts = ["Hello world! This is a simple test.", "Short text.", "", "   Spaces   around   "]
    [results] = (await main_workflow.run(texts)).get_outputs()
    by_task = {r.task_id: (r.word_count, r.char_count) for r in results}
    assert by_task == {"task_1": (7, 35), "task_2": (2, 11), "task_3": (0, 0), "task_4": (2, 21)}
