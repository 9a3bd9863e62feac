"""LangGraph's code-assistant tutorial, ported to agentic (docs/docs/tutorials/code_assistant).

The tutorial's graph, as a LangGraph user writes it: ``generate`` (the model answers with the
structured ``code`` schema: prefix, imports, code) → ``check_code`` (run the imports, then
imports and code; a failure is added to the messages as a user turn and sets ``error="yes"``)
→ ``decide_to_finish`` (end when there is no error or after ``max_iterations = 3``, else back
to ``generate``, which first says "Now, try again. ..."). Ported faithfully: the nodes are
executors, the graph state is a pydantic model carried along the edges, the conditional edge is
the tutorial's ``decide_to_finish``. One change for safety: ``check_code`` runs the code in a
real ``ProcessSandbox`` instead of ``exec()`` in the host process. The model is scripted
(offline): the first solution fails the import test, the second the execution test, the third
passes, exactly the paths the tutorial's graph has.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Never

import pytest
from pydantic import BaseModel

from agentic_core import (
    ChatClient,
    ChatMessage,
    ChatOptions,
    Executor,
    Sandbox,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    handler,
)
from agentic_core.testing import ScriptedChatClient
from agentic_sandbox import ProcessSandbox
from tests.fixtures.system_tools import require_ready_sandbox

pytestmark = pytest.mark.slow

MAX_ITERATIONS = 3  # the tutorial's max_iterations
SYSTEM = (
    "You are a coding assistant. Answer the user question. Ensure any code you provide can be "
    "executed with all required imports and variables defined. Structure your answer with a "
    "description of the code solution. Then list the imports. And finally list the "
    "functioning code block. Here is the user question:"
)
TRY_AGAIN = (
    "Now, try again. Invoke the code tool to structure the output with a prefix, imports, "
    "and code block:"
)


class Code(BaseModel):
    """Schema for code solutions (the tutorial's ``code`` tool)."""

    prefix: str
    imports: str
    code: str


class GraphState(BaseModel):
    """The tutorial's GraphState: error flag, messages, generation, iterations."""

    error: str = ""
    messages: list[ChatMessage]
    generation: Code | None = None
    iterations: int = 0


class Generate(Executor):
    """Node ``generate``: a code solution, as structured output."""

    def __init__(self, client: ChatClient) -> None:
        super().__init__("generate")
        self.client = client

    @handler
    async def generate(self, state: GraphState, ctx: WorkflowContext[GraphState]) -> None:
        messages = list(state.messages)
        if state.error == "yes":
            messages.append(ChatMessage.user(TRY_AGAIN))
        response = await self.client.generate(
            [ChatMessage.system(SYSTEM), *messages], ChatOptions(response_format=Code)
        )
        solution = response.value or Code.model_validate_json(response.text)
        messages.append(
            ChatMessage.assistant(
                f"{solution.prefix} \n Imports: {solution.imports} \n Code: {solution.code}"
            )
        )
        await ctx.send_message(
            state.model_copy(
                update={
                    "generation": solution,
                    "messages": messages,
                    "iterations": state.iterations + 1,
                }
            )
        )


class CheckCode(Executor):
    """Node ``check_code``: the import test, then the execution test (in the sandbox)."""

    def __init__(self, sandbox: Sandbox) -> None:
        super().__init__("check_code")
        self.sandbox = sandbox

    @handler
    async def check(self, state: GraphState, ctx: WorkflowContext[GraphState]) -> None:
        assert state.generation is not None
        imports, code = state.generation.imports, state.generation.code
        for test, program in (("import", imports), ("code execution", f"{imports}\n{code}")):
            result = await self.sandbox.execute(program, language="python", timeout_s=20)
            if result.exit_code != 0:
                error = result.stderr.strip().splitlines()[-1]
                failed = ChatMessage.user(f"Your solution failed the {test} test: {error}")
                await ctx.send_message(
                    state.model_copy(update={"messages": [*state.messages, failed], "error": "yes"})
                )
                return
        await ctx.send_message(state.model_copy(update={"error": "no"}))


class End(Executor):
    """LangGraph's END: the final state is the run's output."""

    def __init__(self) -> None:
        super().__init__("end")

    @handler
    async def end(self, state: GraphState, ctx: WorkflowContext[Never, GraphState]) -> None:
        await ctx.yield_output(state)


def decide_to_finish(state: GraphState) -> bool:
    """The tutorial's ``decide_to_finish``: no error, or out of iterations."""
    return state.error == "no" or state.iterations == MAX_ITERATIONS


def build_graph(client: ChatClient, sandbox: Sandbox) -> Workflow:
    generate, check_code, end = Generate(client), CheckCode(sandbox), End()
    return (
        WorkflowBuilder("code-assistant")
        .set_start_executor(generate)
        .add_edge(generate, check_code)
        .add_edge(check_code, end, condition=decide_to_finish)
        .add_edge(check_code, generate, condition=lambda s: not decide_to_finish(s))
        .build()
    )


def _solution(imports: str, code: str) -> str:
    return json.dumps(
        {"prefix": "A LCEL chain that formats a prompt.", "imports": imports, "code": code}
    )


QUESTION = "How do I build a prompt that fills in a topic, and print it?"
WRONG_IMPORT = _solution("from langchain_core.prompts import ChatPromptTemplate", "print(1)")
CRASHES = _solution("import string", "print(string.Template('$topic').substitute({}))")
WORKS = _solution(
    "import string", "print(string.Template('Tell me about $topic').substitute(topic='bears'))"
)


@pytest.fixture
async def sandbox(tmp_path: Path) -> AsyncIterator[ProcessSandbox]:
    async with ProcessSandbox(timeout_s=20, memory_mb=256) as box:
        await require_ready_sandbox(box)
        yield box


async def test_the_graph_repairs_an_import_then_an_execution_failure(
    sandbox: ProcessSandbox,
) -> None:
    client = ScriptedChatClient([WRONG_IMPORT, CRASHES, WORKS])
    result = await build_graph(client, sandbox).run(
        GraphState(messages=[ChatMessage.user(QUESTION)])
    )
    [state] = result.get_outputs()
    assert isinstance(state, GraphState)
    assert (state.error, state.iterations) == ("no", 3)
    assert state.generation is not None
    assert "bears" in state.generation.code
    said = [m.text for m in state.messages if m.role == "user"]
    assert said[0] == QUESTION
    assert said[1].startswith("Your solution failed the import test: ModuleNotFoundError")
    assert said[2] == TRY_AGAIN
    assert said[3].startswith("Your solution failed the code execution test: KeyError")
    assert said[4] == TRY_AGAIN
    # Each retry's prompt carried the error and the tutorial's "try again" turn.
    retry_prompt = [m.text for m in client.calls[1][0]]
    assert retry_prompt[-2].startswith("Your solution failed the import test")
    assert retry_prompt[-1] == TRY_AGAIN


async def test_the_graph_stops_after_max_iterations(sandbox: ProcessSandbox) -> None:
    client = ScriptedChatClient([WRONG_IMPORT] * MAX_ITERATIONS)
    result = await build_graph(client, sandbox).run(
        GraphState(messages=[ChatMessage.user(QUESTION)])
    )
    [state] = result.get_outputs()
    assert (state.error, state.iterations) == ("yes", MAX_ITERATIONS)
    assert len(client.calls) == MAX_ITERATIONS
