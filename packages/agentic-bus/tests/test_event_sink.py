"""NatsEventSink and replay_events against a real nats-server: a recorded run comes back equal
and in order (user types, custom events, a paused and resumed run), runs stay apart, odd ids are
escaped, follow mode ends with the run, a server restart loses and duplicates nothing, a server
that stays away is a clear BusError, audit records land in AGENTIC_AUDIT, and plain NATS
subscribers see events live."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import unquote

import nats
import pytest
from pydantic import BaseModel

from agentic_bus import NatsBus, PayloadTooLargeError, subject_token
from agentic_bus._events._naming import event_codec
from agentic_bus._events._replay import replay_events
from agentic_bus._events._sink import NatsEventSink
from agentic_core import (
    AgentRunUpdateEvent,
    BusError,
    Executor,
    ExecutorCompletedEvent,
    RequestInfoEvent,
    SerializationError,
    SuperstepCompletedEvent,
    Workflow,
    WorkflowBuilder,
    WorkflowCompletedEvent,
    WorkflowContext,
    WorkflowEvent,
    WorkflowOutputEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
    handler,
    response_handler,
)
from tests.fixtures.servers import ServerProcess

# -- a small workflow: a custom event, a user type as output, a request_info pause ------------


class Report(BaseModel):
    title: str
    score: int


class Question(BaseModel):
    text: str


class Progress(WorkflowEvent):
    """A custom event."""

    step: str
    percent: int


class Draft(Executor):
    @handler
    async def on_text(self, message: str, ctx: WorkflowContext[str, Report]) -> None:
        await ctx.add_event(Progress(step="drafted", percent=50))
        await ctx.send_message(message.upper())


class Review(Executor):
    @handler
    async def on_text(self, message: str, ctx: WorkflowContext[None, Report]) -> None:
        await ctx.yield_output(Report(title=message, score=len(message)))
        await ctx.request_info(Question(text=f"publish {message}?"), bool)

    @response_handler
    async def on_answer(
        self, question: Question, answer: bool, ctx: WorkflowContext[None, Report]
    ) -> None:
        await ctx.yield_output(Report(title=f"{question.text} {answer}", score=int(answer)))


def review_workflow() -> Workflow:
    draft, review = Draft("draft"), Review("review")
    return WorkflowBuilder("review").set_start_executor(draft).add_edge(draft, review).build()


def shape(events: list[WorkflowEvent]) -> list[tuple[str, Any]]:
    """Type names and key fields (durations vary, the rest must not)."""
    out: list[tuple[str, Any]] = []
    for event in events:
        fields = event.model_dump(exclude={"duration_s"})
        out.append((type(event).__name__, fields))
    return out


async def collect(events: AsyncIterator[WorkflowEvent]) -> list[WorkflowEvent]:
    return [event async for event in events]


async def stored_count(url: str, stream: str, subject: str) -> int:
    client = await nats.connect(url)
    try:
        info = await client.jetstream().stream_info(stream, subjects_filter=subject)
        return sum((info.state.subjects or {}).values())
    finally:
        await client.close()


# -- recording and replaying ------------------------------------------------------------------


async def test_a_recorded_run_replays_equal_events_in_order(nats_server: str) -> None:
    workflow = review_workflow()
    async with NatsBus(nats_server) as bus:
        seen = await bus.subscribe("agentic.workflow.*.>")
        async with NatsEventSink(bus, workflow=workflow) as sink:
            first = await collect(sink.record(workflow.run_stream("draft one")))
        run_id = first[0].run_id if isinstance(first[0], WorkflowStartedEvent) else ""
        request = next(e for e in first if isinstance(e, RequestInfoEvent))
        last = first[-1]
        assert isinstance(last, WorkflowCompletedEvent)
        assert last.status == WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
        # The resumed run, recorded by another sink (another process): numbering continues.
        async with NatsEventSink(nats_server, workflow=workflow) as other:
            second = await collect(
                other.record(workflow.run_stream(responses={request.request_id: True}))
            )
        await bus.flush()
        live = []
        while len(live) < len(first) + len(second):
            live.append(await asyncio.wait_for(anext(seen), 2))

    recorded = first + second
    replayed = await collect(replay_events(nats_server, run_id, workflow=review_workflow()))
    assert shape(replayed) == shape(recorded)
    assert replayed == recorded  # durations too: JSON floats round-trip
    outputs = [e.data for e in replayed if isinstance(e, WorkflowOutputEvent)]
    assert outputs == [
        Report(title="DRAFT ONE", score=9),
        Report(title="publish DRAFT ONE? True", score=1),
    ]
    assert any(isinstance(e, Progress) and e.percent == 50 for e in replayed)
    requests = [e for e in replayed if isinstance(e, RequestInfoEvent)]
    assert requests[0].data == Question(text="publish DRAFT ONE?")
    assert requests[0].response_type is bool

    # The subject layout and headers, as a plain subscriber saw them.
    suffixes = [m.subject.split(".", 3)[3] for m in live]
    assert suffixes[:5] == [
        "started",
        "superstep.started",
        "executor.draft.started",
        "event.Progress",
        "executor.draft.completed",
    ]
    assert "output" in suffixes
    assert f"request_info.{subject_token(request.request_id)}" in suffixes
    assert suffixes.count("completed") == 2
    assert {m.subject.split(".")[2] for m in live} == {run_id}
    seqs = [int(m.headers["Agentic-Seq"]) for m in live]
    assert seqs == list(range(1, len(recorded) + 1))
    assert [m.headers["Nats-Msg-Id"] for m in live] == [f"{run_id}:{n}" for n in seqs]
    assert {m.headers["Agentic-Run"] for m in live} == {run_id}
    assert {m.headers["Agentic-Workflow"] for m in live} == {workflow.id}
    assert [m.headers["Agentic-Event"] for m in live] == [type(e).__name__ for e in recorded]


async def test_only_some_kinds_and_a_user_type_without_its_workflow(nats_server: str) -> None:
    workflow = review_workflow()
    async with NatsEventSink(nats_server, workflow=workflow) as sink:
        events = await collect(sink.record(workflow.run_stream("kinds")))
    run_id = events[0].run_id if isinstance(events[0], WorkflowStartedEvent) else ""

    completions = await collect(replay_events(nats_server, run_id, kinds=["executor.*.completed"]))
    assert [type(e) for e in completions] == [ExecutorCompletedEvent] * 2
    ends = await collect(replay_events(nats_server, run_id, kinds=["superstep", "completed"]))
    assert [type(e).__name__ for e in ends] == [
        "SuperstepStartedEvent",
        "SuperstepCompletedEvent",
        "SuperstepStartedEvent",
        "SuperstepCompletedEvent",
        "WorkflowCompletedEvent",
    ]
    # Without the workflow, its Report cannot be decoded: a clear error, not a dict.
    with pytest.raises(SerializationError, match=r"pass workflow="):
        await collect(replay_events(nats_server, run_id, kinds=["output"]))
    with pytest.raises(ValueError, match="committed"):
        await collect(replay_events(nats_server, run_id, kinds=["committed"]))
    with pytest.raises(ValueError, match="unknown event kind"):
        await collect(replay_events(nats_server, run_id, kinds=["out put"]))
    assert await collect(replay_events(nats_server, "no-such-run")) == []


async def test_two_interleaved_runs_replay_separately(nats_server: str) -> None:
    workflow = review_workflow()
    async with NatsEventSink(nats_server, workflow=workflow) as sink:

        async def one(text: str) -> list[WorkflowEvent]:
            out: list[WorkflowEvent] = []
            async for event in sink.record(workflow.run_stream(text)):
                out.append(event)
                await asyncio.sleep(0)  # let the other run interleave
            return out

        a, b = await asyncio.gather(one("alpha"), one("beta"))
        assert sink._seqs == {}  # both runs ended and are stored: nothing kept per run
    for recorded in (a, b):
        started = recorded[0]
        assert isinstance(started, WorkflowStartedEvent)
        replayed = await collect(replay_events(nats_server, started.run_id, workflow=workflow))
        assert replayed == recorded


async def test_odd_ids_are_escaped_and_never_mix(nats_server: str) -> None:
    odd_run, plain_run = "run.1 *>", "run"
    executor_id = "ex.a *"
    async with NatsBus(nats_server) as bus:
        escaped = await bus.subscribe(f"agentic.workflow.{subject_token(odd_run)}.>")
        async with NatsEventSink(bus) as sink:
            for run_id in (odd_run, plain_run, "r\n1 é%"):
                await sink.emit(
                    WorkflowStartedEvent(run_id=run_id, workflow_id="w.f"),
                    run_id=run_id,
                    workflow_id="w.f",
                )
                await sink.emit(
                    ExecutorCompletedEvent(executor_id=executor_id, superstep=0, duration_s=0.5),
                    run_id=run_id,
                    workflow_id="w.f",
                )
                await sink.emit(
                    WorkflowCompletedEvent(superstep_count=1, duration_s=1.0),
                    run_id=run_id,
                    workflow_id="w.f",
                )
        messages = [await asyncio.wait_for(anext(escaped), 2) for _ in range(3)]
    assert [m.subject for m in messages] == [
        f"agentic.workflow.{subject_token(odd_run)}.started",
        f"agentic.workflow.{subject_token(odd_run)}.executor.{subject_token(executor_id)}.completed",
        f"agentic.workflow.{subject_token(odd_run)}.completed",
    ]
    assert unquote(messages[0].headers["Agentic-Run"]) == odd_run
    assert messages[0].headers["Nats-Msg-Id"] == "run.1%20*>:1"
    for run_id in (odd_run, plain_run, "r\n1 é%"):
        replayed = await collect(replay_events(nats_server, run_id))
        assert [type(e).__name__ for e in replayed] == [
            "WorkflowStartedEvent",
            "ExecutorCompletedEvent",
            "WorkflowCompletedEvent",
        ]
        started = replayed[0]
        assert isinstance(started, WorkflowStartedEvent)
        assert started.run_id == run_id
        completed = replayed[1]
        assert isinstance(completed, ExecutorCompletedEvent)
        assert completed.executor_id == executor_id


async def test_follow_mode_returns_once_the_run_completes(nats_server: str) -> None:
    run_id = f"follow-{time.monotonic_ns()}"
    follower = asyncio.create_task(collect(replay_events(nats_server, run_id, follow=True)))
    async with NatsEventSink(nats_server) as sink:
        await sink.emit(
            WorkflowStartedEvent(run_id=run_id, workflow_id="wf"), run_id=run_id, workflow_id="wf"
        )
        for step in range(3):
            await asyncio.sleep(0.05)
            await sink.emit(
                SuperstepCompletedEvent(superstep=step), run_id=run_id, workflow_id="wf"
            )
        await sink.flush()
        await asyncio.sleep(0.1)
        assert not follower.done()  # still waiting for the end of the run
        await sink.emit(
            WorkflowCompletedEvent(superstep_count=3, duration_s=0.2),
            run_id=run_id,
            workflow_id="wf",
        )
    events = await asyncio.wait_for(follower, 5)
    assert [type(e).__name__ for e in events] == [
        "WorkflowStartedEvent",
        *["SuperstepCompletedEvent"] * 3,
        "WorkflowCompletedEvent",
    ]
    # Following a run that already ended returns at once; only some kinds, still ends.
    async with asyncio.timeout(3):
        again = await collect(replay_events(nats_server, run_id, follow=True))
        outputs = await collect(replay_events(nats_server, run_id, follow=True, kinds=["started"]))
    assert again == events
    assert [type(e) for e in outputs] == [WorkflowStartedEvent]


async def test_committed_entries_are_skipped_and_order_is_by_seq(nats_server: str) -> None:
    run_id = f"raw-{time.monotonic_ns()}"
    codec = event_codec()
    events = [
        WorkflowStartedEvent(run_id=run_id, workflow_id="wf"),
        SuperstepCompletedEvent(superstep=0),
        WorkflowCompletedEvent(superstep_count=1, duration_s=0.1),
    ]
    async with NatsEventSink(nats_server) as sink:
        await sink.emit(events[0], run_id=run_id, workflow_id="wf")
    client = await nats.connect(nats_server)
    try:
        js = client.jetstream()
        # What a retry after a lost message may store: #3 before #2; and the runtime's
        # committed log, which is not a workflow event.
        await js.publish(f"agentic.workflow.{run_id}.committed", b'{"superstep":0}')
        for seq in (3, 2):
            event = events[seq - 1]
            subject = "completed" if seq == 3 else "superstep.completed"
            await js.publish(
                f"agentic.workflow.{run_id}.{subject}",
                json.dumps(codec.encode(event)).encode(),
                headers={
                    "Agentic-Seq": str(seq),
                    "Agentic-Event": type(event).__name__,
                    "Nats-Msg-Id": f"{run_id}:{seq}",
                },
            )
    finally:
        await client.close()
    assert await collect(replay_events(nats_server, run_id)) == events


# -- failures ---------------------------------------------------------------------------------


async def test_a_server_restart_mid_run_loses_and_duplicates_nothing(
    own_nats_server: ServerProcess,
) -> None:
    url = own_nats_server.url
    run_id = "restarted"
    sent: list[WorkflowEvent] = [WorkflowStartedEvent(run_id=run_id, workflow_id="wf")]
    sent += [SuperstepCompletedEvent(superstep=n) for n in range(120)]
    sent.append(WorkflowCompletedEvent(superstep_count=120, duration_s=1.0))
    async with NatsEventSink(url, ack_timeout_s=0.5, retry_for_s=20) as sink:
        for event in sent[:40]:
            await sink.emit(event, run_id=run_id, workflow_id="wf")
        own_nats_server.kill()
        for event in sent[40:80]:  # sent while the server is away
            await sink.emit(event, run_id=run_id, workflow_id="wf")
        await asyncio.to_thread(own_nats_server.start_again)
        for event in sent[80:]:
            await sink.emit(event, run_id=run_id, workflow_id="wf")
        await sink.flush()
    assert await stored_count(url, "AGENTIC_EVENTS", f"agentic.workflow.{run_id}.>") == len(sent)
    assert await collect(replay_events(url, run_id)) == sent


async def test_a_follower_survives_a_server_restart(own_nats_server: ServerProcess) -> None:
    url, run_id = own_nats_server.url, "followed"
    before = [WorkflowStartedEvent(run_id=run_id, workflow_id="wf")]
    before += [SuperstepCompletedEvent(superstep=n) for n in range(3)]
    after: list[WorkflowEvent] = [SuperstepCompletedEvent(superstep=3)]
    after.append(WorkflowCompletedEvent(superstep_count=4, duration_s=1.0))
    async with NatsEventSink(url, ack_timeout_s=0.5) as sink:
        for event in before:
            await sink.emit(event, run_id=run_id, workflow_id="wf")
        await sink.flush()
        follower = asyncio.create_task(collect(replay_events(url, run_id, follow=True)))
        await asyncio.sleep(0.2)  # it has read what is stored and waits
        own_nats_server.kill()  # its in-memory consumer goes with the server
        await asyncio.to_thread(own_nats_server.start_again)
        for event in after:
            await sink.emit(event, run_id=run_id, workflow_id="wf")
        await sink.flush()
        assert await asyncio.wait_for(follower, 10) == before + after


async def test_a_server_that_stays_away_is_a_clear_bus_error(
    own_nats_server: ServerProcess,
) -> None:
    sink = NatsEventSink(own_nats_server.url, ack_timeout_s=0.3, retry_for_s=0.8)
    unreported = NatsEventSink(own_nats_server.url, ack_timeout_s=0.3, retry_for_s=0.8)
    for one in (sink, unreported):
        await one.emit(
            WorkflowStartedEvent(run_id="lost", workflow_id="wf"), run_id="lost", workflow_id="wf"
        )
        await one.flush()
    own_nats_server.kill()
    for one in (sink, unreported):
        await one.emit(SuperstepCompletedEvent(superstep=0), run_id="lost", workflow_id="wf")
    with pytest.raises(BusError, match=r"could not store an event of run lost") as caught:
        await sink.flush()
    assert "AGENTIC_EVENTS" in str(caught.value)
    with pytest.raises(BusError, match="could not store"):  # the sink stays failed
        await sink.emit(SuperstepCompletedEvent(superstep=1), run_id="lost", workflow_id="wf")
    await sink.close()  # quiet: the failure was reported already
    with pytest.raises(BusError, match="could not store"):  # reported by close, at last
        await unreported.close()


# -- audit, live updates, misuse --------------------------------------------------------------


class Approval(BaseModel):
    by: str
    approved: bool


async def test_audit_decisions_land_in_agentic_audit(nats_server: str) -> None:
    run_id = f"audit-{time.monotonic_ns()}"
    async with NatsEventSink(nats_server) as sink:
        await sink.audit(Approval(by="ana", approved=True), run_id=run_id, kind="approval")
        await sink.audit({"reason": "budget"}, run_id=run_id, kind="veto", workflow_id="wf")
    client = await nats.connect(nats_server)
    try:
        js = client.jetstream()
        approval = await js.get_last_msg("AGENTIC_AUDIT", f"agentic.audit.{run_id}.approval")
        veto = await js.get_last_msg("AGENTIC_AUDIT", f"agentic.audit.{run_id}.veto")
    finally:
        await client.close()
    body = json.loads(approval.data or b"")
    assert body["decision"] == {"by": "ana", "approved": True}
    assert body["type"] == "Approval"
    assert body["run_id"] == run_id
    assert (approval.headers or {})["Agentic-Audit"] == "approval"
    assert json.loads(veto.data or b"")["decision"] == {"reason": "budget"}
    assert json.loads(veto.data or b"")["workflow_id"] == "wf"


async def test_a_subscriber_sees_executor_completions_live(nats_server: str) -> None:
    workflow = review_workflow()
    async with NatsBus(nats_server) as bus:
        completions = await bus.subscribe("agentic.workflow.*.executor.*.completed")
        async with NatsEventSink(bus, workflow=workflow) as sink:
            async for event in sink.record(workflow.run_stream("live")):
                if isinstance(event, ExecutorCompletedEvent):
                    message = await asyncio.wait_for(anext(completions), 2)
                    assert message.subject.endswith(f".executor.{event.executor_id}.completed")
                    assert message.headers["Agentic-Event"] == "ExecutorCompletedEvent"


async def test_live_updates_only_when_asked(nats_server: str) -> None:
    run_id = f"live-{time.monotonic_ns()}"
    update = AgentRunUpdateEvent(executor_id="writer", update="tok")
    async with NatsBus(nats_server) as bus:
        live = await bus.subscribe(f"agentic.workflow.{run_id}.live.>")
        async with NatsEventSink(bus) as quiet:
            await quiet.emit(update, run_id=run_id, workflow_id="wf")
        async with NatsEventSink(bus, include_live=True) as loud:
            await loud.emit(update, run_id=run_id, workflow_id="wf")
        message = await asyncio.wait_for(anext(live), 2)
        assert message.subject == f"agentic.workflow.{run_id}.live.writer"
        await bus.flush()
    assert await collect(replay_events(nats_server, run_id)) == []
    assert await collect(replay_events(nats_server, run_id, kinds=["live"])) == [update]


async def test_an_oversize_event_is_refused_and_the_sink_goes_on(nats_server: str) -> None:
    run_id = f"big-{time.monotonic_ns()}"
    big = WorkflowOutputEvent(data="x" * (3 * 1024 * 1024), source_executor_id="a")
    small = WorkflowOutputEvent(data="x", source_executor_id="a")
    async with NatsEventSink(nats_server) as sink:
        with pytest.raises(PayloadTooLargeError, match="keep large data out of events"):
            await sink.emit(big, run_id=run_id, workflow_id="wf")
        await sink.emit(small, run_id=run_id, workflow_id="wf")
    assert await collect(replay_events(nats_server, run_id)) == [small]


async def test_record_needs_a_run_stream(nats_server: str) -> None:
    async def events() -> AsyncIterator[WorkflowEvent]:
        yield SuperstepCompletedEvent(superstep=0)

    async with NatsEventSink(nats_server) as sink:
        with pytest.raises(ValueError, match="WorkflowStartedEvent"):
            await collect(sink.record(events()))
    with pytest.raises(BusError, match="closed"):
        await sink.emit(
            WorkflowStartedEvent(run_id="x", workflow_id="w"), run_id="x", workflow_id="w"
        )
    assert "NatsEventSink(" in repr(sink)
