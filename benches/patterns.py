# pyright: reportMissingImports=false, reportMissingModuleSource=false
# (the peer comes from the optional `bench` dependency group: `uv run --group bench ...`)
"""Orchestration-pattern overhead: agentic_orchestrator against Microsoft Agent Framework.

Two shapes, each with agents whose model is scripted (an instant reply):

- ``sequential``: SequentialBuilder of 5 agents, one run = 5 turns;
- ``group_chat``: GroupChatBuilder of 5 agents, round robin, 20 rounds, one run = 20 turns.

For each framework, a run of the pattern and the same number of calls of its scripted model
alone (the same client type, a conversation of the same length) are timed in the same process,
every case once per round (round robin, so load hits every side alike), ``--rounds`` rounds
after a warm-up; the table gives medians and min-max over rounds. Framework overhead per turn =
pattern run - model alone, paired round by round; the table gives it for both and MAF's over
ours, computed per round (target >= 10x).

    uv run --group bench python benches/patterns.py [--rounds N] [--no-peers]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from _common import per_round, ratio_summary, run_rounds, summary

AGENTS = 5
ROUNDS = {"sequential": AGENTS, "group_chat": 20}
NAMES = [f"agent{i}" for i in range(AGENTS)]
PROMPT = "Plan a three-day trip to Lisbon."
REPLY = "Here is my part of the plan: day one, the old town."

Run = Callable[[], Awaitable[Any]]


@dataclass
class Case:
    """One timed thing: ``build()`` makes a fresh run (new agents and workflow, untimed)."""

    build: Callable[[], Run]
    check: Callable[[Any], None]
    units: int  # turns per run
    samples: list[float] = field(default_factory=list[float])
    reps: int = 1


# --------------------------------------------------------------------------------------------
# agentic


def agentic_case(shape: str) -> Case:
    from agentic_core import ChatAgent
    from agentic_core.testing import ScriptedChatClient
    from agentic_orchestrator import GroupChatBuilder, SequentialBuilder, round_robin_selector

    turns = ROUNDS[shape]

    def build() -> Run:
        agents = [ChatAgent(ScriptedChatClient([REPLY] * turns), name=name) for name in NAMES]
        if shape == "sequential":
            workflow = SequentialBuilder().participants(agents).build()
        else:
            workflow = (
                GroupChatBuilder()
                .participants(agents)
                .with_orchestrator_func(round_robin_selector)
                .with_max_iterations(turns)
                .build()
            )

        async def run() -> Any:
            return (await workflow.run(PROMPT)).outputs

        return run

    def check(outputs: Any) -> None:
        conversation = outputs[0]
        assert len(conversation) == 1 + turns, len(conversation)
        assert conversation[-1].text == REPLY

    return Case(build, check, turns)


def agentic_model_alone(shape: str) -> Case:
    from agentic_core import ChatMessage
    from agentic_core.testing import ScriptedChatClient

    turns = ROUNDS[shape]

    def build() -> Run:
        client = ScriptedChatClient([REPLY] * turns)
        conversation = [ChatMessage.user(PROMPT)]

        async def run() -> Any:
            for _ in range(turns):
                conversation.append((await client.generate(list(conversation))).message)
            return conversation

        return run

    def check(conversation: Any) -> None:
        assert len(conversation) == 1 + turns

    return Case(build, check, turns)


# --------------------------------------------------------------------------------------------
# Microsoft Agent Framework (agent-framework-orchestrations)


def maf_unavailable() -> str | None:
    try:
        import _maf_client  # noqa: F401
        import agent_framework_orchestrations  # noqa: F401
    except ImportError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def maf_case(shape: str) -> Case:
    from _maf_client import ScriptedChatClient
    from agent_framework import Agent
    from agent_framework_orchestrations import GroupChatBuilder, SequentialBuilder

    turns = ROUNDS[shape]

    def round_robin(state: Any) -> str:
        names = list(state.participants)
        return names[state.current_round % len(names)]

    def build() -> Run:
        clients = [ScriptedChatClient(script=[REPLY] * turns) for _ in NAMES]
        agents = [Agent(client, name=name) for client, name in zip(clients, NAMES, strict=True)]
        if shape == "sequential":
            workflow = SequentialBuilder(participants=agents).build()
        else:
            workflow = GroupChatBuilder(
                participants=agents, selection_func=round_robin, max_rounds=turns
            ).build()

        async def run() -> Any:
            outputs = (await workflow.run(PROMPT)).get_outputs()
            return outputs, sum(len(client.calls) for client in clients)

        return run

    def check(value: Any) -> None:
        outputs, model_calls = value
        assert outputs, "MAF produced no output"
        assert model_calls == turns, f"MAF called the models {model_calls} times, not {turns}"

    return Case(build, check, turns)


def maf_model_alone(shape: str) -> Case:
    from _maf_client import RawScriptedChatClient
    from agent_framework import Message

    turns = ROUNDS[shape]

    def build() -> Run:
        client = RawScriptedChatClient(script=[REPLY] * turns)
        conversation = [Message("user", [PROMPT])]

        async def run() -> Any:
            for _ in range(turns):
                response = await client.get_response(list(conversation))
                conversation.extend(response.messages)
            return conversation

        return run

    def check(conversation: Any) -> None:
        assert len(conversation) == 1 + turns

    return Case(build, check, turns)


# --------------------------------------------------------------------------------------------
# measurement


async def measure(rounds: int, peers: bool) -> dict[str, dict[str, Case]]:
    cases: dict[str, dict[str, Case]] = {}
    for shape in ROUNDS:
        cases[shape] = {"agentic": agentic_case(shape), "agentic_model": agentic_model_alone(shape)}
        if peers:
            cases[shape]["maf"] = maf_case(shape)
            cases[shape]["maf_model"] = maf_model_alone(shape)
    # every case once per round (ours, its model alone, MAF, its model alone, per shape)
    await run_rounds([case for shape in cases.values() for case in shape.values()], rounds, 0.2)
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--no-peers", action="store_true", help="skip Microsoft Agent Framework")
    args = parser.parse_args()
    # MAF logs a warning each time a group chat reaches max_rounds, which every run here does.
    logging.getLogger("agent_framework_orchestrations").setLevel(logging.ERROR)
    missing = None if args.no_peers else maf_unavailable()
    if missing:
        print(f"Microsoft Agent Framework unavailable ({missing}); measuring agentic only")
    cases = asyncio.run(measure(args.rounds, peers=not args.no_peers and missing is None))
    print(
        f"\nµs per turn, median (min-max) of {args.rounds} rounds, every case once per round; "
        "overhead = run - model alone, paired per round"
    )
    header = (
        f"{'shape':<12}{'impl':<10}{'run':>22}{'model alone':>22}{'overhead':>22}"
        f"{'MAF/agentic overhead':>24}"
    )
    print(header)
    print("-" * len(header))
    for shape, by_impl in cases.items():
        overheads: dict[str, list[float]] = {}
        for impl in ("agentic", "maf"):
            if impl not in by_impl:
                continue
            run, model = by_impl[impl], by_impl[f"{impl}_model"]
            overheads[impl] = [r - m for r, m in zip(run.samples, model.samples, strict=True)]
            ratio = ""
            if impl == "maf":
                ratio = ratio_summary(overheads["maf"], overheads["agentic"])
            print(
                f"{shape:<12}{impl:<10}{summary(run.samples):>22}{summary(model.samples):>22}"
                f"{summary(overheads[impl]):>22}{ratio:>24}"
            )
        if "maf" in overheads:
            ratios = per_round(overheads["maf"], overheads["agentic"])
            if ratios:
                every = min(ratios) >= 10
                verdict = "meets it in every round" if every else "misses it in some round"
                print(
                    f"{shape:<12}MAF/agentic overhead {statistics.median(ratios):.1f}x, lowest "
                    f"round {min(ratios):.1f}x (target >= 10x: {verdict})"
                )


if __name__ == "__main__":
    main()
