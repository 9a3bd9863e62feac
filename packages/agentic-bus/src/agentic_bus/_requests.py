"""Human-in-the-loop across machines: pending requests on NATS, answers by request/reply.

A run that pauses on ``request_info`` under ``NatsRuntime.run``/``resume`` publishes each
pending request on ``agentic.workflow.<run>.request.<request_id>`` (stored in
``AGENTIC_EVENTS``, so a UI that starts later finds it). Its reply subject is
``agentic.response.<run>.<request_id>`` (outside the stream, so a request there is answered by
the coordinator and never by the stream's acknowledgement): a coordinator waiting for answers
(``wait_for_responses_s``) subscribes there, acknowledges each answer and resumes the run. With
no coordinator waiting, ``answer_request`` says so, and ``NatsRuntime.resume(workflow, run_id,
responses=...)`` from any process resumes the run instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from pydantic import BaseModel

from agentic_bus._connect import flush_ordered
from agentic_bus._subjects import Subjects
from agentic_core import (
    BusMessage,
    MessageBus,
    NoRespondersError,
    RequestInfoEvent,
    WorkflowGraph,
)

__all__ = ["PendingRequest", "answer_request", "publish_requests", "wait_for_responses"]


class PendingRequest(BaseModel):
    """A request a paused run waits on, as published on NATS."""

    run_id: str
    workflow_name: str
    request_id: str
    source_executor_id: str
    data: Any
    """The request, encoded by the workflow's type registry (plain JSON for plain values)."""
    response_type: str
    reply_subject: str
    """Where ``answer_request`` sends the answer."""


async def publish_requests(
    client: NatsClient,
    subjects: Subjects,
    workflow: WorkflowGraph,
    run_id: str,
    requests: list[RequestInfoEvent],
) -> list[PendingRequest]:
    """Publish the run's pending requests (stored by the events stream)."""
    js = client.jetstream()  # pyright: ignore[reportUnknownMemberType]
    published: list[PendingRequest] = []
    for request in requests:
        response_type = request.response_type
        pending = PendingRequest(
            run_id=run_id,
            workflow_name=workflow.name,
            request_id=request.request_id,
            source_executor_id=request.source_executor_id,
            data=workflow.type_registry.encode(request.data),
            response_type=getattr(response_type, "__name__", str(response_type)),
            reply_subject=subjects.response(run_id, request.request_id),
        )
        await js.publish(
            subjects.request(run_id, request.request_id),
            pending.model_dump_json().encode(),
            headers={"Nats-Msg-Id": f"{run_id}:request:{request.request_id}"},
        )
        published.append(pending)
    return published


async def wait_for_responses(
    client: NatsClient,
    subjects: Subjects,
    run_id: str,
    request_ids: set[str],
    timeout_s: float,
    ready: asyncio.Event | None = None,
) -> dict[str, Any]:
    """Answers to ``request_ids`` sent with ``answer_request`` (all, or those in ``timeout_s``)."""
    answers: dict[str, Any] = {}
    complete = asyncio.Event()

    async def on_answer(msg: Msg) -> None:
        try:
            body = json.loads(msg.data)
            request_id = str(body["request_id"])
        except (ValueError, KeyError, TypeError):
            if msg.reply:
                await client.publish(msg.reply, b'{"accepted":false,"error":"malformed answer"}')
            return
        accepted = request_id in request_ids and request_id not in answers
        if accepted:
            answers[request_id] = body.get("response")
        if msg.reply:
            reply: dict[str, Any] = {"accepted": accepted}
            if not accepted:
                reply["error"] = f"request {request_id!r} is not pending in run {run_id}"
            await client.publish(msg.reply, json.dumps(reply).encode())
        if answers.keys() >= request_ids:
            complete.set()

    subscription = await client.subscribe(subjects.responses(run_id), cb=on_answer)  # pyright: ignore[reportUnknownMemberType]
    try:
        await flush_ordered(client)
        if ready is not None:
            ready.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(complete.wait(), timeout_s)
    finally:
        # Drain, not unsubscribe: an answer already on its way is still handled and gets its
        # "not pending" reply; unsubscribing dropped it, so its sender waited out its timeout.
        await subscription.drain()
    return answers


async def answer_request(
    bus: MessageBus,
    request: PendingRequest | BusMessage,
    response: Any,
    *,
    timeout_s: float = 10.0,
) -> None:
    """Answer a pending request; the waiting coordinator resumes the run.

    ``request`` is the ``PendingRequest`` (or the ``BusMessage`` it arrived in). ``response``
    must be JSON-able (a pydantic model is sent as its JSON).

    Raises:
        NoRespondersError: no coordinator waits for this run (resume it with
            ``NatsRuntime.resume(workflow, run_id, responses={request_id: response})``).
        ValueError: the coordinator refused the answer (not pending any more).
    """
    pending = (
        PendingRequest.model_validate_json(request.data)
        if isinstance(request, BusMessage)
        else request
    )
    value = response.model_dump(mode="json") if isinstance(response, BaseModel) else response
    try:
        reply = await bus.request(
            pending.reply_subject,
            {"request_id": pending.request_id, "response": value},
            timeout_s=timeout_s,
        )
    except NoRespondersError:
        raise NoRespondersError(
            f"no coordinator is waiting for run {pending.run_id}: resume it with "
            f"NatsRuntime.resume(workflow, {pending.run_id!r}, "
            f"responses={{{pending.request_id!r}: ...}})"
        ) from None
    verdict = reply.json_value()
    if not verdict.get("accepted"):
        raise ValueError(verdict.get("error", "the coordinator refused the answer"))
