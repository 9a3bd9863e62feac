"""A TypeScript state machine written, compiled, tested and repaired by a graph of agents.

Model: a scripted one by default (no model needed). ``--model`` needs a model that writes
working TypeScript from a page of instructions, such as openai:gpt-4o-mini or a 7B+ coding model
on Ollama; the embedded SmolLM2-135M (``--model local``) cannot, so it is refused.

The seeds' full code-generation graph (``graph-architecture.md``, "Flow Complet: Exemple
TypeScript"), against the real TypeScript compiler and Node's test runner::

    plan ──┬──▶ TypeGen ──┬──▶ ImplGen ◀──────────────┬──────────────┐
           │              │      │                    │ failed       │ failed
           ├──▶ TestGen ──┼──────┼──▶ Assembler ──▶ CompileValidator ──▶ TestValidator
           └──▶ ImplGen   └──────┘    (types + impl + tests)  (tsc)     (node --test)

TypeGen and TestGen start together (the tests are written from the request, independently of
the code); ImplGen starts once the types exist; the assembler waits for all three parts; a
failed compile or test run goes back to ImplGen with its errors until the tests pass or
``--max-attempts`` is reached. Code runs only in a ``ProcessSandbox``, which may read the
TypeScript install (``read_only_paths``) and nothing else of the host's that it does not need.

Offline by default: a scripted model answers with the types, the tests, then three
implementations — the first with a type error (a typo in a state name), the second compiling
but failing one test (it lets a shipped order be cancelled), the third correct — so the run
shows both repair edges at work. ``--model SPEC`` (any ``agentic_llm.create_chat_client``
spec, e.g. ``openai:gpt-4o-mini``) lets a real model write the code.

The first run installs ``typescript`` and ``@types/node`` from the npm registry into the
repository's ``.cache/typescript`` (``--typescript-dir`` to choose another folder); later runs
reuse it. Run: ``uv run python examples/typescript_state_machine.py [--model SPEC]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Never

from pydantic import Field

from agentic_core import (
    AgentRunUpdateEvent,
    ChatClient,
    ChatMessage,
    ChatOptions,
    Executor,
    ExecutorCompletedEvent,
    Sandbox,
    SuperstepStartedEvent,
    Workflow,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowFailedEvent,
    WorkflowOutputEvent,
    configure_logging,
    handler,
)
from agentic_core.testing import FunctionChatClient
from agentic_orchestrator import (
    AssembledCode,
    CodeAssemblerExecutor,
    CodeGenResult,
    CodeTask,
    CompileValidatorExecutor,
    LLMGeneratorExecutor,
    TestValidatorExecutor,
    ValidationResult,
    code_failed,
    code_passed,
    install_typescript,
)
from agentic_sandbox import ProcessSandbox

LANGUAGE = "typescript"
EMBEDDED_MODEL_REFUSED = (
    "--model needs a model that writes working TypeScript from a page of instructions, such as "
    "openai:gpt-4o-mini or a 7B+ coding model on Ollama; the embedded SmolLM2-135M "
    "(--model local) cannot, so it is refused."
)
REPO_TYPESCRIPT_DIR = Path(__file__).resolve().parents[1] / ".cache" / "typescript"

REQUEST = (
    "An order state machine. An order is pending, paid, shipped, delivered or cancelled; the "
    "events pay, ship, deliver and cancel move it: pending -pay-> paid -ship-> shipped "
    "-deliver-> delivered, and a pending or paid order can be cancelled (a shipped one cannot). "
    "`transition(state, event)` returns the next state and throws an Error whose message is "
    "`cannot <event> an order that is <state>` when the state does not accept the event; "
    "`isFinal(state)` is true for delivered and cancelled."
)
TYPES_TASK = (
    "Declare only the exported types, no runtime code: `OrderState` and `OrderEvent` as unions "
    "of string literals (no enums: Node runs the code by stripping types) and `TransitionTable` "
    "= `Record<OrderState, Partial<Record<OrderEvent, OrderState>>>`."
)
TESTS_TASK = (
    'Write the tests with `node:test` (`import { test } from "node:test"`) and '
    '`import { strict as assert } from "node:assert"`, importing `transition` and `isFinal` '
    'from "./solution.ts". One `test(...)` per rule, including the errors thrown.'
)
IMPL_TASK = (
    "Implement and export `TRANSITIONS: TransitionTable`, `transition` and `isFinal`. The "
    "types above are declared in the same file: use them, do not import or redeclare them."
)

# One system prompt per generator: with a real model they set the role; offline they also
# tell the scripted model which part is asked for.
TYPES_SYSTEM = "You write TypeScript type declarations. Reply with one ```ts block, nothing else."
TESTS_SYSTEM = "You write TypeScript tests for node:test. Reply with one ```ts block, nothing else."
IMPL_SYSTEM = (
    "You implement TypeScript modules against given types. Reply with one ```ts block, "
    "nothing else."
)

TYPES_REPLY = """```ts
/** Where an order is in its life. */
export type OrderState = "pending" | "paid" | "shipped" | "delivered" | "cancelled";
/** What can happen to an order. */
export type OrderEvent = "pay" | "ship" | "deliver" | "cancel";
/** The next state for each event an order in a given state accepts. */
export type TransitionTable = Record<OrderState, Partial<Record<OrderEvent, OrderState>>>;
```"""

TESTS_REPLY = """```ts
import { strict as assert } from "node:assert";
import { test } from "node:test";
import { isFinal, transition } from "./solution.ts";

test("an order is paid, shipped and delivered", () => {
  const paid = transition("pending", "pay");
  const shipped = transition(paid, "ship");
  assert.equal(shipped, "shipped");
  assert.equal(transition(shipped, "deliver"), "delivered");
});

test("a pending or paid order can be cancelled", () => {
  assert.equal(transition("pending", "cancel"), "cancelled");
  assert.equal(transition("paid", "cancel"), "cancelled");
});

test("a shipped order cannot be cancelled", () => {
  assert.throws(() => transition("shipped", "cancel"), /cannot cancel an order that is shipped/);
});

test("an order cannot be shipped before it is paid", () => {
  assert.throws(() => transition("pending", "ship"), /cannot ship an order that is pending/);
});

test("delivered and cancelled orders are final", () => {
  assert.equal(isFinal("delivered"), true);
  assert.equal(isFinal("cancelled"), true);
  assert.equal(isFinal("paid"), false);
});
```"""

_IMPL = """```ts
export const TRANSITIONS: TransitionTable = {
  pending: { pay: "paid", cancel: "cancelled" },
  paid: { ship: "SHIP", cancel: "cancelled" },
  shipped: { deliver: "delivered"SHIPPED_CANCEL },
  delivered: {},
  cancelled: {},
};

/** The state after `event`; throws when `state` does not accept it. */
export function transition(state: OrderState, event: OrderEvent): OrderState {
  const next = TRANSITIONS[state][event];
  if (next === undefined) {
    throw new Error(`cannot ${event} an order that is ${state}`);
  }
  return next;
}

/** True when no event moves an order out of `state`. */
export function isFinal(state: OrderState): boolean {
  return Object.keys(TRANSITIONS[state]).length === 0;
}
```"""


def _impl(ship: str, shipped_cancel: str) -> str:
    return _IMPL.replace("SHIPPED_CANCEL", shipped_cancel).replace("SHIP", ship)


IMPL_REPLIES = (
    _impl("shiped", ""),  # a typo tsc catches: "shiped" is not an OrderState
    _impl("shipped", ', cancel: "cancelled"'),  # compiles; a shipped order can be cancelled
    _impl("shipped", ""),  # correct
)
"""The scripted implementations, in the order ImplGen is asked for them."""


def scripted_client() -> FunctionChatClient:
    """The offline model: types, tests, then the three implementations, by who is asking."""
    replies = {
        TYPES_SYSTEM: [TYPES_REPLY],
        TESTS_SYSTEM: [TESTS_REPLY],
        IMPL_SYSTEM: [*IMPL_REPLIES],
    }

    def reply(messages: Sequence[ChatMessage], options: ChatOptions | None) -> str:
        system = messages[0].text if messages else ""
        script = replies.get(system)
        if script is None:
            raise RuntimeError(f"no scripted replies for the system prompt {system!r}")
        if not script:
            raise RuntimeError(f"the scripted model has no reply left for {system!r}")
        return script.pop(0)

    return FunctionChatClient(reply, model="scripted")


class ValidationReport(WorkflowEvent):
    """One validation of the assembled program, for the progress display."""

    attempt: int
    stage: str
    passed: bool
    errors: list[str] = Field(default_factory=list[str])
    tests_passed: int = 0
    tests_failed: int = 0


class ValidationAudit(Executor):
    """Watches what the validators send and reports each outcome as a ``ValidationReport``.

    A passed compile sends the ``AssembledCode`` on; a failed compile or test run sends a
    ``ValidationResult``. Every assembled program is compiled once, so the compile reports
    count the implementation attempts.
    """

    def __init__(self, id: str = "audit") -> None:  # noqa: A002 - the engine's name
        super().__init__(id)
        self._attempt = 0

    def snapshot_state(self) -> Any:
        return self._attempt

    def restore_state(self, state: Any) -> None:
        self._attempt = state if isinstance(state, int) else 0

    @handler
    async def on_compiled(self, source: AssembledCode, ctx: WorkflowContext[Never]) -> None:
        self._attempt += 1
        await ctx.add_event(ValidationReport(attempt=self._attempt, stage="compile", passed=True))

    @handler
    async def on_result(self, result: ValidationResult, ctx: WorkflowContext[Never]) -> None:
        if result.stage == "compile":
            self._attempt += 1
        await ctx.add_event(
            ValidationReport(
                attempt=self._attempt,
                stage=result.stage,
                passed=result.passed,
                errors=list(result.errors),
                tests_passed=result.tests_passed,
                tests_failed=result.tests_failed,
            )
        )


class Plan(Executor):
    """Turns the request into the three tasks: types, tests and implementation."""

    def __init__(self, id: str = "plan") -> None:  # noqa: A002 - the engine's name
        super().__init__(id)

    @handler
    async def on_request(self, request: str, ctx: WorkflowContext[CodeTask]) -> None:
        tasks = {
            "types": CodeTask(prompt=f"{request}\n{TYPES_TASK}", language=LANGUAGE, name="types"),
            "tests": CodeTask(
                prompt=f"{request}\n{TESTS_TASK}", language=LANGUAGE, name="tests", role="test"
            ),
            "impl": CodeTask(prompt=f"{request}\n{IMPL_TASK}", language=LANGUAGE, name="impl"),
        }
        for target, task in tasks.items():
            await ctx.send_message(task, target_id=target)


def build_workflow(
    client: ChatClient,
    sandbox: Sandbox,
    typescript: str | os.PathLike[str],
    *,
    max_attempts: int = 4,
    timeout_s: float = 120,
) -> Workflow:
    """The graph: plan → TypeGen ∥ TestGen, ImplGen after the types, assembler, tsc, node --test.

    ``typescript`` is the installed ``node_modules/typescript`` (``install_typescript()``);
    ``sandbox`` must be allowed to read it (``read_only_paths``). ``max_attempts`` bounds the
    implementation attempts; the run ends with one ``CodeGenResult`` output either way.
    """
    types = LLMGeneratorExecutor(
        client, id="types", part="types", language=LANGUAGE, system_prompt=TYPES_SYSTEM
    )
    tests = LLMGeneratorExecutor(
        client, id="tests", part="tests", language=LANGUAGE, system_prompt=TESTS_SYSTEM
    )
    impl = LLMGeneratorExecutor(
        client,
        id="impl",
        part="impl",
        language=LANGUAGE,
        system_prompt=IMPL_SYSTEM,
        max_attempts=max_attempts,
        requires=["types"],  # its task waits for TypeGen's declarations
    )
    assembler = CodeAssemblerExecutor(
        id="assembler",
        language=LANGUAGE,
        expected=["types", "impl", "tests"],
        sections=["types", "impl"],
    )
    compile_ = CompileValidatorExecutor(
        sandbox, id="compile", language=LANGUAGE, typescript=typescript, timeout_s=timeout_s
    )
    # With `typescript` the tests are transpiled before `node --test`: any Node will do.
    test = TestValidatorExecutor(
        sandbox, id="test", language=LANGUAGE, typescript=typescript, timeout_s=timeout_s
    )
    audit = ValidationAudit()  # its id sorts first: its report precedes the repair's
    plan = Plan()
    return (
        WorkflowBuilder("typescript-state-machine", max_supersteps=20 + 6 * max_attempts)
        .set_start_executor(plan)
        .add_edge(plan, types)
        .add_edge(plan, tests)
        .add_edge(plan, impl)
        .add_edge(types, impl)  # the declarations ImplGen implements
        .add_edge(types, assembler)
        .add_edge(tests, assembler)
        .add_edge(impl, assembler)
        .add_edge(assembler, compile_)
        .add_edge(compile_, test, condition=code_passed)
        .add_edge(compile_, impl, condition=code_failed)  # feedback: the compiler's errors
        .add_edge(test, impl, condition=code_failed)  # feedback: the failing tests
        .add_edge(compile_, audit)
        .add_edge(test, audit)
        .build()
    )


def make_sandbox(typescript: Path, *, timeout_s: float = 120) -> ProcessSandbox:
    """A sandbox for tsc and node: the TypeScript install readable, nothing written outside."""
    return ProcessSandbox(
        timeout_s=timeout_s,
        memory_mb=1024,
        languages=["javascript", "typescript"],
        read_only_paths=[typescript],  # the compiler, read by the validators' programs
    )


def describe(event: WorkflowEvent) -> str | None:
    """The progress line for ``event`` (None for the events not shown)."""
    if isinstance(event, SuperstepStartedEvent):
        return f"superstep {event.superstep}: {', '.join(event.executor_ids)}"
    if isinstance(event, ExecutorCompletedEvent):
        return f"  {event.executor_id} done in {event.duration_s:.2f} s"
    if isinstance(event, ValidationReport):
        if event.passed:
            return f"  attempt {event.attempt}: {event.stage} passed"
        counts = (
            f" ({event.tests_failed} failed, {event.tests_passed} passed)"
            if event.stage == "test"
            else ""
        )
        shown = [error.splitlines()[0] for error in event.errors[:3] if error.strip()]
        more = [f"... and {len(event.errors) - 3} more"] if len(event.errors) > 3 else []
        lines = "".join(f"\n    {line}" for line in [*shown, *more])
        return f"  attempt {event.attempt}: {event.stage} FAILED{counts}:{lines}"
    if isinstance(event, WorkflowFailedEvent):
        return f"workflow failed at superstep {event.superstep}: {event.error}"
    return None


async def run(client: ChatClient, typescript_dir: Path, max_attempts: int, verbose: bool) -> int:
    print(f"TypeScript toolchain: {typescript_dir} (installing on first use)", flush=True)
    typescript = await asyncio.to_thread(install_typescript, typescript_dir)
    async with make_sandbox(typescript) as sandbox:
        workflow = build_workflow(client, sandbox, typescript, max_attempts=max_attempts)
        print(workflow.to_mermaid(), flush=True)
        result: CodeGenResult | None = None
        async for event in workflow.run_stream(REQUEST):
            if isinstance(event, AgentRunUpdateEvent):
                if verbose:  # the model's tokens as they stream
                    print(getattr(event.update, "text", ""), end="", flush=True)
                continue
            line = describe(event)
            if line is not None:
                print(line, flush=True)
            if isinstance(event, WorkflowOutputEvent) and isinstance(event.data, CodeGenResult):
                result = event.data
    if result is None:
        print("the workflow ended without a result")
        return 1
    print(f"\nresult: {result}")
    print(f"\n// solution.ts\n{result.code}\n\n// solution.test.ts\n{result.tests}")
    return 0 if result.succeeded else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model", help="a chat client spec, e.g. openai:gpt-4o-mini")
    parser.add_argument("--typescript-dir", type=Path, default=REPO_TYPESCRIPT_DIR)
    parser.add_argument("--max-attempts", type=int, default=4)
    parser.add_argument("--verbose", action="store_true", help="print the model's tokens")
    args = parser.parse_args(argv)
    configure_logging(level="WARNING")  # the progress lines below say what happens
    if args.model:
        from agentic_llm import create_chat_client

        client: ChatClient = create_chat_client(args.model)
        if "SmolLM2-135M" in str(getattr(client, "model", "")):
            sys.exit(f"typescript_state_machine.py: {EMBEDDED_MODEL_REFUSED}")
    else:
        client = scripted_client()
    return asyncio.run(run(client, args.typescript_dir, args.max_attempts, args.verbose))


if __name__ == "__main__":
    sys.exit(main())
