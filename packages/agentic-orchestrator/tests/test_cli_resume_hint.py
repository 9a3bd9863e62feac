"""What an interrupted ``agentic run`` prints: the command that resumes it, wherever it saved."""

from __future__ import annotations

from pathlib import Path

from agentic_orchestrator._cli._run import RunOptions, RunProgress, resume_hint


def test_a_run_on_a_durable_runtime_is_resumed_through_that_runtime() -> None:
    options = RunOptions(Path("flow.toml"), "tea", runtime="nats://127.0.0.1:4222")
    progress = RunProgress()
    progress.started_on_runtime("run-7")
    assert resume_hint(options, progress) == (
        "interrupted; resume with: agentic run flow.toml tea "
        "--runtime nats://127.0.0.1:4222 --resume run-7"
    )


def test_a_run_interrupted_before_it_started_on_the_runtime_has_nothing_to_resume() -> None:
    options = RunOptions(Path("flow.toml"), "tea", runtime="nats://127.0.0.1:4222")
    assert resume_hint(options, RunProgress()) == (
        "interrupted before the run started; run the command again"
    )


def test_a_run_with_a_checkpoint_dir_is_resumed_from_it() -> None:
    options = RunOptions(Path("flow.toml"), "tea", checkpoint_dir=Path("runs"))
    progress = RunProgress(run_id="run-1", checkpointed=True)
    assert resume_hint(options, progress) == (
        "interrupted; resume with: agentic run flow.toml tea --checkpoint-dir runs --resume run-1"
    )
