"""Answers to a paused run's requests: every answer gets a verdict, none waits out a timeout."""

from __future__ import annotations

import asyncio

import nats

from agentic_bus import NatsBus, PendingRequest, Subjects, answer_request
from agentic_bus._requests import wait_for_responses
from agentic_core import NoRespondersError

RUN_ID = "run-answers"
REQUEST_ID = "req-1"
DUPLICATES = 50


async def test_two_answers_at_once_one_is_taken_the_other_refused_not_left_unanswered(
    nats_server: str,
) -> None:
    subjects = Subjects()
    pending = PendingRequest(
        run_id=RUN_ID,
        workflow_name="approval",
        request_id=REQUEST_ID,
        source_executor_id="approver",
        data="ship it?",
        response_type="bool",
        reply_subject=subjects.response(RUN_ID, REQUEST_ID),
    )
    client = await nats.connect(nats_server)
    try:
        ready = asyncio.Event()
        waiting = asyncio.ensure_future(
            wait_for_responses(client, subjects, RUN_ID, {REQUEST_ID}, 30, ready=ready)
        )
        await ready.wait()
        async with NatsBus(nats_server) as bus:
            # Many answers at once: most are queued at the coordinator when the first one
            # completes the run's answers, and each must still get a verdict.
            outcomes = await asyncio.gather(
                answer_request(bus, pending, True, timeout_s=5),
                *(answer_request(bus, pending, False, timeout_s=5) for _ in range(DUPLICATES)),
                return_exceptions=True,
            )
        assert await waiting == {REQUEST_ID: True}
    finally:
        await client.close()
    assert outcomes[0] is None
    for refused in outcomes[1:]:
        assert isinstance(refused, (ValueError, NoRespondersError)), repr(refused)
        if isinstance(refused, ValueError):
            assert "not pending" in str(refused)
