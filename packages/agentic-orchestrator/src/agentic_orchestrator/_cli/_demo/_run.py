"""``run_demo``: the two parts of ``agentic demo`` (a multi-agent workflow, a grounded code
loop), run live on the chosen model, and the verdict."""

from __future__ import annotations

import os
import time
from typing import Any

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax

from agentic_core import ChatClient, registry
from agentic_core.registry import RegistryError
from agentic_orchestrator._cli._demo import _code
from agentic_orchestrator._cli._demo._party import (
    PartyPlan,
    PartyRequest,
    numbers_in,
    party_workflow,
)
from agentic_orchestrator._cli._demo._scripted import SCRIPTED_MODEL, scripted_demo_client
from agentic_orchestrator._cli._live import run_live
from agentic_orchestrator._cli._models import choose_model
from agentic_orchestrator._codegen._loop import code_loop
from agentic_orchestrator._codegen._models import CodeGenResult, CodeTask

__all__ = ["run_demo"]

MODEL_ENV = "AGENTIC_MODEL"
SEED_ENV = "AGENTIC_DEMO_SEED"
"""A fixed sampling seed for the embedded model (a repeatable run); unset: a new seed each run."""


async def run_demo(*, console: Console, model: str | None = None, quiet: bool = False) -> int:
    """Run both parts on the best model available (or ``model``); 0 when both succeed."""
    started = time.perf_counter()
    label, client = _choose(model)
    console.print(f"[bold]agentic demo[/bold] · model: {label}")
    try:
        await _warm_up(client, console, quiet=quiet)
        plan = await _run_party(client, console, quiet=quiet)
        code = await _code_part(client, console, quiet=quiet)
    finally:
        await _close(client)
    party_ok = _party_correct(plan)
    code_ok = code is not None and code.succeeded
    elapsed = time.perf_counter() - started
    verdict = "[green]both parts succeeded[/green]" if party_ok and code_ok else "[red]failed[/red]"
    console.print(
        Panel(
            f"part 1, multi-agent workflow: {'ok' if party_ok else 'FAILED'}\n"
            f"part 2, grounded code loop:   {'ok' if code_ok else 'FAILED'}\n"
            f"{verdict} in {elapsed:.1f} s",
            title="agentic demo",
            expand=False,
        )
    )
    return 0 if party_ok and code_ok else 1


def _choose(model: str | None) -> tuple[str, ChatClient]:
    spec = model or os.environ.get(MODEL_ENV)
    if spec == SCRIPTED_MODEL:
        return "scripted replies (no model, for tests)", scripted_demo_client()
    label, client = choose_model(spec)
    seed = os.environ.get(SEED_ENV, "").strip()
    if seed and getattr(client, "provider", "") == "local":
        # Read when the model loads, which is later (in _warm_up).
        client.seed = int(seed)  # pyright: ignore[reportAttributeAccessIssue]
    return label, client


async def _warm_up(client: ChatClient, console: Console, *, quiet: bool) -> None:
    """Load the model up front (a local one takes a moment), under a spinner."""
    if quiet:
        await client.health_check()
        return
    with console.status(f"loading {getattr(client, 'model', 'the model')} ..."):
        await client.health_check()


async def _run_party(client: ChatClient, console: Console, *, quiet: bool) -> PartyPlan | None:
    request = PartyRequest()
    console.print(f"\n[bold]1/2 · multi-agent workflow[/bold]: {request.question}")
    result = await run_live(
        party_workflow(client, question=request.question),
        request,
        console=console,
        title="party planner",
        quiet=quiet,
    )
    plans = [o for o in result.outputs if isinstance(o, PartyPlan)]
    return plans[-1] if plans else None


def _party_correct(plan: PartyPlan | None) -> bool:
    if plan is None or not plan.verified or plan.sandwiches is None:
        return False
    friends, each = numbers_in(PartyRequest().question)
    return plan.sandwiches == friends * each


async def _code_part(client: ChatClient, console: Console, *, quiet: bool) -> CodeGenResult | None:
    console.print(
        f"\n[bold]2/2 · grounded code loop[/bold]: write {_code.FUNCTION}() until its tests "
        "pass in the process sandbox"
    )
    try:
        sandbox_type: Any = registry.load("agentic.sandboxes", "process")
    except RegistryError as exc:
        console.print(f"[red]no sandbox:[/red] {exc}")
        return None
    async with sandbox_type(**_code.SANDBOX_OPTIONS) as sandbox:
        if not await sandbox.is_ready():
            console.print("[red]the process sandbox cannot run code on this machine[/red]")
            return None
        workflow = code_loop(
            client,
            sandbox,
            language="python",
            tests=_code.TESTS,
            max_attempts=_code.MAX_ATTEMPTS,
            temperature=_code.TEMPERATURE,
            max_tokens=_code.MAX_TOKENS,
            show_tests=False,
        )
        result = await run_live(
            workflow,
            CodeTask(prompt=_code.PROMPT, name=_code.FUNCTION, tests=_code.TESTS),
            console=console,
            title="code loop",
            quiet=quiet,
        )
    found = [o for o in result.outputs if isinstance(o, CodeGenResult)]
    outcome = found[-1] if found else None
    if outcome is not None and outcome.succeeded and not quiet:
        console.print(
            Panel(Syntax(outcome.code, "python"), title="the code that passed", expand=False)
        )
    return outcome


async def _close(client: ChatClient) -> None:
    close = getattr(client, "aclose", None)
    if close is not None:
        await close()
