"""NatsRuntime gives the same outputs, in the same order, as LocalRuntime (in-process workers
on their own connections, a real nats-server)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import uuid
from pathlib import Path

import pytest
from bus_graphs import Blob, approval, large, mapped, pipeline, random_graph, streaming
from nats.js.client import JetStreamContext
from nats.js.errors import NotFoundError
from worker_tasks import SETTINGS, workers

from agentic_bus import (
    CoordinatorFencedError,
    NatsBus,
    NatsConnectionError,
    NatsEventSink,
    NatsRuntime,
    PendingRequest,
    Subjects,
    Worker,
    replay_events,
)
from agentic_bus._task_wire import TaskMessage, TaskResultMessage
from agentic_core import (
    AgentRunUpdateEvent,
    Invocation,
    SuperstepCompletedEvent,
    WorkflowCompletedEvent,
    WorkflowExecutionError,
    WorkflowOutputEvent,
    WorkflowRunState,
    WorkflowStartedEvent,
)


async def test_the_pipeline_matches_the_local_run(nats_server: str) -> None:
    workflow = pipeline()
    local = await workflow.run(1)
    async with (
        workers(workflow, nats_server) as pool,
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        remote = await workflow.run(1, runtime=runtime)
    assert sum(w.tasks_done for w in pool) == 7  # one task per invocation, none twice
    assert remote.outputs == local.outputs
    assert remote.status == local.status


@pytest.mark.parametrize("seed", range(20))
async def test_random_graphs_match_the_local_run(nats_server: str, seed: int) -> None:
    workflow = random_graph(seed)
    local = await workflow.run(seed)
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        remote = await workflow.run(seed, runtime=runtime)
        streamed = [
            type(e).__name__
            async for e in workflow.run_stream(seed, runtime=runtime)
            if type(e).__name__ not in {"WorkflowStartedEvent", "WorkflowCompletedEvent"}
        ]
    local_stream = [
        type(e).__name__
        async for e in workflow.run_stream(seed)
        if type(e).__name__ not in {"WorkflowStartedEvent", "WorkflowCompletedEvent"}
    ]
    assert remote.outputs == local.outputs
    assert streamed == local_stream


async def test_a_3_mb_payload_goes_by_claim_check(nats_server: str) -> None:
    workflow = large()
    text = "abcdefghij" * 300_000
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        result = await workflow.run(Blob(text=text), runtime=runtime)
        # The same through run(): a 3 MB checkpoint in KV parts, a 3 MB committed-log entry.
        durable = await runtime.run(workflow, Blob(text=text))
        committed = await runtime.committed_outputs(workflow, durable.run_id)
    assert result.outputs == [Blob(text=text[::-1])]
    assert durable.outputs == committed == result.outputs


async def test_no_worker_is_a_clear_error_naming_the_pool(nats_server: str) -> None:
    workflow = random_graph(99)
    async with NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=1.5) as runtime:
        with pytest.raises(WorkflowExecutionError, match="no worker serves pool") as caught:
            await workflow.run(1, runtime=runtime)
        assert runtime.pool_for(workflow, "n0") in str(caught.value)


async def test_retries_see_previous_errors_across_workers(
    nats_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTIC_TEST_FLAGS", str(tmp_path))
    (tmp_path / "fail-a").touch()
    workflow = pipeline()
    async with (
        workers(workflow, nats_server, n=2),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        remote = await workflow.run(1, runtime=runtime)
    ran = (tmp_path / "ran-a").read_text().split()
    monkeypatch.delenv("AGENTIC_TEST_FLAGS")
    local = await workflow.run(1)
    assert remote.outputs == local.outputs
    assert [r.rsplit(".", 1)[1] for r in ran] == ["1", "2", "3"]
    assert (tmp_path / "previous-a").read_text().split() == ["2"]


async def test_streaming_updates_reach_the_coordinator_live(nats_server: str) -> None:
    workflow = streaming()
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        seen = [
            e
            async for e in workflow.run_stream("one two three", runtime=runtime)
            if isinstance(e, AgentRunUpdateEvent | WorkflowOutputEvent)
        ]
    updates = [e.update for e in seen if isinstance(e, AgentRunUpdateEvent)]
    assert updates == ["one", "two", "three"]  # live, before the barrier's output
    assert isinstance(seen[-1], WorkflowOutputEvent)
    assert seen[-1].data == "ONE TWO THREE"


async def _stored_result(js: JetStreamContext, subject: str) -> TaskResultMessage:
    """The result a worker stores on ``subject`` (waited for, 5 s at most)."""
    for _ in range(100):
        try:
            stored = await js.get_last_msg("AGENTIC_RESULTS", subject)
        except NotFoundError:
            await asyncio.sleep(0.05)
            continue
        return TaskResultMessage.model_validate_json(stored.data or b"")
    raise AssertionError(f"no worker stored a result on {subject}")


async def test_a_task_the_worker_cannot_decode_is_refused_naming_why(nats_server: str) -> None:
    # A type the worker's code does not define (a model of the coordinator's __main__, say)
    # is a clear "incompatible" result at once, not three redeliveries blamed on a crash.
    workflow = large()
    run_id = uuid.uuid4().hex
    invocation = Invocation(
        run_id=run_id, workflow_id=workflow.id, superstep=0, executor_id="echo",
        messages=[Blob(text="x")], shared_state={},
    )  # fmt: skip
    encoded = json.loads(
        json.dumps(workflow.type_registry.encode(invocation.to_data())).replace(
            "bus_graphs.Blob", "__main__.Blob"
        )
    )
    task = TaskMessage(
        task_id=invocation.invocation_id, run_id=run_id, workflow_name=workflow.name,
        fingerprint=workflow.fingerprint(), invocation=encoded,
        result_subject=Subjects().result(run_id, 0, "echo", 1),
    )  # fmt: skip
    subjects = Subjects()
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS) as runtime,
    ):
        client = await runtime.client()
        js = client.jetstream()
        pool = runtime.pool_for(workflow, "echo")
        await js.publish(subjects.task(pool, run_id, 0, "echo"), task.model_dump_json().encode())
        result_subject = subjects.result(run_id, 0, "echo", 1)
        result = await _stored_result(js, result_subject)
    assert result.status == "incompatible"
    assert result.error is not None
    assert "cannot decode" in result.error
    assert "__main__.Blob" in result.error


async def test_each_branch_of_a_dynamic_map_stores_its_own_result(nats_server: str) -> None:
    workflow = mapped(5)
    local = await workflow.run(5)
    async with (
        workers(workflow, nats_server, n=2),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        remote = await workflow.run(5, runtime=runtime)
        js = (await runtime.client()).jetstream()
        info = await js.stream_info(
            "AGENTIC_RESULTS", subjects_filter=f"agentic.result.{remote.run_id}.>"
        )
    stored = info.state.subjects or {}
    assert remote.outputs == local.outputs
    assert len(stored) == 7  # split, five branches of square, total: one subject each
    assert set(stored.values()) == {1}
    assert f"agentic.result.{remote.run_id}.1.square.1.4" in stored


async def test_a_task_the_worker_cannot_read_is_refused_where_it_says(nats_server: str) -> None:
    # A task of another protocol version (fields missing): stored as "incompatible" on its
    # result subject, so its run fails at once instead of waiting on workers that look alive.
    workflow = large()
    run_id = uuid.uuid4().hex
    subjects = Subjects()
    result_subject = subjects.result(run_id, 0, "echo", 1)
    odd = {"protocol": 1, "task_id": f"{run_id}.0.echo.1", "result_subject": result_subject}
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS) as runtime,
    ):
        js = (await runtime.client()).jetstream()
        pool = runtime.pool_for(workflow, "echo")
        await js.publish(subjects.task(pool, run_id, 0, "echo"), json.dumps(odd).encode())
        result = await _stored_result(js, result_subject)
    assert result.status == "incompatible"
    assert "cannot read the task" in (result.error or "")
    assert "fingerprint" in (result.error or "")  # the missing field is named


async def test_a_worker_that_cannot_connect_fails_wait_ready_naming_the_url() -> None:
    worker = Worker(large(), "nats://user:secret@127.0.0.1:9", connect_timeout_s=0.5)
    running = asyncio.create_task(worker.run())
    with pytest.raises(NatsConnectionError, match=r"127\.0\.0\.1:9") as caught:
        await asyncio.wait_for(worker.wait_ready(), 10)
    assert "secret" not in str(caught.value)
    with pytest.raises(NatsConnectionError):
        await running


async def test_existing_streams_keep_an_operators_limits_and_share_subjects_across_prefixes(
    nats_server: str,
) -> None:
    async with NatsRuntime(nats_server, settings=SETTINGS) as runtime:
        js = (await runtime.client()).jetstream()
        info = await js.stream_info("AGENTIC_RESULTS")
        limited = dataclasses.replace(info.config, max_bytes=512 * 1024 * 1024)
        await js.update_stream(limited)
    workflow = pipeline()
    acme = Subjects("acme")
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5, subjects=acme) as other,
    ):
        worker = Worker(workflow, nats_server, settings=SETTINGS, subjects=acme)
        serving = asyncio.create_task(worker.run())
        await worker.wait_ready()
        try:
            result = await asyncio.wait_for(workflow.run(1, runtime=other), 30)  # same streams
        finally:
            worker.stop()
            await serving
        js = (await other.client()).jetstream()
        info = await js.stream_info("AGENTIC_RESULTS")
    assert result.outputs == (await pipeline().run(1)).outputs
    assert info.config.max_bytes == 512 * 1024 * 1024  # not reset to agentic's default
    assert {"agentic.result.>", "acme.result.>"} <= set(info.config.subjects or [])


async def test_tasks_purged_by_a_cancelled_superstep_are_published_afresh(nats_server: str) -> None:
    # A cancelled superstep purges its queued tasks, but their message ids still dedupe for
    # two minutes: the same superstep run again (a resume) must not wait for ever on them.
    workflow = large()
    runtime = NatsRuntime(nats_server, settings=SETTINGS, build=uuid.uuid4().hex[:8],
                          worker_wait_s=1.0)  # fmt: skip
    invocation = Invocation(
        run_id=uuid.uuid4().hex, workflow_id=workflow.id, superstep=0, executor_id="echo",
        messages=[Blob(text="abc")], shared_state={},
    )  # fmt: skip
    async with runtime:
        pool = runtime.pool_for(workflow, "echo")
        first = asyncio.create_task(runtime.execute(workflow, [invocation]))
        await asyncio.sleep(0.3)  # published; no worker on this build's pool yet
        first.cancel()
        with pytest.raises(asyncio.CancelledError):
            await first
        worker = Worker(workflow, nats_server, pool=pool, settings=SETTINGS)
        serving = asyncio.create_task(worker.run())
        await worker.wait_ready()
        try:
            (result,) = await asyncio.wait_for(runtime.execute(workflow, [invocation]), 20)
        finally:
            worker.stop()
            await serving
    assert result.error is None
    assert result.outputs == [Blob(text="cba")]


async def test_run_stream_commits_before_it_yields_and_publishes_pending_requests(
    nats_server: str,
) -> None:
    workflow = approval()
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
        NatsBus(nats_server) as ui,
    ):
        requests = await ui.subscribe(Subjects().requests())
        async with NatsEventSink(ui, workflow=workflow) as sink:
            first = [e async for e in sink.record(runtime.run_stream(workflow, "ship it"))]
        assert isinstance(first[0], WorkflowStartedEvent)
        run_id = first[0].run_id
        assert isinstance(first[-1], WorkflowCompletedEvent)
        assert first[-1].status is WorkflowRunState.IDLE_WITH_PENDING_REQUESTS
        pending = PendingRequest.model_validate_json((await anext(requests)).data)
        assert pending.run_id == run_id
        second = [
            e
            async for e in runtime.run_stream(
                workflow, resume_run_id=run_id, responses={pending.request_id: True}
            )
        ]
        assert isinstance(second[-1], WorkflowCompletedEvent)
        assert second[-1].status is WorkflowRunState.COMPLETED
        committed = await runtime.committed_outputs(workflow, run_id)
        replayed = [e async for e in replay_events(ui, run_id, workflow=workflow)]
    streamed = [e.data for e in [*first, *second] if isinstance(e, WorkflowOutputEvent)]
    assert committed == streamed == ["draft: ship it", "publish SHIP IT? yes"]
    assert [type(e) for e in replayed] == [type(e) for e in first]


async def test_a_run_stream_taken_over_by_another_coordinator_is_fenced(nats_server: str) -> None:
    workflow = pipeline()
    async with (
        workers(workflow, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as first,
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as second,
    ):
        stream = first.run_stream(workflow, 1)
        run_id = ""
        async for event in stream:  # up to the first commit, then the stream is left waiting
            run_id = event.run_id if isinstance(event, WorkflowStartedEvent) else run_id
            if isinstance(event, SuperstepCompletedEvent):
                break
        taken = await second.resume(workflow, run_id)  # another process takes the run over
        with pytest.raises(CoordinatorFencedError):
            async for _ in stream:
                pass
        committed = await second.committed_outputs(workflow, run_id)
    assert committed == (await pipeline().run(1)).outputs
    assert taken.status is WorkflowRunState.COMPLETED


async def test_a_lost_update_in_a_map_fails_the_run_on_workers_too(nats_server: str) -> None:
    """Map branches on workers report what shared state they read: a hand-written reduce over a
    map fails with ``SharedStateConflictError``, as in a local run, instead of losing appends."""
    from agentic_core import (
        SharedStateConflictError,
        WorkflowBuilder,
        WorkflowContext,
        executor,
    )

    @executor
    async def split(n: int, ctx: WorkflowContext[int]) -> None:
        for k in range(n):
            await ctx.send_message(k)

    @executor
    async def append(k: int, ctx: WorkflowContext[int]) -> None:
        done: list[int] = await ctx.get_shared_state("results", [])
        await ctx.set_shared_state("results", [*done, k])

    workflow = WorkflowBuilder("hand-reduce").set_start_executor(split).add_edge(split, append)
    built = workflow.build()
    async with (
        workers(built, nats_server, n=1),
        NatsRuntime(nats_server, settings=SETTINGS, worker_wait_s=5) as runtime,
    ):
        with pytest.raises(SharedStateConflictError) as caught:
            await built.run(3, runtime=runtime)
    assert caught.value.key == "results"
    assert caught.value.executor_id == "append"
