"""ChatAgent: the tool-calling loop over any ChatClient, with threads, memory and reducers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

import structlog
from pydantic import BaseModel, ValidationError
from pydantic_core import to_jsonable_python

from agentic_core._errors import AgentError
from agentic_core._telemetry_genai import (
    observe_agent_run,
    observe_chat,
    start_tool_span,
    telemetry_on,
)
from agentic_core._telemetry_invocation import activate, mark_error
from agentic_core.agents import _tool_approval as approval
from agentic_core.agents._background import BackgroundRuns
from agentic_core.protocols._agent import (
    AgentInput,
    AgentResponse,
    AgentResponseUpdate,
    ContinuationToken,
    to_messages,
)
from agentic_core.protocols._chat import ChatClient, ChatOptions, ChatResponse, ChatResponseUpdate
from agentic_core.protocols._memory import MemoryContext, MemoryProvider
from agentic_core.protocols._messages import ChatMessage, FunctionCallContent, Role, UsageDetails
from agentic_core.protocols._reducer import ChatReducer
from agentic_core.protocols._thread import AgentThread, ChatMessageStore, InMemoryChatMessageStore
from agentic_core.protocols._tool import Tool
from agentic_core.protocols._tool_approval import (
    ToolApprovalMode,
    ToolApprovalRequest,
    ToolApprovalResponse,
)
from agentic_core.protocols._trusted import new_id, replaced, trusted

if TYPE_CHECKING:
    from opentelemetry.trace import Span

_log = structlog.get_logger(__name__)

ApprovalAnswers = Mapping[str, ToolApprovalResponse | Mapping[str, Any]]
"""Answers to tool calls waiting for approval, by call id (a mapping: the answer as JSON)."""

# What AgentResponse(messages=, text=, usage=, agent_id=, value=, user_input_requests=) sets.
_RESPONSE_FIELDS_SET = frozenset(
    {"messages", "text", "usage", "agent_id", "value", "user_input_requests"}
)

_CORRECTION = (
    "Your previous reply could not be parsed as JSON matching the {name} schema: {error}. "
    "Reply again with only the JSON object."
)


def _as_tool(candidate: Tool | Callable[..., Any]) -> Tool:
    from agentic_core.agents._tools import FunctionTool, tool

    # A FunctionTool (what @tool makes) is a Tool: no protocol check, which reads every member
    # (a copy of the whole schema included) and cost more than the rest of building an agent.
    if isinstance(candidate, FunctionTool):
        return cast("Tool", candidate)
    if isinstance(candidate, Tool):
        return candidate
    return tool(candidate)


class ChatAgent:
    """An agent that answers with a chat model and calls tools until the model is done.

    The loop: add the input to the thread, reduce the history, let memory add context, call
    the model, run every tool call of the reply concurrently (errors and timeouts become error
    results the model sees; a reply's only call is awaited directly, in the run's own task),
    repeat until a reply has no tool calls or ``max_tool_iterations`` is reached, then let
    memory learn from the response. Agents keep no conversation state:
    the thread does, so one agent serves any number of threads at once.

    Tool approval: a call of a tool whose ``approval_mode`` (else the agent's
    ``tool_approval_mode``) is ``"always_require"`` does not run. The turn stops there and the
    response lists a ``ToolApprovalRequest`` per such call in ``user_input_requests`` (the
    reply's other calls wait with them). ``run(responses={call_id: ToolApprovalResponse},
    thread=thread)`` resumes the turn: approved calls run (with the edited arguments, which the
    conversation then shows), a rejected call's result is an error saying so with the reason,
    and the model goes on. Without a thread, pass the conversation so far as ``messages``.
    """

    def __init__(
        self,
        chat_client: ChatClient,
        instructions: str | None = None,
        *,
        name: str | None = None,
        id: str | None = None,  # noqa: A002
        description: str | None = None,
        tools: Sequence[Tool | Callable[..., Any]] = (),
        memory_provider: MemoryProvider | None = None,
        chat_reducer: ChatReducer | None = None,
        message_store_factory: Callable[[], ChatMessageStore] | None = None,
        max_tool_iterations: int = 10,
        options: ChatOptions | None = None,
        tool_timeout_s: float | None = None,
        tool_approval_mode: ToolApprovalMode = "never_require",
    ) -> None:
        if max_tool_iterations < 0:
            raise ValueError(f"max_tool_iterations must be >= 0, got {max_tool_iterations}")
        self.chat_client = chat_client
        self.instructions = instructions
        self.name = name or "agent"
        self.id = id or f"{self.name}-{new_id()[:8]}"
        self.description = description
        self.tools: list[Tool] = [_as_tool(t) for t in tools]
        self._tools_by_name = {t.name: t for t in self.tools}
        if len(self._tools_by_name) != len(self.tools):
            raise AgentError(f"agent {self.name!r} has two tools with the same name")
        self.memory_provider = memory_provider
        self.chat_reducer = chat_reducer
        self.message_store_factory = message_store_factory
        self.max_tool_iterations = max_tool_iterations
        self.options = options or ChatOptions()
        self.tool_timeout_s = tool_timeout_s
        self.tool_approval_mode: ToolApprovalMode = approval.checked_mode(
            tool_approval_mode, f"agent {self.name!r}"
        )
        self._background = BackgroundRuns()

    def __repr__(self) -> str:
        return (
            f"ChatAgent(name={self.name!r}, id={self.id!r}, tools={[t.name for t in self.tools]})"
        )

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        """A fresh conversation (``metadata``, e.g. ``user_id=...``, goes on the thread)."""
        store = self.message_store_factory() if self.message_store_factory else None
        return AgentThread(message_store=store or InMemoryChatMessageStore(), metadata=metadata)

    # -- public entry points --------------------------------------------------------------------

    async def run(
        self,
        messages: AgentInput = None,
        *,
        thread: AgentThread | None = None,
        options: ChatOptions | None = None,
        response_format: type[BaseModel] | None = None,
        background: bool = False,
        continuation_token: ContinuationToken | None = None,
        responses: ApprovalAnswers | None = None,
        **kwargs: Any,
    ) -> AgentResponse:
        """Answer ``messages`` (a str is a user message) in ``thread`` (a new one by default).

        ``background=True`` returns at once with a ``continuation_token``; pass it back as
        ``continuation_token=`` to get the final response (or a newer token while it runs).
        ``responses`` answers the tool calls waiting for approval (``user_input_requests``
        of the previous response), by call id, and resumes that turn.
        """
        _no_extra(kwargs, "run")
        if continuation_token is not None:
            return await self._background.poll(continuation_token, self.id)
        if background:
            token = self._background.start(
                self._observed_steps(
                    messages, thread, options, response_format, responses, streaming=True
                )
            )
            return AgentResponse(agent_id=self.id, continuation_token=token)
        final: AgentResponse | None = None
        steps = self._observed_steps(
            messages, thread, options, response_format, responses, streaming=False
        )
        async for step in steps:
            if isinstance(step, AgentResponse):
                final = step
        if final is None:  # pragma: no cover - _steps always ends with a response
            raise AgentError(f"agent {self.name!r} produced no response")
        return final

    async def run_stream(
        self,
        messages: AgentInput = None,
        *,
        thread: AgentThread | None = None,
        options: ChatOptions | None = None,
        response_format: type[BaseModel] | None = None,
        continuation_token: ContinuationToken | None = None,
        responses: ApprovalAnswers | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AgentResponseUpdate]:
        """Stream the answer as the model produces it; the last update has ``done=True`` and
        carries the complete ``response`` (usage, parsed ``value`` and
        ``user_input_requests`` included).

        With ``continuation_token`` it resumes a background run after the last update seen;
        ``responses`` answers tool calls waiting for approval, as in ``run``.
        """
        _no_extra(kwargs, "run_stream")
        if continuation_token is not None:
            async for update in self._background.follow(continuation_token):
                yield update
            return
        steps = self._observed_steps(
            messages, thread, options, response_format, responses, streaming=True
        )
        async for step in steps:
            if isinstance(step, AgentResponseUpdate):
                yield step
            else:
                yield AgentResponseUpdate(author_name=self.name, done=True, response=step)

    # -- the loop -------------------------------------------------------------------------------

    def _observed_steps(
        self,
        messages: AgentInput,
        thread: AgentThread | None,
        run_options: ChatOptions | None,
        response_format: type[BaseModel] | None,
        responses: ApprovalAnswers | None,
        *,
        streaming: bool,
    ) -> AsyncIterator[AgentResponseUpdate | AgentResponse]:
        """``_steps`` in an ``invoke_agent`` span when telemetry is on.

        Telemetry is decided here, once per run: while it is off, the model and tool calls of
        the run make no further check."""
        observed = telemetry_on()
        steps = self._steps(
            messages,
            thread,
            run_options,
            response_format,
            responses,
            streaming=streaming,
            observed=observed,
        )
        if not observed:
            return steps
        return observe_agent_run(steps, name=self.name, agent_id=self.id, client=self.chat_client)

    async def _steps(
        self,
        messages: AgentInput,
        thread: AgentThread | None,
        run_options: ChatOptions | None,
        response_format: type[BaseModel] | None,
        responses: ApprovalAnswers | None,
        *,
        streaming: bool,
        observed: bool,
    ) -> AsyncIterator[AgentResponseUpdate | AgentResponse]:
        """The run loop; yields streaming updates (when streaming), then the final response.

        ``observed``: telemetry is on (model and tool calls get their spans and metrics)."""
        thread = thread or self.get_new_thread()
        new_input = to_messages(messages)
        # Tool results of calls answered in this run: in the thread already, and in the response.
        produced: list[ChatMessage] = []
        if responses is not None:
            produced = await self._resume_approved(thread, new_input, responses, observed)
        else:
            if self._may_wait_for_approval():
                await self._refuse_while_waiting(thread, new_input)
            if new_input:
                await thread.add_messages(new_input)
        stored = len(produced)
        history = await self._reduced_history(thread)
        prompt = self._instructions()
        if self.memory_provider is not None:
            prompt.extend(await self._memory_messages(self.memory_provider, thread))
        prompt.extend(history)
        options = self._options_for(run_options, response_format)
        # The run's keyword, else the run's options, else the agent's default options.
        response_format = options.response_format
        usage = UsageDetails()
        response: ChatResponse | None = None
        requests: list[ToolApprovalRequest] = []
        for iteration in range(self.max_tool_iterations + 1):
            if iteration == self.max_tool_iterations and self.tools:
                # Out of tool iterations: one last call in which the model may not call tools.
                options = options.model_copy(update={"tool_choice": "none", "tools": []})
            if streaming:
                response = None
                async for item in self._stream_model(prompt, options, observed):
                    if isinstance(item, ChatResponse):
                        response = item
                    else:
                        yield item
                if response is None:  # pragma: no cover - _stream_model always ends with one
                    raise AgentError(f"agent {self.name!r}: the chat client returned no response")
            else:
                response = await self._generate(prompt, options, observed)
            usage = usage + response.usage
            reply = self._stamp(response.message)
            produced.append(reply)
            prompt.append(reply)
            calls = reply.function_calls
            if not calls:
                break
            requests = [
                approval.approval_request(call, self.name)
                for call in calls
                if self._needs_approval(call)
            ]
            if requests:
                break  # the turn waits for a person; the reply's calls run once answered
            results = await self._run_tools(calls, observed)
            produced.extend(results)
            prompt.extend(results)
        if response is None:  # pragma: no cover - the loop runs at least once
            raise AgentError(f"agent {self.name!r}: no model call was made")
        value = None
        if response_format is not None and not requests:
            value, extra = await self._parse_structured(
                response, response_format, prompt, options, observed
            )
            for message, extra_usage in extra:
                produced.append(message)
                usage = usage + extra_usage
        await thread.add_messages(produced[stored:])
        final = self._response(produced, usage, value, requests)
        if self.memory_provider is not None:
            await self.memory_provider.after_invoke(self.id, thread, final)
        yield final

    def _response(
        self,
        produced: list[ChatMessage],
        usage: UsageDetails,
        value: Any,
        requests: list[ToolApprovalRequest],
    ) -> AgentResponse:
        """The run's response; every value is of its field's type already (the messages and
        usage are validated models, the text a str), so it is built without validation."""
        text = next((m.text for m in reversed(produced) if m.role is Role.ASSISTANT), "")
        if type(self.id) is not str:  # an id given as something else: validated (and refused)
            return AgentResponse(
                messages=produced,
                text=text,
                usage=usage,
                agent_id=self.id,
                value=value,
                user_input_requests=requests,
            )
        fields = {
            "messages": produced,
            "text": text,
            "usage": usage,
            "agent_id": self.id,
            "continuation_token": None,
            "value": value,
            "user_input_requests": requests,
        }
        return trusted(AgentResponse, fields, set(_RESPONSE_FIELDS_SET))

    async def _stream_model(
        self, prompt: list[ChatMessage], options: ChatOptions, observed: bool
    ) -> AsyncIterator[AgentResponseUpdate | ChatResponse]:
        """One streamed model call: its text updates, then the folded ``ChatResponse``."""
        observation = observe_chat(self.chat_client, options) if observed else None
        stream = self.chat_client.generate_stream(prompt, options)
        chunks: list[ChatResponseUpdate] = []
        try:
            async for chunk in stream if observation is None else observation.stream(stream):
                chunks.append(chunk)
                if chunk.text:
                    yield AgentResponseUpdate(text=chunk.text, author_name=self.name)
            response = ChatResponse.from_updates(chunks, model=self.chat_client.model)
        except BaseException as exc:
            if observation is not None:
                observation.fail(exc)
            raise
        if observation is not None:
            observation.end(response)  # the span covers the whole stream
        yield response

    async def _generate(
        self, prompt: list[ChatMessage], options: ChatOptions, observed: bool
    ) -> ChatResponse:
        """One whole model call (in a ``chat`` span when telemetry is on)."""
        observation = observe_chat(self.chat_client, options) if observed else None
        if observation is None:
            return await self.chat_client.generate(prompt, options)
        try:
            with observation.current():
                response = await self.chat_client.generate(prompt, options)
        except BaseException as exc:
            observation.fail(exc)
            raise
        observation.end(response)
        return response

    async def _reduced_history(self, thread: AgentThread) -> list[ChatMessage]:
        history = await thread.list_messages()
        if self.chat_reducer is not None and self.chat_reducer.needs_reduction(history):
            history = await self.chat_reducer.reduce(history)
            await thread.message_store.replace_messages(history)
        return history

    def _instructions(self) -> list[ChatMessage]:
        """The prompt's start: the instructions as a system message, when there are some."""
        return [ChatMessage.system(self.instructions)] if self.instructions else []

    async def _memory_messages(
        self, memory_provider: MemoryProvider, thread: AgentThread
    ) -> list[ChatMessage]:
        """What memory adds after the instructions (asked with a fresh ``MemoryContext``)."""
        memory = MemoryContext()
        await memory_provider.before_invoke(self.id, thread, memory)
        system: list[ChatMessage] = []
        if memory.extra_instructions:
            system.append(ChatMessage.system(memory.extra_instructions))
        system.extend(memory.system_messages)
        return system

    def _options_for(
        self, run_options: ChatOptions | None, response_format: type[BaseModel] | None
    ) -> ChatOptions:
        # No run options: the agent's own (never changed in place; a change makes a copy).
        options = self.options if run_options is None else self.options.merged_with(run_options)
        update: dict[str, Any] = {}
        if self.tools and not options.tools:
            update["tools"] = list(self.tools)
        if response_format is not None:
            update["response_format"] = response_format
        return replaced(options, update) if update else options

    def _stamp(self, message: ChatMessage) -> ChatMessage:
        if message.role is Role.ASSISTANT and message.author_name is None:
            return replaced(message, {"author_name": self.name})
        return message

    # -- tools ----------------------------------------------------------------------------------

    async def _run_tools(
        self, calls: Sequence[FunctionCallContent], observed: bool
    ) -> list[ChatMessage]:
        return await _concurrently([self._run_tool(call, observed) for call in calls])

    async def _run_tool(self, call: FunctionCallContent, observed: bool) -> ChatMessage:
        span = start_tool_span(call) if observed else None  # None: telemetry off
        if span is None:
            return await self._invoke_tool(call, None)
        try:
            with activate(span):
                return await self._invoke_tool(call, span)
        except BaseException as exc:  # cancelled: the tool's own errors are results
            mark_error(span, exc, f"{type(exc).__name__}: {exc}")
            raise
        finally:
            span.end()

    async def _invoke_tool(self, call: FunctionCallContent, span: Span | None) -> ChatMessage:
        tool = self._tools_by_name.get(call.name)
        if tool is None:
            known = ", ".join(sorted(self._tools_by_name)) or "none"
            text = f"Error: unknown tool {call.name!r} (available: {known})"
            if span is not None:
                mark_error(span, None, text)
                span.set_attribute("error.type", "unknown_tool")
            return ChatMessage.tool(call.call_id, text, is_error=True)
        deadline: asyncio.Timeout | None = None
        try:
            if self.tool_timeout_s is None:
                result = await tool.invoke(call.arguments)
            else:
                async with asyncio.timeout(self.tool_timeout_s) as deadline:
                    result = await tool.invoke(call.arguments)
        except TimeoutError as exc:
            if deadline is None or not deadline.expired():
                # The tool's own TimeoutError (an LLM client's, say): an ordinary error result.
                return _tool_error(call, exc, span)
            _log.warning("tool_timeout", tool=call.name, timeout_s=self.tool_timeout_s)
            text = f"Error: tool {call.name!r} timed out after {self.tool_timeout_s} s"
            if span is not None:
                mark_error(span, exc, text)
            return ChatMessage.tool(call.call_id, text, is_error=True)
        except Exception as exc:  # noqa: BLE001 - a tool error is a result the model sees
            return _tool_error(call, exc, span)
        return ChatMessage.tool(call.call_id, _jsonable(result))

    # -- tool approval --------------------------------------------------------------------------

    def _needs_approval(self, call: FunctionCallContent) -> bool:
        tool = self._tools_by_name.get(call.name)
        return approval.requires_approval(tool, self.tool_approval_mode)

    def _may_wait_for_approval(self) -> bool:
        tools = self.tools
        return bool(tools) and any(
            approval.requires_approval(t, self.tool_approval_mode) for t in tools
        )

    async def _refuse_while_waiting(
        self, thread: AgentThread, new_input: list[ChatMessage]
    ) -> None:
        """New input while calls still wait for approval would leave them without results."""
        waiting = approval.waiting_calls([*await thread.list_messages(), *new_input])
        if waiting is not None:
            unanswered = [c for c in waiting.calls if self._needs_approval(c)]
            if unanswered:
                raise approval.unanswered_error(self.name, unanswered)

    async def _resume_approved(
        self,
        thread: AgentThread,
        new_input: list[ChatMessage],
        responses: ApprovalAnswers,
        observed: bool,
    ) -> list[ChatMessage]:
        """Run the waiting calls as answered; store their results after them; return them."""
        existing = await thread.list_messages()
        history = [*existing, *new_input]
        waiting = approval.waiting_calls(history)
        if waiting is None or waiting.answered_up_to < len(existing):
            raise AgentError(
                f"agent {self.name!r}: run(responses=...) but no tool call of this "
                "conversation waits for approval (pass the thread the request came from)"
            )
        answers = approval.read_answers(responses, self.name)
        needs_answer = {c.call_id for c in waiting.calls if self._needs_approval(c)}
        approval.check_answers(waiting, answers, needs_answer, self.name)
        to_run: list[FunctionCallContent] = []
        edited: dict[str, FunctionCallContent] = {}
        for call in waiting.calls:
            answer = answers.get(call.call_id)
            if answer is not None and answer.arguments is not None:
                edited[call.call_id] = approval.answered_call(call, answer)
            to_run.append(edited.get(call.call_id, call))
        results = await _concurrently(
            [self._run_answered(call, answers.get(call.call_id), observed) for call in to_run]
        )
        if edited:
            history[waiting.index] = approval.with_edited_calls(history[waiting.index], edited)
        end = waiting.answered_up_to
        full = [*history[:end], *results, *history[end:]]
        if edited and waiting.index < len(existing):
            await thread.message_store.replace_messages(full)
        else:
            await thread.add_messages(full[len(existing) :])
        return results

    async def _run_answered(
        self, call: FunctionCallContent, answer: ToolApprovalResponse | None, observed: bool
    ) -> ChatMessage:
        if answer is not None and not answer.approved:
            return approval.rejection_result(call, answer)
        return await self._run_tool(call, observed)

    # -- structured output ----------------------------------------------------------------------

    async def _parse_structured(
        self,
        response: ChatResponse,
        response_format: type[BaseModel],
        prompt: list[ChatMessage],
        options: ChatOptions,
        observed: bool,
    ) -> tuple[BaseModel, list[tuple[ChatMessage, UsageDetails]]]:
        """The reply parsed into ``response_format``; one corrective retry, then AgentError."""
        if isinstance(response.value, response_format):
            return response.value, []
        try:
            return response_format.model_validate_json(response.message.text), []
        except ValidationError as first_error:
            correction = ChatMessage.user(
                _CORRECTION.format(name=response_format.__name__, error=_brief(first_error))
            )
            retry = await self._generate([*prompt, correction], options, observed)
            reply = self._stamp(retry.message)
            try:
                value = response_format.model_validate_json(reply.text)
            except ValidationError as second_error:
                raise AgentError(
                    f"agent {self.name!r}: the model's reply is not a valid "
                    f"{response_format.__name__} even after one correction: "
                    f"{_brief(second_error)}; reply was {reply.text[:200]!r}"
                ) from second_error
            return value, [(correction, UsageDetails()), (reply, retry.usage)]


async def _concurrently(runs: list[Coroutine[Any, Any, ChatMessage]]) -> list[ChatMessage]:
    """The results of ``runs``, in order. The common case, one tool call, is awaited directly:
    ``gather`` would wrap it in a Task and cost a turn of the event loop for nothing."""
    if len(runs) == 1:
        return [await runs[0]]
    return list(await asyncio.gather(*runs))


def _tool_error(call: FunctionCallContent, exc: Exception, span: Span | None) -> ChatMessage:
    text = f"{type(exc).__name__}: {exc}"
    _log.info("tool_error", tool=call.name, error=text)
    if span is not None:
        mark_error(span, exc, text)
    return ChatMessage.tool(call.call_id, f"Error: {text}", is_error=True)


def _no_extra(kwargs: dict[str, Any], method: str) -> None:
    if kwargs:
        raise TypeError(
            f"ChatAgent.{method}() got unexpected keyword(s): {', '.join(sorted(kwargs))}"
        )


def _brief(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in error.errors()[:5]
    )


def _jsonable(result: Any) -> Any:
    try:
        return to_jsonable_python(result)
    except Exception:  # noqa: BLE001 - anything else is shown as text
        return str(result)
