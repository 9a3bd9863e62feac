"""ScriptedSandbox: the public test double for a Sandbox."""

from __future__ import annotations

import asyncio

import pytest

from agentic_core import AgentCoreError, ExecutionResult, InteractiveSandbox, Sandbox
from agentic_core.testing import SandboxCall, ScriptedProcess, ScriptedSandbox

FAILED = ExecutionResult(exit_code=1, stdout="", stderr="NameError: x", duration_s=0.25)


async def test_is_a_sandbox_and_an_interactive_one() -> None:
    assert isinstance(ScriptedSandbox([]), Sandbox)
    assert isinstance(ScriptedSandbox([]), InteractiveSandbox)


async def test_results_come_in_script_order() -> None:
    sandbox = ScriptedSandbox(["first\n", FAILED])

    first = await sandbox.execute("print('first')")
    second = await sandbox.execute("x")

    assert (first.stdout, first.ok) == ("first\n", True)
    assert second == FAILED


async def test_a_str_result_is_the_stdout_of_a_run_that_exited_with_zero() -> None:
    result = await ScriptedSandbox(["42\n"]).execute("print(6 * 7)")

    assert result == ExecutionResult(exit_code=0, stdout="42\n", stderr="", duration_s=0.0)


async def test_every_run_is_recorded_with_copies_of_files_and_env() -> None:
    sandbox = ScriptedSandbox(["", ""])
    files: dict[str, str | bytes] = {"data.txt": "x"}

    await sandbox.execute("cat data.txt", language="sh", timeout_s=2, files=files, env={"A": "1"})
    await sandbox.execute("print(1)")
    files["data.txt"] = "changed"

    assert sandbox.calls == [
        SandboxCall(
            code="cat data.txt",
            language="sh",
            timeout_s=2,
            files={"data.txt": "x"},
            env={"A": "1"},
        ),
        SandboxCall(code="print(1)"),
    ]


async def test_a_scripted_result_is_handed_out_as_a_copy() -> None:
    sandbox = ScriptedSandbox([FAILED])

    result = await sandbox.execute("x")
    result.stderr = "changed by the receiver"

    assert FAILED.stderr == "NameError: x"


async def test_running_out_of_results_names_the_count_and_the_code() -> None:
    sandbox = ScriptedSandbox(["ok\n"])
    await sandbox.execute("print('ok')")

    with pytest.raises(AgentCoreError) as raised:
        await sandbox.execute("print('again')\nprint('and more')")

    message = str(raised.value)
    assert "ran out of results: 1 scripted, 2 runs asked for" in message
    assert "python code \"print('again')...\"" in message
    assert len(sandbox.calls) == 2


async def test_a_function_answers_each_call() -> None:
    def run(call: SandboxCall) -> ExecutionResult | str:
        return f"{call.language}: {call.code}" if call.code else FAILED

    sandbox = ScriptedSandbox(run)

    assert (await sandbox.execute("a")).stdout == "python: a"
    assert (await sandbox.execute("b", language="sh")).stdout == "sh: b"
    assert await sandbox.execute("") == FAILED
    assert [call.code for call in sandbox.calls] == ["a", "b", ""]


async def test_an_async_function_is_awaited_and_its_errors_reach_the_caller() -> None:
    async def run(call: SandboxCall) -> str:
        await asyncio.sleep(0)
        if call.code == "boom":
            raise TimeoutError("sandbox too slow")
        return "done"

    sandbox = ScriptedSandbox(run)

    assert (await sandbox.execute("fine")).stdout == "done"
    with pytest.raises(TimeoutError, match="sandbox too slow"):
        await sandbox.execute("boom")


async def test_concurrent_runs_each_take_their_own_result() -> None:
    sandbox = ScriptedSandbox(["a", "b", "c"])

    results = await asyncio.gather(*(sandbox.execute(str(n)) for n in range(3)))

    assert sorted(result.stdout for result in results) == ["a", "b", "c"]
    assert len(sandbox.calls) == 3


def test_a_script_entry_of_another_type_is_refused_at_once() -> None:
    with pytest.raises(AgentCoreError, match="ScriptedSandbox result 2 is a int"):
        ScriptedSandbox(["ok", 3])  # type: ignore[list-item]


async def test_a_function_reply_of_another_type_is_refused() -> None:
    sandbox = ScriptedSandbox(lambda call: 3)  # type: ignore[arg-type,return-value]

    with pytest.raises(AgentCoreError, match="reply to call 1 is a int"):
        await sandbox.execute("x")


async def test_ready_is_what_the_test_says_until_stopped() -> None:
    sandbox = ScriptedSandbox([], ready=False)
    assert not await sandbox.is_ready()

    sandbox.ready = True
    assert await sandbox.is_ready()

    await sandbox.stop()
    assert sandbox.stopped
    assert not await sandbox.is_ready()


async def test_leaving_async_with_stops_it_and_a_stopped_sandbox_refuses_to_run() -> None:
    async with ScriptedSandbox(["never"]) as sandbox:
        assert not sandbox.stopped

    assert sandbox.stopped
    with pytest.raises(AgentCoreError, match="was stopped; it refuses to run 'print"):
        await sandbox.execute("print(1)")
    assert sandbox.calls == []


async def test_a_started_program_prints_the_scripted_stdout_line_by_line() -> None:
    sandbox = ScriptedSandbox(["one\ntwo\nlast without newline"])

    async with sandbox.start("serve()", timeout_s=5, env={"A": "1"}) as process:
        lines = [await process.readline(limit=100) for _ in range(4)]
        ended = await process.wait()

    assert lines == [b"one\n", b"two\n", b"last without newline", b""]
    assert ended.stdout == "one\ntwo\nlast without newline"
    assert sandbox.calls == [SandboxCall(code="serve()", timeout_s=5, env={"A": "1"})]
    assert sandbox.processes == [process]


async def test_readline_hands_out_at_most_limit_bytes() -> None:
    async with ScriptedSandbox(["abcdef\n"]).start("x") as process:
        assert await process.readline(limit=4) == b"abcd"
        assert await process.readline(limit=4) == b"ef\n"


async def test_a_started_program_records_what_is_written_to_it() -> None:
    sandbox = ScriptedSandbox(["{}\n"])

    async with sandbox.start("x") as process:
        await process.write(b'{"id": 1}\n')
        await process.write(b'{"id": 2}\n')

    assert sandbox.processes[0].written == [b'{"id": 1}\n', b'{"id": 2}\n']


async def test_a_killed_program_prints_no_more_and_refuses_writes() -> None:
    async with ScriptedSandbox(["one\ntwo\n"]).start("x") as process:
        await process.readline(limit=100)
        await process.kill()

        assert process.killed
        assert await process.readline(limit=100) == b""
        with pytest.raises(BrokenPipeError):
            await process.write(b"late")


async def test_start_takes_from_the_same_script_as_execute() -> None:
    sandbox = ScriptedSandbox(["first\n", FAILED])

    ran = await sandbox.execute("a")
    async with sandbox.start("b") as process:
        ended = await process.wait()

    assert ran.stdout == "first\n"
    assert ended == FAILED
    with pytest.raises(AgentCoreError, match="ran out of results"):
        async with sandbox.start("c"):
            pass


async def test_a_stopped_sandbox_refuses_to_start_a_program() -> None:
    sandbox = ScriptedSandbox(["never"])
    await sandbox.stop()

    with pytest.raises(AgentCoreError, match="was stopped"):
        sandbox.start("x")


def test_a_scripted_process_stands_alone() -> None:
    process = ScriptedProcess(FAILED)

    assert (process.written, process.killed, process.result) == ([], False, FAILED)


def test_repr_shows_the_script_and_the_calls() -> None:
    assert repr(ScriptedSandbox(["a", "b"])) == (
        "ScriptedSandbox(2 results, calls=0, stopped=False)"
    )
    assert repr(ScriptedSandbox(lambda call: "x")) == (
        "ScriptedSandbox(function, calls=0, stopped=False)"
    )
