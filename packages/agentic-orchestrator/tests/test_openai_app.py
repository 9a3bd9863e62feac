"""The OpenAI endpoint's app in process (``httpx.ASGITransport``): what a request may hold,
how targets are named, and that every body it sends has the shape the ``openai`` SDK parses."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from openai.types import Model
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from agentic_core import ChatAgent, UsageDetails
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import OrchestrationConfigError, SequentialBuilder, create_openai_app
from agentic_orchestrator._openai._wire import chunk, completion, model_list

from ._openai_support import HeldModel

BASE = "http://127.0.0.1:8000"


def agent(name: str = "echo") -> ChatAgent:
    return ChatAgent(ScriptedChatClient(["hello"]), name=name)


async def post(body: Any, **headers: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=create_openai_app([agent()]))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        if isinstance(body, bytes):
            headers.setdefault("content-type", "application/json")
            return await client.post("/v1/chat/completions", content=body, headers=headers)
        return await client.post("/v1/chat/completions", json=body, headers=headers)


def test_every_body_parses_as_the_sdks_models() -> None:
    usage = UsageDetails(input_tokens=3, output_tokens=2, total_tokens=5)
    ChatCompletion.model_validate(completion("chatcmpl-1", "m", "hi", usage, 1))
    ChatCompletion.model_validate(completion("chatcmpl-1", "m", "hi", UsageDetails(), 1))
    for body in (
        chunk("chatcmpl-1", "m", 1, delta={"role": "assistant", "content": ""}),
        chunk("chatcmpl-1", "m", 1, delta={"content": "hi"}, include_usage=True),
        chunk("chatcmpl-1", "m", 1, finish_reason="stop"),
        chunk("chatcmpl-1", "m", 1, usage=usage),
    ):
        ChatCompletionChunk.model_validate(body)
    [listed] = model_list(["m"], 1)["data"]
    Model.model_validate(listed)


def test_unreported_usage_is_null_not_zero() -> None:
    assert completion("c", "m", "hi", UsageDetails(), 1)["usage"] is None


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "not JSON"),
        (b"[]", "JSON object"),
        ({"messages": [{"role": "user", "content": "hi"}]}, "model"),
        ({"model": "echo", "messages": []}, "messages is empty"),
        ({"model": "echo", "messages": [{"role": "wizard", "content": "hi"}]}, "role 'wizard'"),
        (
            {"model": "echo", "messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
            "only text",
        ),
        ({"model": "echo", "messages": [{"role": "tool", "content": "x"}]}, "tool_call_id"),
        ({"model": "echo", "n": 2, "messages": [{"role": "user", "content": "hi"}]}, "n must"),
    ],
)
async def test_a_malformed_request_is_a_400_saying_what_is_wrong(body: Any, fragment: str) -> None:
    response = await post(body)

    assert response.status_code == 400
    error = response.json()["error"]
    assert fragment in error["message"]
    assert error["type"] == "invalid_request_error"


async def test_a_form_post_is_refused_in_openais_shape() -> None:
    response = await post(b"model=echo", **{"content-type": "application/x-www-form-urlencoded"})

    assert response.status_code == 415
    assert response.json()["error"]["code"] == "unsupported_media_type"


async def test_an_unknown_route_is_404_in_openais_shape() -> None:
    transport = httpx.ASGITransport(app=create_openai_app([agent()]))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        response = await client.get("/v1/embeddings")

    assert response.status_code == 404
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}


async def test_one_model_is_described_by_its_name() -> None:
    transport = httpx.ASGITransport(app=create_openai_app({"helper": agent()}))
    async with httpx.AsyncClient(transport=transport, base_url=BASE) as client:
        found = await client.get("/v1/models/helper")
        missing = await client.get("/v1/models/other")

    assert Model.model_validate(found.json()).id == "helper"
    assert missing.status_code == 404


def test_targets_are_named_by_mapping_or_by_their_names() -> None:
    workflow = SequentialBuilder(participants=[agent("a")], name="flow").build()

    assert list(create_openai_app([agent("a"), workflow]).models) == ["a", "flow"]
    assert list(create_openai_app({"x": agent("a"), "y": workflow}).models) == ["x", "y"]


@pytest.mark.parametrize(
    ("targets", "fragment"),
    [
        ([], "at least one"),
        ([agent("a"), agent("a")], "two targets are named 'a'"),
        ({"x": "not an agent"}, "not a core Agent or Workflow"),
    ],
)
def test_bad_targets_are_refused_when_the_app_is_made(targets: Any, fragment: str) -> None:
    with pytest.raises(OrchestrationConfigError, match=fragment):
        create_openai_app(targets)


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(OrchestrationConfigError, match="max_concurrent_runs"):
        create_openai_app([agent()], max_concurrent_runs=0)
    with pytest.raises(OrchestrationConfigError, match="run_timeout_s"):
        create_openai_app([agent()], run_timeout_s=0)


async def stream_writes(target: ChatAgent, *, release: Any = None) -> list[bytes]:
    """The body writes of one streamed answer, the app called directly (``release``, when
    given, is awaited once the first write is out: a run that waits)."""
    app = create_openai_app([target])
    request = (
        b'{"model": "%s", "stream": true, "stream_options": {"include_usage": true},'
        b' "messages": [{"role": "user", "content": "hi"}]}' % (target.name or "").encode()
    )
    writes: list[bytes] = []
    first_write = asyncio.Event()
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": request, "more_body": False}
        await asyncio.Event().wait()  # the client stays
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            writes.append(message["body"])
            first_write.set()

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/v1/chat/completions",
        "raw_path": b"/v1/chat/completions",
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 50000),
        "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")],
        "http_version": "1.1",
    }
    answered = asyncio.ensure_future(app(scope, receive, send))
    if release is not None:
        await asyncio.wait_for(first_write.wait(), 10)
        assert len(writes) == 1
        release()
    await asyncio.wait_for(answered, 10)
    return writes


async def test_a_stream_writes_what_is_ready_at_once_in_one_write() -> None:
    [body] = await stream_writes(agent())  # the last write (more_body false) too
    events = body.split(b"\n\n")
    assert events[-2:] == [b"data: [DONE]", b""]
    chunks = [
        ChatCompletionChunk.model_validate_json(e.removeprefix(b"data: ")) for e in events[:-2]
    ]
    assert [c.choices[0].delta.role for c in chunks[:1]] == ["assistant"]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "hello"
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].usage is not None


async def test_a_stream_writes_the_role_chunk_while_the_run_waits() -> None:
    held = HeldModel()
    writes = await stream_writes(held.agent(), release=held.release.set)
    assert b'"role":"assistant"' in writes[0]
    assert b"released" not in writes[0]
    assert b"released" in writes[1]
    assert writes[1].endswith(b"data: [DONE]\n\n")
