"""TaskAgent (roadmap-v1): think with a model, extract code, decide, run it in a sandbox."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, cast

import structlog
from pydantic import BaseModel, ConfigDict, Field

from agentic_core import (
    AgentResponse,
    AgentResponseUpdate,
    AgentThread,
    ChatClient,
    ChatMessage,
    InMemoryChatMessageStore,
    Role,
    Sandbox,
    UsageDetails,
    to_messages,
)
from agentic_orchestrator._code_blocks import extract_code, should_execute
from agentic_orchestrator._errors import OrchestratorError
from agentic_orchestrator._payloads import (
    ExecutionMode,
    ResultMetrics,
    ResultPayload,
    ResultStatus,
    TaskPayload,
)

_log = structlog.get_logger(__name__)

_MODE_RULES = {
    ExecutionMode.ALWAYS: "The code you write will ALWAYS be executed.",
    ExecutionMode.NEVER: "The code you write will NOT be executed.",
    ExecutionMode.AUTO: "Write [EXECUTE] or [NO_EXECUTE] to say whether your code should run.",
    ExecutionMode.TASK: "Whether your code runs depends on the kind of action asked for.",
}

_SYSTEM = """{prompt}

## Instructions
You are an agent that writes CODE to accomplish tasks.
1. Answer with executable code when it fits the task.
2. The code must be complete and working.
3. Print the results (print() or console.log()).
4. Handle errors.

{mode_rule}

Format: one fenced block, e.g. ```{language}
...
```"""


class AgentStatus(StrEnum):
    """What a TaskAgent is doing."""

    IDLE = "idle"
    BUSY = "busy"
    ERROR = "error"
    STOPPED = "stopped"


class TaskAgentConfig(BaseModel):
    """How a TaskAgent works: its prompt, when it runs code, its time and retry budget."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str | None = None
    system_prompt: str = ""
    execution_mode: ExecutionMode = ExecutionMode.TASK
    timeout_s: float = Field(default=60.0, gt=0)
    """Bounds a whole task: model calls and the program's run."""
    max_retries: int = Field(default=0, ge=0)
    """Extra model calls after one fails (a provider error, a timeout)."""
    language: str = "python"
    """What an unlabelled fenced block is taken to be, and the language the prompt asks for."""


AgentConfig = TaskAgentConfig
"""The earlier name of :class:`TaskAgentConfig` (one of three "agent config" models)."""


class AgentState(BaseModel):
    """A TaskAgent's state now."""

    status: AgentStatus = AgentStatus.IDLE
    current_task_id: str | None = None
    last_activity_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    tasks_completed: int = 0
    tasks_failed: int = 0


class AgentMetrics(BaseModel):
    """A TaskAgent's counters since it was made."""

    total_tasks: int = 0
    successful_tasks: int = 0
    failed_tasks: int = 0
    average_execution_time_s: float = 0.0
    """Mean duration of the tasks so far (updated as a running average)."""
    total_tokens_used: int = 0
    uptime_s: float = 0.0
    """Since ``start()`` (0 before it)."""


class TaskAgent:
    """An agent that answers a :class:`TaskPayload` with code and, when its mode says so, runs it.

    The loop (roadmap-v1): ask the model (system prompt + the task), extract the first fenced
    code block (python, typescript, javascript, sh, bash), decide by ``execution_mode`` whether
    to run it, run it in the sandbox, and answer with a :class:`ResultPayload` (status, output,
    files, time and tokens). Nothing raises out of :meth:`execute_task`: a model that keeps
    failing, a timeout or a missing sandbox is a ``FAILURE`` result naming the cause.

    It is also a core ``Agent``: ``run("run the tests")`` executes a task whose action is the
    last user message (``run(TaskPayload(...))`` executes that task) and answers with its
    output, so a TaskAgent fits an ``AgentExecutor``, a pattern or an ``Orchestrator`` like any
    agent::

        agent = TaskAgent(TaskAgentConfig(name="coder"), chat_client, ProcessSandbox())
        await agent.start()
        result = await agent.execute_task(TaskPayload(action="run", spec="print 6 * 7"))
    """

    def __init__(
        self,
        config: TaskAgentConfig,
        chat_client: ChatClient,
        sandbox: Sandbox | None = None,
        *,
        id: str | None = None,  # noqa: A002
    ) -> None:
        self.config = config
        self.chat_client = chat_client
        self.sandbox = sandbox
        self.id = id or f"{config.name}-{uuid.uuid4().hex[:8]}"
        self._state = AgentState()
        self._metrics = AgentMetrics()
        self._started_at: float | None = None
        self._running = 0

    def __repr__(self) -> str:
        return (
            f"TaskAgent(name={self.name!r}, id={self.id!r}, "
            f"mode={self.config.execution_mode.value!r}, status={self._state.status.value!r})"
        )

    @property
    def name(self) -> str:
        """The config's name."""
        return self.config.name

    @property
    def description(self) -> str | None:
        """The config's description."""
        return self.config.description

    # -- lifecycle ------------------------------------------------------------------------------

    async def start(self) -> None:
        """Check the model (and the sandbox, unless the mode is NEVER), then take tasks."""
        if not await self.chat_client.health_check():
            raise OrchestratorError(
                f"task agent {self.name!r}: the model ({self.chat_client.provider}/"
                f"{self.chat_client.model}) is not available"
            )
        needs_sandbox = self.config.execution_mode is not ExecutionMode.NEVER
        if self.sandbox is not None and needs_sandbox and not await self.sandbox.is_ready():
            raise OrchestratorError(f"task agent {self.name!r}: the sandbox is not ready")
        self._state.status = AgentStatus.IDLE
        self._started_at = time.monotonic()
        _log.info("task_agent_started", agent=self.name)

    async def stop(self) -> None:
        """Stop the sandbox; the agent takes no task after this."""
        if self.sandbox is not None:
            await self.sandbox.stop()
        self._state.status = AgentStatus.STOPPED
        _log.info("task_agent_stopped", agent=self.name)

    def get_state(self) -> AgentState:
        """A copy of the agent's state."""
        return self._state.model_copy()

    def get_metrics(self) -> AgentMetrics:
        """A copy of the agent's counters, uptime included."""
        uptime = 0.0 if self._started_at is None else time.monotonic() - self._started_at
        return self._metrics.model_copy(update={"uptime_s": uptime})

    # -- tasks ----------------------------------------------------------------------------------

    async def execute_task(self, task: TaskPayload) -> ResultPayload:
        """Do ``task``: think, extract, decide, execute, respond."""
        if self._state.status is AgentStatus.STOPPED:
            raise OrchestratorError(f"task agent {self.name!r} is stopped; start() it again")
        task_id = uuid.uuid4().hex
        started = time.perf_counter()
        self._running += 1
        self._state.status = AgentStatus.BUSY
        self._state.current_task_id = task_id
        self._metrics.total_tasks += 1
        try:
            async with asyncio.timeout(self.config.timeout_s):
                result = await self._do(task, started)
        except TimeoutError:
            result = self._failure(f"timed out after {self.config.timeout_s} s", started)
        finally:
            self._running -= 1
        self._account(result, time.perf_counter() - started)
        _log.info("task_done", agent=self.name, action=task.action, status=result.status.value)
        return result

    async def _do(self, task: TaskPayload, started: float) -> ResultPayload:
        reply, tokens, error = await self._think(task)
        if reply is None:
            return self._failure(f"the model failed: {error}", started)
        found = extract_code(reply, default_language=self.config.language)
        language, code = found if found is not None else (None, None)
        data: dict[str, Any] = {
            "output": reply,
            "code": code,
            "language": language,
            "executed": False,
        }
        if code is None or not should_execute(self.config.execution_mode, task.action, reply):
            return ResultPayload(
                status=ResultStatus.SUCCESS, data=data, metrics=self._cost(started, tokens)
            )
        if self.sandbox is None:
            return self._failure(
                f"the task asks to run {language} code but agent {self.name!r} has no sandbox",
                started,
                tokens,
                data,
            )
        run = await self.sandbox.execute(code, language=language or self.config.language)
        data.update(
            output=run.stdout,
            stderr=run.stderr,
            exit_code=run.exit_code,
            timed_out=run.timed_out,
            response=reply,
            executed=True,
        )
        error_text = None
        if not run.ok:
            error_text = (
                "the program timed out"
                if run.timed_out
                else run.stderr.strip() or f"exit code {run.exit_code}"
            )
        return ResultPayload(
            status=ResultStatus.SUCCESS if run.ok else ResultStatus.FAILURE,
            data=data,
            artifacts=list(run.artifacts),
            metrics=self._cost(started, tokens),
            error=error_text,
        )

    async def _think(self, task: TaskPayload) -> tuple[str | None, int, str]:
        """The model's reply (None after every attempt failed), tokens used, the last error."""
        messages = [ChatMessage.system(self._system_prompt()), ChatMessage.user(task.to_prompt())]
        tokens = 0
        error = ""
        for attempt in range(self.config.max_retries + 1):
            try:
                response = await self.chat_client.generate(messages)
            except Exception as exc:  # noqa: BLE001 - a failed task is a result, not a crash
                error = f"{type(exc).__name__}: {exc}"
                _log.warning("task_model_failed", agent=self.name, attempt=attempt + 1, error=error)
                continue
            tokens += response.usage.total_tokens
            return response.message.text, tokens, ""
        return None, tokens, error

    def _system_prompt(self) -> str:
        return _SYSTEM.format(
            prompt=self.config.system_prompt,
            mode_rule=_MODE_RULES[self.config.execution_mode],
            language=self.config.language,
        ).strip()

    def _cost(self, started: float, tokens: int) -> ResultMetrics:
        return ResultMetrics(
            execution_time_s=time.perf_counter() - started, tokens_used=tokens or None
        )

    def _failure(
        self,
        error: str,
        started: float,
        tokens: int = 0,
        data: dict[str, Any] | None = None,
    ) -> ResultPayload:
        return ResultPayload(
            status=ResultStatus.FAILURE,
            data=data,
            metrics=self._cost(started, tokens),
            error=f"task agent {self.name!r}: {error}",
        )

    def _account(self, result: ResultPayload, elapsed: float) -> None:
        metrics, state = self._metrics, self._state
        if result.ok:
            metrics.successful_tasks += 1
            state.tasks_completed += 1
        else:
            metrics.failed_tasks += 1
            state.tasks_failed += 1
        n = metrics.total_tasks
        metrics.average_execution_time_s += (elapsed - metrics.average_execution_time_s) / n
        metrics.total_tokens_used += result.metrics.tokens_used or 0
        state.last_activity_at = datetime.now(UTC)
        if self._running == 0:
            state.current_task_id = None
            if state.status is not AgentStatus.STOPPED:
                state.status = AgentStatus.IDLE if result.ok else AgentStatus.ERROR

    # -- the core Agent protocol ----------------------------------------------------------------

    def get_new_thread(self, **metadata: Any) -> AgentThread:
        """A fresh conversation."""
        return AgentThread(message_store=InMemoryChatMessageStore(), metadata=metadata)

    async def run(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | TaskPayload | None = None,
        *,
        thread: AgentThread | None = None,
        **kwargs: Any,
    ) -> AgentResponse:
        """Execute a task and answer with its output (the ``ResultPayload`` is ``value``).

        A :class:`TaskPayload` is executed as is; otherwise the task's action is the last user
        message (of ``messages``, else of ``thread``). Anything else is a ``TypeError``.
        """
        del kwargs
        if isinstance(messages, TaskPayload):
            task = messages
            new = [ChatMessage.user(task.to_prompt())]
        else:
            new = _as_messages(messages)
            action = next((m.text for m in reversed(new) if m.role is Role.USER and m.text), "")
            if not action and thread is not None:
                earlier = await thread.list_messages()
                action = next((m.text for m in reversed(earlier) if m.role is Role.USER), "")
            task = TaskPayload(action=action or "respond")
        result = await self.execute_task(task)
        reply = ChatMessage.assistant(_answer_text(result), author_name=self.name)
        if thread is not None:
            await thread.add_messages([*new, reply])
        return AgentResponse(
            messages=[reply],
            text=reply.text,
            agent_id=self.id,
            usage=UsageDetails(total_tokens=result.metrics.tokens_used or 0),
            value=result,
        )

    async def run_stream(
        self,
        messages: str | ChatMessage | Sequence[ChatMessage] | TaskPayload | None = None,
        *,
        thread: AgentThread | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AgentResponseUpdate]:
        """The whole answer as one update (a task's result arrives at once)."""
        response = await self.run(messages, thread=thread, **kwargs)
        yield AgentResponseUpdate(
            text=response.text, author_name=self.name, done=True, response=response
        )


def _answer_text(result: ResultPayload) -> str:
    if not result.ok:
        return f"Task failed: {result.error}"
    data: Any = result.data
    output = cast("dict[str, Any]", data).get("output") if isinstance(data, dict) else None
    return str(output) if output is not None else ""


def _as_messages(messages: object) -> list[ChatMessage]:
    """Core's ``to_messages``, its refusal pointing to ``execute_task``."""
    try:
        return to_messages(cast("str | ChatMessage | Sequence[ChatMessage] | None", messages))
    except TypeError as exc:
        raise TypeError(f"TaskAgent.run(): {exc}; {_ACCEPTED}") from None


_ACCEPTED = (
    "it takes a str, a ChatMessage, a sequence of ChatMessage, a TaskPayload or None "
    "(for a ResultPayload, call execute_task(TaskPayload(...)))"
)
