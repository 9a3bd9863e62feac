"""TaskDecomposer: a model splits a coding task into a validated plan of subtasks."""

from __future__ import annotations

from typing import Any

import structlog
from pydantic import BaseModel, Field, ValidationError

from agentic_core import (
    ChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    Executor,
    ExecutorKind,
    WorkflowContext,
    handler,
)
from agentic_orchestrator._code_blocks import canonical_language
from agentic_orchestrator._codegen._models import CodeTask
from agentic_orchestrator._errors import CodePlanError
from agentic_orchestrator._json_reply import last_json_object

_log = structlog.get_logger("agentic_orchestrator.codegen")


class Subtask(BaseModel):
    """One step of a plan: a unique ``name``, what to write, and the names it builds on."""

    name: str
    prompt: str
    depends_on: list[str] = Field(default_factory=list[str])


class CodePlan(BaseModel):
    """The subtasks a coding task splits into."""

    subtasks: list[Subtask]


def plan_problems(plan: CodePlan, *, max_subtasks: int) -> list[str]:
    """What is wrong with ``plan``: empty, too long, duplicate names, unknown deps, cycles."""
    problems: list[str] = []
    names = [subtask.name for subtask in plan.subtasks]
    if not names:
        problems.append("the plan has no subtasks")
    if len(names) > max_subtasks:
        problems.append(f"the plan has {len(names)} subtasks, at most {max_subtasks} are allowed")
    if any(not name.strip() for name in names):
        problems.append("every subtask needs a non-empty name")
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        problems.append(f"subtask names must be unique: {', '.join(duplicates)} repeat")
    known = set(names)
    for subtask in plan.subtasks:
        unknown = [dep for dep in subtask.depends_on if dep not in known]
        if unknown:
            problems.append(
                f"subtask '{subtask.name}' depends on unknown subtask(s): {', '.join(unknown)}"
            )
    if not problems:
        cycle = _cycle(plan)
        if cycle:
            problems.append(f"the dependencies form a cycle: {' -> '.join(cycle)}")
    return problems


def ordered_subtasks(plan: CodePlan) -> list[Subtask]:
    """The subtasks with every dependency before its dependents (a valid plan), stable."""
    done: set[str] = set()
    ordered: list[Subtask] = []
    remaining = list(plan.subtasks)
    while remaining:
        ready = [s for s in remaining if all(dep in done for dep in s.depends_on)]
        if not ready:  # a cycle: plan_problems rejects these first
            raise CodePlanError("the plan's dependencies form a cycle")
        for subtask in ready:
            ordered.append(subtask)
            done.add(subtask.name)
        remaining = [s for s in remaining if s.name not in done]
    return ordered


def _cycle(plan: CodePlan) -> list[str]:
    deps = {s.name: list(s.depends_on) for s in plan.subtasks}
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(name: str) -> list[str]:
        state[name] = 1
        path.append(name)
        for dep in deps.get(name, []):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        path.pop()
        state[name] = 2
        return []

    for name in deps:
        if name not in state:
            found = visit(name)
            if found:
                return found
    return []


_SYSTEM = (
    "You split a programming task into at most {max} small subtasks, each one piece of "
    "{language} code. Reply with JSON only: "
    '{{"subtasks": [{{"name": "types", "prompt": "what to write", "depends_on": []}}]}}. '
    "Names are unique; depends_on lists names of earlier subtasks."
)


class TaskDecomposer(Executor):
    """Asks the model for a ``CodePlan`` and sends one ``CodeTask`` per subtask.

    The reply is read with ``ChatOptions(response_format=CodePlan)`` (a client that parses it
    fills ``response.value``; otherwise the last JSON object of the text is used). The plan is
    checked: names unique, dependencies known and acyclic, at most ``max_subtasks``. An invalid
    plan is sent back to the model with what is wrong, up to ``retries`` times; then
    ``CodePlanError`` names the last problems. Tasks are sent dependencies first; a subtask's
    dependencies are named in its task's context.
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        id: str = "decomposer",  # noqa: A002 - the API's name
        language: str = "python",
        max_subtasks: int = 6,
        retries: int = 2,
    ) -> None:
        if max_subtasks < 1:
            raise ValueError(f"max_subtasks must be at least 1, got {max_subtasks}")
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        super().__init__(id, kind=ExecutorKind.ORCHESTRATOR)
        self.client = client
        self.language = canonical_language(language)
        self.max_subtasks = max_subtasks
        self.retries = retries

    @handler
    async def decompose(self, task: str | CodeTask, ctx: WorkflowContext[CodeTask]) -> None:
        """Plan ``task`` and send its subtasks as ``CodeTask``s, dependencies first."""
        base = task if isinstance(task, CodeTask) else CodeTask(prompt=task, language=self.language)
        plan = await self.plan(base.prompt)
        for subtask in ordered_subtasks(plan):
            context = base.context
            if subtask.depends_on:
                uses = f"This builds on: {', '.join(subtask.depends_on)}."
                context = f"{context}\n{uses}".strip()
            await ctx.send_message(
                base.model_copy(
                    update={"prompt": subtask.prompt, "name": subtask.name, "context": context}
                )
            )

    async def plan(self, prompt: str) -> CodePlan:
        """A valid plan for ``prompt``, or ``CodePlanError`` after the retries."""
        messages = [
            ChatMessage.system(_SYSTEM.format(max=self.max_subtasks, language=self.language)),
            ChatMessage.user(prompt),
        ]
        options = ChatOptions(response_format=CodePlan)
        problems: list[str] = []
        for attempt in range(1, self.retries + 2):
            response = await self.client.generate(messages, options)
            plan, problems = self._read(response)
            if plan is not None and not problems:
                _log.info("codegen.planned", executor_id=self.id, subtasks=len(plan.subtasks))
                return plan
            _log.info(
                "codegen.plan_rejected", executor_id=self.id, attempt=attempt, problems=problems
            )
            messages += [
                ChatMessage.assistant(response.text),
                ChatMessage.user(
                    "That plan is invalid: " + "; ".join(problems) + ". Reply with a corrected "
                    "plan as JSON only."
                ),
            ]
        raise CodePlanError(
            f"decomposer '{self.id}' got no valid plan after {self.retries + 1} attempt(s): "
            + "; ".join(problems)
        )

    def _read(self, response: ChatResponse) -> tuple[CodePlan | None, list[str]]:
        value: Any = response.value
        if not isinstance(value, CodePlan):
            data: Any = last_json_object(response.text) if value is None else value
            if data is None:
                return None, ["the reply holds no JSON object"]
            try:
                value = CodePlan.model_validate(data)
            except ValidationError as exc:
                details = "; ".join(
                    f"{'.'.join(str(p) for p in error['loc']) or 'plan'}: {error['msg']}"
                    for error in exc.errors()
                )
                return None, [f"the JSON is not a plan ({details})"]
        return value, plan_problems(value, max_subtasks=self.max_subtasks)
