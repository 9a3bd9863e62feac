"""CodeAssemblerExecutor: named parts from several generators merged into one program."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog

from agentic_core import Executor, ExecutorKind, WorkflowContext, handler
from agentic_orchestrator._code_blocks import canonical_language
from agentic_orchestrator._codegen._models import (
    CODEGEN_PARTS_KEY,
    AssembledCode,
    GeneratedCode,
)

_log = structlog.get_logger("agentic_orchestrator.codegen")


def assemble(
    parts: Sequence[GeneratedCode], *, language: str, sections: Sequence[str] = ()
) -> AssembledCode:
    """``parts`` (one per name) as one program.

    Code parts are joined in ``sections`` order, then the others in the order given (first
    arrival); test parts are joined into ``tests``. With no test part, the code parts' own
    ``task.tests`` are the tests.
    """
    rank = {name: index for index, name in enumerate(sections)}
    ordered = sorted(
        enumerate(parts),
        key=lambda item: (rank.get(item[1].task.name, len(rank)), item[0]),
    )
    code_parts = [part for _, part in ordered if part.task.role == "code"]
    test_parts = [part for _, part in ordered if part.task.role == "test"]
    tests = [part.code for part in test_parts]
    if not tests:
        tests = [part.task.tests for part in code_parts if part.task.tests.strip()]
    return AssembledCode(
        language=canonical_language(language),
        code=_join(part.code for part in code_parts),
        tests=_join(tests),
        parts=[part.task.name for part in code_parts + test_parts],
    )


def _join(chunks: Any) -> str:
    kept = [str(chunk).strip("\n") for chunk in chunks if str(chunk).strip()]
    return "\n\n".join(kept) + ("\n" if kept else "")


class CodeAssemblerExecutor(Executor):
    """Collects ``GeneratedCode`` parts by ``task.name`` and sends them merged.

    The latest part of a name replaces the earlier one (a repaired implementation replaces
    the broken one). Once every name in ``expected`` is present it sends one
    ``AssembledCode``, and again after each newer part (no ``expected``: after every part).
    Code parts are joined in ``sections`` order (names not listed follow in arrival order),
    test parts (``role="test"``) become the tests. The parts are this run's executor state
    (saved in checkpoints) and are also published as ``{name: code}`` in shared state under
    ``CODEGEN_PARTS_KEY``. A fan-in edge may deliver the parts as one list.
    """

    def __init__(
        self,
        *,
        id: str = "assembler",  # noqa: A002 - the API's name
        language: str = "python",
        expected: Sequence[str] = (),
        sections: Sequence[str] = (),
    ) -> None:
        super().__init__(id, kind=ExecutorKind.WORKER)
        self.language = canonical_language(language)
        self.expected = tuple(expected)
        self.sections = tuple(sections)
        self._parts: dict[str, GeneratedCode] = {}

    def snapshot_state(self) -> Any:
        """This run's parts, in arrival order (JSON-able)."""
        return [part.model_dump(mode="json") for part in self._parts.values()]

    def restore_state(self, state: Any) -> None:
        """Take this run's parts (None: none yet)."""
        saved: list[Any] = state if isinstance(state, list) else []  # pyright: ignore[reportUnknownVariableType]
        self._parts = {}
        for data in saved:
            part = GeneratedCode.model_validate(data)
            self._parts[part.task.name] = part

    @handler
    async def collect(
        self, parts: GeneratedCode | list[GeneratedCode], ctx: WorkflowContext[AssembledCode]
    ) -> None:
        """Keep the part(s); send the merged program once every expected part is here."""
        for part in parts if isinstance(parts, list) else [parts]:
            # A newer version keeps its name's place: order is that of first arrival.
            self._parts[part.task.name] = part
        await ctx.set_shared_state(
            CODEGEN_PARTS_KEY, {name: part.code for name, part in self._parts.items()}
        )
        missing = [name for name in self.expected if name not in self._parts]
        if missing:
            _log.debug("codegen.assembler_waiting", executor_id=self.id, missing=missing)
            return
        await ctx.send_message(
            assemble(list(self._parts.values()), language=self.language, sections=self.sections)
        )
