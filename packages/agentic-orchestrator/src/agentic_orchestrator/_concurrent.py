"""ConcurrentBuilder: every participant answers the same prompt at once; one aggregator gathers."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal, Never, Self

import structlog
from pydantic import BaseModel, Field

from agentic_core import (
    Agent,
    AgentExecutorResponse,
    AgentResponse,
    ChatMessage,
    CheckpointStore,
    Executor,
    ExecutorKind,
    ToolApprovalRequest,
    ToolApprovalResponse,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)
from agentic_orchestrator._builder_base import PatternBuilder
from agentic_orchestrator._errors import OrchestrationConfigError, OrchestratorError
from agentic_orchestrator._participants import (
    AgentTurnExecutor,
    ConversationStart,
    Participant,
    accepts,
    final_assistant_message,
    named_participants,
    require_participants,
    to_conversation,
    turn_executor,
)

_log = structlog.get_logger(__name__)

_START = "concurrent_input"
_END = "concurrent_aggregator"
_GATHER = "concurrent_results"
_SAMPLE_RESPONSE = AgentExecutorResponse(executor_id="", agent_response=AgentResponse(agent_id=""))


class ParticipantResult(BaseModel):
    """One participant's part of a concurrent run: its response, or the error that stopped it.

    ``executor_id`` and ``agent_response`` carry the same names as MAF's
    ``AgentExecutorResponse``, so aggregators written for MAF read these unchanged.
    """

    executor_id: str
    """The participant's name."""
    agent_response: AgentResponse | None = None
    full_conversation: list[ChatMessage] = Field(default_factory=list[ChatMessage])
    """The prompt and what the participant added to it."""
    error: str | None = None
    """``"<ExceptionType>: <message>"`` when the participant failed."""
    error_type: str | None = None

    @property
    def ok(self) -> bool:
        """The participant answered."""
        return self.error is None

    @property
    def text(self) -> str:
        """The participant's answer ("" when it failed)."""
        return self.agent_response.text if self.agent_response is not None else ""


_SAMPLE_RESULT = ParticipantResult(executor_id="")

Aggregator = (
    Callable[[list[ParticipantResult]], Any] | Callable[[list[ParticipantResult], Any], Any]
)
"""``fn(results)`` or ``fn(results, ctx)`` (sync or async) -> output: results in participant order,
failures included."""


class _Participant(AgentTurnExecutor):
    """Runs one agent on the prompt; a failure becomes a ``ParticipantResult`` with an error.

    A turn waiting for tool approval pauses this participant only: the others' results wait
    at the fan-in until it is answered and finishes."""

    def __init__(self, agent: Agent, name: str) -> None:
        super().__init__(name, agent)

    @handler
    async def answer(
        self, conversation: list[ChatMessage], ctx: WorkflowContext[ParticipantResult]
    ) -> None:
        """Answer, or report why not."""
        try:
            response = await self.run_turn(conversation, ctx, conversation=conversation)
        except Exception as exc:  # noqa: BLE001 - partial results: the aggregator decides
            await self._failed(conversation, exc, ctx)
            return
        if response is not None:
            await self._answered(conversation, response, ctx)

    @response_handler
    async def answer_tool_approval(
        self,
        request: ToolApprovalRequest,
        answer: ToolApprovalResponse,
        ctx: WorkflowContext[ParticipantResult],
    ) -> None:
        """A person's answer to a waiting tool call; the whole turn answered, the result."""
        paused = self.waiting_turn(request.call_id)
        conversation = [] if paused is None else paused.conversation
        try:
            resumed = await self.answer_approval(request, answer, ctx)
        except Exception as exc:  # noqa: BLE001 - partial results: the aggregator decides
            await self._failed(conversation, exc, ctx)
            return
        if resumed is not None:
            await self._answered(conversation, resumed[0], ctx)

    async def _answered(
        self,
        conversation: list[ChatMessage],
        response: AgentResponse,
        ctx: WorkflowContext[ParticipantResult],
    ) -> None:
        await ctx.send_message(
            ParticipantResult(
                executor_id=self.id,
                agent_response=response,
                full_conversation=[*conversation, *response.messages],
            )
        )

    async def _failed(
        self,
        conversation: list[ChatMessage],
        exc: Exception,
        ctx: WorkflowContext[ParticipantResult],
    ) -> None:
        _log.warning("participant_failed", participant=self.id, error=repr(exc))
        await ctx.send_message(
            ParticipantResult(
                executor_id=self.id,
                full_conversation=conversation,
                error=f"{type(exc).__name__}: {exc}",
                error_type=type(exc).__name__,
            )
        )


class _Aggregate(Executor):
    """Gathers every participant's result (in participant order) and yields the aggregate."""

    def __init__(self, aggregator: Aggregator | None, names: Sequence[str]) -> None:
        super().__init__(_END, kind=ExecutorKind.ORCHESTRATOR)
        self.aggregator = aggregator
        self.names = tuple(names)
        self.with_context = aggregator is not None and _takes_context(aggregator)

    @handler
    async def aggregate(
        self,
        results: list[ParticipantResult | AgentExecutorResponse | list[ChatMessage]],
        ctx: WorkflowContext[Never, Any],
    ) -> None:
        """Yield the aggregator's value (default: the prompt and every answer, in order)."""
        gathered = [_as_result(r, name) for r, name in zip(results, self.names, strict=True)]
        if self.aggregator is None:
            await ctx.yield_output(_default_aggregate(gathered))
            return
        aggregate: Callable[..., Any] = self.aggregator
        value = aggregate(gathered, ctx) if self.with_context else aggregate(gathered)
        if inspect.isawaitable(value):
            value = await value
        if value is not None:
            await ctx.yield_output(value)


def _takes_context(aggregator: Callable[..., Any]) -> bool:
    """Whether the callback is MAF's two-argument form ``(results, ctx)``."""
    try:
        parameters = inspect.signature(aggregator).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: one argument
        return False
    positional = [
        p
        for p in parameters
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in parameters)


class _Gather(Executor):
    """Gathers every result (in participant order) and sends the list to a custom aggregator
    executor: as ``list[ParticipantResult]`` when it takes those, else as MAF's
    ``list[AgentExecutorResponse]`` (failed participants left out, with a warning)."""

    def __init__(self, names: Sequence[str], *, as_responses: bool) -> None:
        super().__init__(_GATHER, kind=ExecutorKind.ORCHESTRATOR)
        self.names = tuple(names)
        self.as_responses = as_responses

    @handler
    async def gather(
        self,
        results: list[ParticipantResult | AgentExecutorResponse | list[ChatMessage]],
        ctx: WorkflowContext[list[ParticipantResult] | list[AgentExecutorResponse]],
    ) -> None:
        """Send the results on."""
        gathered = [_as_result(r, name) for r, name in zip(results, self.names, strict=True)]
        if not self.as_responses:
            await ctx.send_message(gathered)
            return
        _answered(gathered)
        await ctx.send_message(
            [
                AgentExecutorResponse(
                    executor_id=r.executor_id,
                    agent_response=r.agent_response,
                    full_conversation=r.full_conversation,
                )
                for r in gathered
                if r.agent_response is not None
            ]
        )


def _as_result(
    message: ParticipantResult | AgentExecutorResponse | list[ChatMessage], name: str
) -> ParticipantResult:
    """A custom executor's message as a ParticipantResult."""
    if isinstance(message, ParticipantResult):
        return message
    if isinstance(message, AgentExecutorResponse):
        return ParticipantResult(
            executor_id=name,
            agent_response=message.agent_response,
            full_conversation=list(message.full_conversation),
        )
    conversation = to_conversation(message)
    return ParticipantResult(
        executor_id=name,
        agent_response=AgentResponse(
            messages=conversation[-1:],
            text=conversation[-1].text if conversation else "",
            agent_id=name,
        ),
        full_conversation=conversation,
    )


def _default_aggregate(results: list[ParticipantResult]) -> list[ChatMessage]:
    """The prompt, then each answering participant's final message, in participant order."""
    answered = _answered(results)
    first = answered[0]
    prompt_length = len(first.full_conversation) - len(first.agent_response.messages)  # pyright: ignore[reportOptionalMemberAccess]
    prompt = first.full_conversation[: max(prompt_length, 0)]
    answers = [
        final_assistant_message(r.agent_response, r.executor_id)  # pyright: ignore[reportArgumentType]
        for r in answered
    ]
    return [*prompt, *answers]


def _answered(results: list[ParticipantResult]) -> list[ParticipantResult]:
    """The results with an answer; the failures logged; none at all fails the run."""
    answered = [r for r in results if r.agent_response is not None]
    if not answered:
        failures = "; ".join(f"{r.executor_id}: {r.error}" for r in results)
        raise OrchestratorError(f"every participant of the concurrent run failed: {failures}")
    for failed in (r for r in results if r.agent_response is None):
        _log.warning("participant_left_out", participant=failed.executor_id, error=failed.error)
    return answered


class _ConcurrentWorkflow(Workflow):
    """A concurrent pattern's workflow: as an agent it answers with every participant's reply.

    ``as_agent()`` defaults to ``reply="new_messages"`` (MAF's concurrent pattern as an agent
    answers with each participant's message), where other workflows answer with the last
    agent's turn; ``as_agent(reply="last_agent")`` still chooses that.
    """

    @classmethod
    def of(cls, workflow: Workflow) -> _ConcurrentWorkflow:
        """``workflow`` (just built and validated) as a concurrent pattern's workflow."""
        return cls(
            name=workflow.name,
            executors=dict(workflow.executors),
            edges=workflow.edges,
            start_executor_id=workflow.start_executor_id,
            max_supersteps=workflow.max_supersteps,
            checkpoint_store=workflow.checkpoint_store,
        )

    def as_agent(
        self,
        name: str | None = None,
        *,
        reply: Literal["last_agent", "new_messages"] = "new_messages",
    ) -> Agent:
        """This workflow as an agent answering with every participant's reply (the messages
        after the input); ``reply="last_agent"``: only the last participant's."""
        return super().as_agent(name, reply=reply)


class ConcurrentBuilder(PatternBuilder):
    """Fan-out to every participant with the same prompt, fan-in to one aggregator.

    Each agent answers on its own fresh thread, all in one superstep. A participant that raises
    reaches the aggregator as a :class:`ParticipantResult` whose ``error`` says why (partial
    results); only the aggregator decides whether that fails the run. The default aggregate is a
    ``list[ChatMessage]``: the prompt, then each answering participant's final message, in
    participant order (it fails the run only when every participant failed). A custom
    aggregator, sync or async, receives ``list[ParticipantResult]`` and its return value is the
    run's output::

        async def synthesize(results: list[ParticipantResult]) -> str:
            return " / ".join(r.text for r in results if r.ok)


        workflow = ConcurrentBuilder().participants([a, b, c]).with_aggregator(synthesize).build()

    As in MAF, the aggregator may also be an ``Executor`` with a handler for
    ``list[AgentExecutorResponse]`` (or ``list[ParticipantResult]``, to see failures too) that
    yields the output itself.

    Custom executors may take part: they receive the prompt as a ``list[ChatMessage]`` and send
    a ``ParticipantResult``, an ``AgentExecutorResponse`` or a ``list[ChatMessage]``.
    """

    def __init__(
        self,
        *,
        participants: Sequence[Participant] | None = None,
        name: str | None = None,
        checkpoint_store: CheckpointStore | None = None,
    ) -> None:
        self._participants: dict[str, Participant] | None = None
        self._aggregator: Aggregator | Executor | None = None
        self._name = name
        self._checkpoint_store = checkpoint_store
        if participants is not None:
            self.participants(participants)

    def participants(self, participants: Sequence[Participant]) -> Self:
        """Who answers (agents and executors; names must be unique)."""
        self._participants = named_participants(
            participants, "ConcurrentBuilder", reserved=(_START, _END, _GATHER)
        )
        return self

    def with_aggregator(
        self,
        aggregator: Executor
        | Callable[[list[ParticipantResult]], Any | Awaitable[Any]]
        | Callable[[list[ParticipantResult], WorkflowContext[Never, Any]], Any | Awaitable[Any]],
    ) -> Self:
        """What makes the run's output from every participant's result, as MAF's.

        A callback ``aggregator(results)`` or ``aggregator(results, ctx)`` (sync or async):
        its return value, unless None, is the output. Or an ``Executor`` whose handler takes
        ``list[AgentExecutorResponse]`` (failed participants left out) or
        ``list[ParticipantResult]`` (failures included) and yields the output itself.
        """
        if isinstance(aggregator, Executor):
            wants_results = accepts(aggregator, [_SAMPLE_RESULT])
            if not wants_results and not accepts(aggregator, [_SAMPLE_RESPONSE]):
                raise OrchestrationConfigError(
                    f"ConcurrentBuilder: the aggregator executor {aggregator.id!r} has no handler "
                    "for a list[AgentExecutorResponse] or a list[ParticipantResult]"
                )
        elif not callable(aggregator):
            raise OrchestrationConfigError(
                "ConcurrentBuilder: the aggregator must be an Executor or callable, "
                f"got {aggregator!r}"
            )
        self._aggregator = aggregator
        return self

    def build(self) -> Workflow:
        """The fan-out/fan-in as a core ``Workflow``."""
        named = require_participants(self._participants, "ConcurrentBuilder")
        start = ConversationStart(_START)
        nodes = [
            p if isinstance(p, Executor) else turn_executor(_Participant, p)(p, name)
            for name, p in named.items()
        ]
        builder = WorkflowBuilder(self._name or "concurrent").set_start_executor(start)
        builder.add_fan_out_edge(start, nodes)
        aggregator = self._aggregator
        if not isinstance(aggregator, Executor):
            builder.add_fan_in_edge(nodes, _Aggregate(aggregator, list(named)))
            return _ConcurrentWorkflow.of(self._finish(builder))
        if aggregator.id in (*named, _START, _GATHER):
            raise OrchestrationConfigError(
                f"ConcurrentBuilder: the aggregator executor's id {aggregator.id!r} is taken "
                "by a participant or the pattern; give it another id"
            )
        wants_results = accepts(aggregator, [_SAMPLE_RESULT])
        gather = _Gather(list(named), as_responses=not wants_results)
        builder.add_fan_in_edge(nodes, gather)
        builder.add_edge(gather, aggregator)
        return _ConcurrentWorkflow.of(self._finish(builder))
