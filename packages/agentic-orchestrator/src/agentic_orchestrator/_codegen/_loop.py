"""code_loop: generate, compile, test, repair, until the tests pass or attempts run out."""

from __future__ import annotations

import os
from typing import Any

from agentic_core import ChatClient, Sandbox, Workflow, WorkflowBuilder
from agentic_orchestrator._codegen._fingerprint import ErrorFingerprinter
from agentic_orchestrator._codegen._generator import LLMGeneratorExecutor
from agentic_orchestrator._codegen._models import (
    CodeTask,
    code_failed,
    code_passed,
    repair_is_simple,
)
from agentic_orchestrator._codegen._validators import (
    CompileValidatorExecutor,
    TestValidatorExecutor,
)

# Supersteps one attempt takes at most: generate, compile, test, fingerprint.
_SUPERSTEPS_PER_ATTEMPT = 4


def _complex_failure(message: Any) -> bool:
    return code_failed(message) and not repair_is_simple(message)


def code_loop(
    client: ChatClient,
    sandbox: Sandbox,
    *,
    prompt: str | None = None,
    language: str = "python",
    tests: str = "",
    max_attempts: int = 3,
    fast_client: ChatClient | None = None,
    typescript: str | os.PathLike[str] | None = None,
    system_prompt: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
    show_tests: bool = True,
    name: str = "code-loop",
) -> Workflow:
    """The grounded code loop as a workflow: generator -> compile -> test, failures back.

    ``generator`` writes the code, ``compile`` checks it, ``test`` runs ``tests`` (Python:
    pytest-style ``test_*`` functions importing from ``solution``; TypeScript: ``node:test``
    importing ``./solution.ts``) in ``sandbox``. A failed check goes back to the generator
    with its errors, up to ``max_attempts`` generations. With ``fast_client``, failures pass
    an ``ErrorFingerprinter`` first: simple ones go to ``fast_generator`` (the fast model),
    complex ones to ``generator``. Each run ends with one ``CodeGenResult`` output::

        result = await code_loop(client, sandbox, tests=TESTS).run("Write add(a, b).")
        print(result.outputs[0])

    Run it with a prompt (str), a ``CodeTask``, or nothing when ``prompt`` is given here.
    TypeScript needs ``typescript`` (an npm package directory the sandbox mounts).
    ``temperature`` and ``max_tokens`` go to the model (a bound stops a small model that
    repeats itself); ``show_tests=False`` keeps the test file out of the
    prompt (the tests still run; state in the prompt what they check): small models copy tests.
    """
    template = CodeTask(prompt=prompt or "", language=language, tests=tests)

    def generator_on(model: ChatClient, executor_id: str) -> LLMGeneratorExecutor:
        # Generators of one loop share the part: both repair the one task (shared state).
        return LLMGeneratorExecutor(
            model,
            id=executor_id,
            part=template.name,
            language=language,
            system_prompt=system_prompt,
            max_attempts=max_attempts,
            temperature=temperature,
            max_tokens=max_tokens,
            task=template,
            show_tests=show_tests,
        )

    generator = generator_on(client, "generator")
    compile_ = CompileValidatorExecutor(sandbox, language=language, typescript=typescript)
    test = TestValidatorExecutor(sandbox, language=language, typescript=typescript)
    supersteps = max(100, _SUPERSTEPS_PER_ATTEMPT * max_attempts + 10)
    builder = (
        WorkflowBuilder(name, max_supersteps=supersteps)
        .set_start_executor(generator)
        .add_edge(generator, compile_)
        .add_edge(compile_, test, condition=code_passed, description="compiles")
    )
    if fast_client is None:
        builder.add_edge(compile_, generator, condition=code_failed, description="compile errors")
        builder.add_edge(test, generator, condition=code_failed, description="failing tests")
        return builder.build()
    fingerprinter = ErrorFingerprinter()
    fast = generator_on(fast_client, "fast_generator")
    builder.add_edge(compile_, fingerprinter, condition=code_failed, description="compile errors")
    builder.add_edge(test, fingerprinter, condition=code_failed, description="failing tests")
    builder.add_edge(fingerprinter, fast, condition=repair_is_simple, description="simple")
    builder.add_edge(fingerprinter, generator, condition=_complex_failure, description="complex")
    builder.add_edge(fast, compile_)
    return builder.build()
