"""The README's Observability examples work as written (they set process-wide globals, so they
run here, between resets, rather than in the repository's README test)."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Never

import pytest
import structlog

from agentic_core import WorkflowBuilder, WorkflowContext, executor

README = Path(__file__).resolve().parents[1] / "README.md"


def _observability_examples() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Observability") : text.index("## Dynamic maps")]
    return re.findall(r"```py\n(.*?)```", section, re.DOTALL)


@pytest.fixture
def _reset_structlog() -> Iterator[None]:
    yield
    structlog.reset_defaults()
    logging.getLogger().handlers.clear()


@executor(id="hello")
async def hello(name: str, ctx: WorkflowContext[Never, str]) -> None:
    structlog.get_logger("readme").info("greeting", api_key="sk-live-0123456789abcdef")
    await ctx.yield_output(f"hello {name}")


def test_the_readme_has_both_observability_examples() -> None:
    assert len(_observability_examples()) == 2


def test_the_sdk_setup_example_exports_the_engine_spans() -> None:
    # In a fresh process, as a program runs it (ConsoleSpanExporter binds sys.stdout at import).
    setup, _ = _observability_examples()
    program = f"""
import asyncio
from typing import Never
from agentic_core import WorkflowBuilder, WorkflowContext, executor
{setup}
@executor(id="hello")
async def hello(name: str, ctx: WorkflowContext[Never, str]) -> None:
    await ctx.yield_output(f"hello {{name}}")

asyncio.run(WorkflowBuilder().set_start_executor(hello).build().run("you"))
provider.shutdown()  # flushes the batch to the console
"""
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, check=True
    ).stdout

    names = [json.loads(block)["name"] for block in re.findall(r"^\{.*?^\}", out, re.M | re.S)]
    assert sorted(names) == ["executor.process hello", "workflow.run", "workflow.superstep"]


@pytest.mark.usefixtures("_reset_structlog")
async def test_the_structlog_example_adds_run_context_and_masks_secrets(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, processors = _observability_examples()
    exec(processors, {"__name__": "__readme__"})  # noqa: S102 - the README's own code

    result = await WorkflowBuilder().set_start_executor(hello).build().run("you")

    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["event"] == "greeting"
    assert (record["run_id"], record["executor_id"]) == (result.run_id, "hello")
    assert record["api_key"] == "[REDACTED]"
