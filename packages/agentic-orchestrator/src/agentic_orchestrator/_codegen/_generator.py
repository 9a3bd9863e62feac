"""LLMGeneratorExecutor: a model writes (and repairs) one part of the code."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog

from agentic_core import (
    AgentResponseUpdate,
    AgentRunUpdateEvent,
    ChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    Executor,
    ExecutorKind,
    WorkflowContext,
    handler,
)
from agentic_orchestrator._codegen._models import (
    AssembledCode,
    CodeGenResult,
    CodeTask,
    GeneratedCode,
    ValidationResult,
    generator_state_key,
)
from agentic_orchestrator._codegen._prompt import (
    build_prompt,
    default_system_prompt,
    extract_generated_code,
)
from agentic_orchestrator._errors import CodeGenerationError

_log = structlog.get_logger("agentic_orchestrator.codegen")

GeneratorContext = WorkflowContext[GeneratedCode, CodeGenResult]


class LLMGeneratorExecutor(Executor):
    """Asks a model for the code of a ``CodeTask`` and sends the ``GeneratedCode`` on.

    It takes:

    - a ``CodeTask`` (or a ``str`` prompt, or ``None``, filled into the ``task`` template);
    - a ``GeneratedCode`` / ``AssembledCode`` from another generator: kept as context (the
      types an implementation must follow). A generator with ``requires`` waits until those
      parts have arrived; a generator with a ``task`` template and no task of its own starts
      when context arrives (an ImplGen after a TypeGen);
    - a failed ``ValidationResult``: a repair, attempt + 1, with the errors and the previous
      code in the prompt. Past ``max_attempts`` it yields a failed ``CodeGenResult`` naming
      the last errors instead.

    The reply's code is taken from its fenced block (or the bare reply). While the run is
    streamed and ``stream`` is true, the model's tokens surface as ``AgentRunUpdateEvent``s.

    Two generators may share one part (a fast model for simple repairs, a strong one for
    complex ones): give both the same ``part``. Each generation writes the task, attempt and
    code to shared state (``generator_state_key(part)``); a repair starts from that record,
    whichever generator wrote it, so the attempt count and ``max_attempts`` span both.
    """

    streams_live = True

    def __init__(
        self,
        client: ChatClient,
        *,
        id: str = "generator",  # noqa: A002 - the API's name
        part: str | None = None,
        language: str = "python",
        system_prompt: str | None = None,
        max_attempts: int = 3,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stream: bool = True,
        task: CodeTask | None = None,
        requires: Sequence[str] = (),
        show_tests: bool = True,
    ) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        super().__init__(id, kind=ExecutorKind.WORKER)
        self.client = client
        self.part = part
        self.language = language
        self.system_prompt = system_prompt
        self.max_attempts = max_attempts
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.stream = stream
        self.task = task
        self.requires = tuple(requires)
        self.show_tests = show_tests
        self._reset()

    # -- per-run state ----------------------------------------------------------------------

    def _reset(self) -> None:
        self._current: CodeTask | None = None  # the task of the last generation
        self._waiting: CodeTask | None = None  # a task received before its context
        self._context: dict[str, str] = {}
        self._code = ""

    def snapshot_state(self) -> Any:
        """This run's task, waiting task, context parts and last code (JSON-able)."""
        return {
            "current": None if self._current is None else self._current.model_dump(mode="json"),
            "waiting": None if self._waiting is None else self._waiting.model_dump(mode="json"),
            "context": dict(self._context),
            "code": self._code,
        }

    def restore_state(self, state: Any) -> None:
        """Take this run's state (None: the run has not reached this generator yet)."""
        self._reset()
        if not isinstance(state, dict):
            return
        saved: dict[str, Any] = state  # pyright: ignore[reportUnknownVariableType]
        if saved.get("current") is not None:
            self._current = CodeTask.model_validate(saved["current"])
        if saved.get("waiting") is not None:
            self._waiting = CodeTask.model_validate(saved["waiting"])
        self._context = dict(saved.get("context") or {})
        self._code = str(saved.get("code") or "")

    # -- handlers -----------------------------------------------------------------------------

    @handler
    async def on_task(self, task: CodeTask, ctx: GeneratorContext) -> None:
        """Generate the code of ``task`` (once the parts in ``requires`` have arrived)."""
        await self._start(self._own(task), ctx)

    @handler
    async def on_prompt(self, prompt: str | None, ctx: GeneratorContext) -> None:
        """A prompt (or None: the template's own) filled into the ``task`` template."""
        template = self.task or CodeTask(prompt="", language=self.language)
        if prompt is None and not template.prompt:
            raise CodeGenerationError(
                f"generator '{self.id}' got no prompt: pass a str or a CodeTask to run(), "
                "or give the generator a task template with a prompt"
            )
        task = template if prompt is None else template.model_copy(update={"prompt": prompt})
        await self._start(self._own(task), ctx)

    @handler
    async def on_context(self, part: GeneratedCode | AssembledCode, ctx: GeneratorContext) -> None:
        """Keep another generator's part as context; generate if a task waits for it."""
        if isinstance(part, GeneratedCode):
            name, code = part.task.name, part.code
        else:
            name, code = "+".join(part.parts) or "assembled", part.code
            if part.tests.strip():
                code = f"{code}\n\n{part.tests}" if code.strip() else part.tests
        self._context[name] = code
        task = self._waiting or (self._own(self.task) if self.task is not None else None)
        if task is None:
            _log.debug("codegen.context_kept", executor_id=self.id, part=name)
            return
        await self._start(task, ctx)

    @handler
    async def on_validation(self, result: ValidationResult, ctx: GeneratorContext) -> None:
        """Repair after a failed validation, or give up past ``max_attempts``."""
        if result.passed:
            _log.debug("codegen.passed_result_ignored", executor_id=self.id, stage=result.stage)
            return
        task, code = await self._latest(ctx)
        fingerprints = [*task.fingerprints, *([result.fingerprint] if result.fingerprint else [])]
        if task.attempt >= self.max_attempts:
            _log.info(
                "codegen.gave_up", executor_id=self.id, attempts=task.attempt, stage=result.stage
            )
            await ctx.yield_output(
                CodeGenResult(
                    succeeded=False,
                    language=task.language,
                    code=result.source.code or code,
                    tests=result.source.tests or task.tests,
                    attempts=task.attempt,
                    stage=result.stage,
                    last_errors=list(result.errors),
                    tests_passed=result.tests_passed,
                    tests_failed=result.tests_failed,
                )
            )
            return
        repair = task.model_copy(
            update={
                "attempt": task.attempt + 1,
                "previous_errors": list(result.errors),
                "previous_code": code,
                "fingerprints": fingerprints,
            }
        )
        await self._generate(repair, ctx)

    # -- generation ---------------------------------------------------------------------------

    def _own(self, task: CodeTask) -> CodeTask:
        """``task`` named after this generator's part (when it has one)."""
        if self.part is not None and task.name != self.part:
            return task.model_copy(update={"name": self.part})
        return task

    def _part_name(self) -> str:
        if self.part is not None:
            return self.part
        if self._current is not None:
            return self._current.name
        return self.task.name if self.task is not None else CodeTask(prompt="").name

    async def _start(self, task: CodeTask, ctx: GeneratorContext) -> None:
        missing = [name for name in self.requires if name not in self._context]
        if missing:
            self._waiting = task
            _log.debug("codegen.waiting_for_context", executor_id=self.id, missing=missing)
            return
        self._waiting = None
        await self._generate(task, ctx)

    async def _latest(self, ctx: GeneratorContext) -> tuple[CodeTask, str]:
        """The part's latest task and code: from shared state (any generator of the part)."""
        record = await ctx.get_shared_state(generator_state_key(self._part_name()))
        if isinstance(record, dict) and record.get("task") is not None:  # pyright: ignore[reportUnknownMemberType]
            saved: dict[str, Any] = record  # pyright: ignore[reportUnknownVariableType]
            return CodeTask.model_validate(saved["task"]), str(saved.get("code") or "")
        if self._current is not None:
            return self._current, self._code
        raise CodeGenerationError(
            f"generator '{self.id}' got a failed ValidationResult to repair, but part "
            f"'{self._part_name()}' was never generated in this run: send it a CodeTask first, "
            "or give generators that share a part the same `part`"
        )

    async def _generate(self, task: CodeTask, ctx: GeneratorContext) -> None:
        messages = [
            ChatMessage.system(self.system_prompt or default_system_prompt(task.language)),
            ChatMessage.user(build_prompt(task, self._context, show_tests=self.show_tests)),
        ]
        options = (
            ChatOptions(temperature=self.temperature, max_tokens=self.max_tokens)
            if self.temperature is not None or self.max_tokens is not None
            else None
        )
        if self.stream and ctx.is_streaming:
            response = await self._ask_streaming(messages, options, ctx)
        else:
            response = await self.client.generate(messages, options)
        code = extract_generated_code(response.text, task.language)
        self._current, self._code = task, code
        _log.info(
            "codegen.generated",
            executor_id=self.id,
            part=task.name,
            attempt=task.attempt,
            chars=len(code),
        )
        await ctx.set_shared_state(
            generator_state_key(task.name), {"task": task.model_dump(mode="json"), "code": code}
        )
        model = response.model or getattr(self.client, "model", "")
        await ctx.send_message(GeneratedCode(task=task, code=code, model=str(model)))

    async def _ask_streaming(
        self, messages: list[ChatMessage], options: ChatOptions | None, ctx: GeneratorContext
    ) -> ChatResponse:
        updates: list[ChatResponseUpdate] = []
        async for update in self.client.generate_stream(messages, options):
            updates.append(update)
            if update.text:
                await ctx.add_event(
                    AgentRunUpdateEvent(
                        executor_id=self.id,
                        update=AgentResponseUpdate(text=update.text, author_name=self.id),
                    )
                )
        return ChatResponse.from_updates(updates)
