"""The OpenAI-compatible endpoint as an attack surface, over a real uvicorn server: a wrong
token, a foreign Host and an oversized body are refused in OpenAI's error shape; runs are
bounded in number (429) and time (504, or an error event mid-stream); a run waiting for a
person is a clear error, never a hang; a client that disconnects mid-stream cancels its run."""

from __future__ import annotations

import asyncio
from typing import Never

import httpx
import openai
import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam
from structlog.testing import capture_logs

from agentic_core import (
    ChatAgent,
    ChatMessage,
    Executor,
    FunctionCallContent,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
    tool,
)
from agentic_core.testing import ScriptedChatClient
from agentic_orchestrator import create_openai_app

from ._openai_support import HeldModel, served

pytestmark = [pytest.mark.slow, pytest.mark.timeout(60)]

TOKEN = "openai-endpoint-test-token-0123"  # noqa: S105 - a fake secret
HI: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


def sdk(base_url: str, api_key: str = "unused") -> AsyncOpenAI:
    return AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)


def echo() -> ChatAgent:
    return ChatAgent(ScriptedChatClient(["hello"] * 5), name="echo")


@tool(approval_mode="always_require")
def deploy(service: str) -> str:
    """Deploy a service (needs a person's approval)."""
    return f"deployed {service}"


def deployer() -> ChatAgent:
    call = FunctionCallContent(call_id="c1", name="deploy", arguments={"service": "web"})
    model = ScriptedChatClient([ChatMessage.assistant(contents=[call]), "done"])
    return ChatAgent(model, name="deployer", tools=[deploy])


async def test_a_wrong_token_is_401_in_openais_shape() -> None:
    async with served([echo()], token=TOKEN) as base, sdk(base, api_key="wrong") as client:
        with pytest.raises(openai.AuthenticationError) as caught:
            await client.chat.completions.create(model="echo", messages=HI)

    body = caught.value.body
    assert isinstance(body, dict)
    assert body["code"] == "invalid_api_key"
    assert TOKEN not in str(body)


async def test_the_right_token_is_answered() -> None:
    async with served([echo()], token=TOKEN) as base, sdk(base, api_key=TOKEN) as client:
        answer = await client.chat.completions.create(model="echo", messages=HI)

    assert answer.choices[0].message.content == "hello"


async def test_a_foreign_host_is_refused() -> None:
    async with served([echo()]) as base, httpx.AsyncClient() as client:
        response = await client.post(
            f"{base}/chat/completions",
            json={"model": "echo", "messages": HI},
            headers={"host": "evil.example:8000"},
        )

    assert response.status_code == 421
    error = response.json()["error"]
    assert error["code"] == "misdirected_request"
    assert "evil.example" in error["message"]


async def test_an_oversized_body_is_413() -> None:
    async with served([echo()], max_body_bytes=2048) as base, sdk(base) as client:
        with pytest.raises(openai.APIStatusError) as caught:
            await client.chat.completions.create(
                model="echo",
                messages=[{"role": "user", "content": "x" * 10_000}],
            )

    assert caught.value.status_code == 413
    assert caught.value.code == "request_too_large"


async def test_a_run_waiting_for_approval_is_a_clear_error() -> None:
    async with served([deployer()]) as base, sdk(base) as client:
        with pytest.raises(openai.ConflictError) as caught:
            await client.chat.completions.create(model="deployer", messages=HI)

    assert caught.value.code == "input_required"
    assert "'deploy'" in caught.value.message
    assert "cannot take" in caught.value.message


async def test_a_streamed_run_waiting_for_approval_ends_with_an_error_event() -> None:
    async with served([deployer()]) as base, sdk(base) as client:
        stream = await client.chat.completions.create(
            model="deployer",
            messages=HI,
            stream=True,
        )
        with pytest.raises(openai.APIError, match="waits for a person"):
            async with asyncio.timeout(10):
                async for _ in stream:
                    pass


class Reviewer(Executor):
    """Asks a person before it answers (a workflow's ``request_info``)."""

    @handler
    async def ask(self, conversation: list[ChatMessage], ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(conversation[-1].text, bool)

    @response_handler
    async def decided(self, text: str, ok: bool, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"{text}: {'yes' if ok else 'no'}")


async def test_a_workflow_waiting_for_a_request_is_a_clear_error() -> None:
    review = WorkflowBuilder("review").set_start_executor(Reviewer("reviewer")).build()
    async with served([review]) as base, sdk(base) as client:
        with pytest.raises(openai.ConflictError) as caught:
            await client.chat.completions.create(model="review", messages=HI)

    assert caught.value.code == "input_required"
    assert "request_info" in caught.value.message


async def test_runs_past_the_bound_are_429() -> None:
    held = HeldModel()
    async with served([held.agent()], max_concurrent_runs=1) as base, sdk(base) as client:
        first = asyncio.create_task(client.chat.completions.create(model="held", messages=HI))
        await asyncio.wait_for(held.started.wait(), 10)
        with pytest.raises(openai.RateLimitError) as caught:
            await client.chat.completions.create(model="held", messages=HI)
        held.release.set()
        answer = await first
        again = await client.chat.completions.create(model="held", messages=HI)

    assert caught.value.code == "rate_limit_exceeded"
    assert answer.choices[0].message.content == "released"
    assert again.choices[0].message.content == "released"


async def test_a_run_past_its_timeout_is_504() -> None:
    held = HeldModel()
    async with served([held.agent()], run_timeout_s=0.2) as base, sdk(base) as client:
        with pytest.raises(openai.InternalServerError) as caught:
            await client.chat.completions.create(model="held", messages=HI)

    assert caught.value.status_code == 504
    assert caught.value.code == "timeout"
    assert held.cancelled.is_set()


async def test_a_stream_past_its_timeout_ends_with_an_error_event() -> None:
    held = HeldModel()
    async with served([held.agent()], run_timeout_s=0.2) as base, sdk(base) as client:
        stream = await client.chat.completions.create(model="held", messages=HI, stream=True)
        with pytest.raises(openai.APIError, match=r"did not answer within 0\.2 s"):
            async with asyncio.timeout(10):
                async for _ in stream:
                    pass

    assert held.cancelled.is_set()


async def test_a_client_leaving_mid_stream_cancels_its_run_and_is_logged_once() -> None:
    held = HeldModel()
    with capture_logs() as logs:
        async with served([held.agent()]) as base, sdk(base) as client:
            stream = await client.chat.completions.create(
                model="held",
                messages=HI,
                stream=True,
            )
            first = await anext(aiter(stream))
            await asyncio.wait_for(held.started.wait(), 10)
            await stream.close()
            await asyncio.wait_for(held.cancelled.wait(), 10)

    assert first.choices[0].delta.role == "assistant"
    left = [log for log in logs if log["event"] == "openai.client_disconnected"]
    assert len(left) == 1
    assert left[0]["model"] == "held"


def test_serving_beyond_loopback_needs_a_token() -> None:
    app = create_openai_app([echo()])
    with pytest.raises(ValueError, match="token"):
        app.check_bind("0.0.0.0")  # noqa: S104 - the address refused
    assert "token=none" in repr(app)
    create_openai_app([echo()], token=TOKEN).check_bind("0.0.0.0")  # noqa: S104
    assert TOKEN not in repr(create_openai_app([echo()], token=TOKEN))
