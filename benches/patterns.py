# pyright: reportMissingImports=false, reportMissingModuleSource=false
# (the peer comes from the optional `bench` dependency group: `uv run --group bench ...`)
"""Orchestration-pattern overhead: agentic_orchestrator against Microsoft Agent Framework.

Five patterns of 5 agents each, every agent's model scripted (an instant reply), each built the
way a MAF user writes it and the same shape in ours (agentic_orchestrator's builders):

- ``sequential``: SequentialBuilder, one run = 5 turns (each agent once);
- ``concurrent``: ConcurrentBuilder with the default aggregator, one run = 5 turns (at once);
- ``group_chat``: GroupChatBuilder, round-robin selection function, 20 rounds = 20 turns;
- ``handoff``: HandoffBuilder (the default mesh), 10 turns: each of the first 9 is one model
  reply calling the handoff tool to the next agent (a real tool call, two laps round the five
  agents: MAF's ``handoff_to_<name>``, our ``transfer_to_<name>``), the 10th answers; the same
  termination condition on both (the last message is that answer) ends the run there;
- ``magentic``: MagenticBuilder with a scripted manager agent (MAF's StandardMagenticManager
  over ``manager_agent``, our manager ``ChatAgent``): a fact sheet, a plan, then 10 rounds of a
  JSON progress ledger naming the next agent round robin plus that agent's turn, a last ledger
  saying the request is satisfied, and the final answer: one run = 24 model calls, its turns.

A turn is one model call of an agent (a participant's or the manager's). For each framework, a
run of the pattern and the same number of calls of its scripted model alone (the same client
type and replies, a conversation of the same length) are timed in the same process, every case
once per round (round robin, so load hits every side alike), ``--rounds`` rounds after a
warm-up; the table gives medians and min-max over rounds. Framework overhead per turn = pattern
run - model alone, paired round by round; the table gives it for both and MAF's over ours,
computed per round (target >= 20x in every round). Every run's result is checked (the output
conversation or answer, and the number of model calls).

``--profile SHAPE`` prints instead a profile of about a second of runs of one pattern: ours
under pyinstrument (the call tree), MAF's under cProfile (its functions by own time); ``--impl``
for one only.

    uv run --group bench python benches/patterns.py [--rounds N] [--no-peers] [--profile SHAPE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from _agent_scenario import ScriptStep, ToolCall
from _common import per_round, ratio_summary, run_rounds, summary

AGENTS = 5
NAMES = [f"agent{i}" for i in range(AGENTS)]
PROMPT = "Plan a three-day trip to Lisbon."
REPLY = "Here is my part of the plan: day one, the old town."
TARGET = 20.0  # MAF's per-turn overhead over ours, in every round

GROUP_CHAT_ROUNDS = 20
HANDOFF_TURNS = 10  # two laps round the five agents; the last turn answers
MAGENTIC_ROUNDS = 10
# The round limit both Magentic teams get: one above the rounds played, so the run ends on the
# ledger that says the request is satisfied, not on the limit.
MAGENTIC_LIMIT = MAGENTIC_ROUNDS + 1
MANAGER = "manager"
FACTS = "1. GIVEN OR VERIFIED FACTS: a three-day trip to Lisbon."
PLAN = "- each agent plans a part of the trip"
FINAL_ANSWER = "The plan: day one the old town, day two Belem, day three Sintra."

SHAPES = ("sequential", "concurrent", "group_chat", "handoff", "magentic")

Run = Callable[[], Awaitable[Any]]


def ledger(satisfied: bool, speaker: str) -> str:
    """A Magentic progress ledger in the JSON shape both frameworks' prompts ask for."""
    return json.dumps(
        {
            "is_request_satisfied": {"reason": "checked", "answer": satisfied},
            "is_in_loop": {"reason": "no repeats", "answer": False},
            "is_progress_being_made": {"reason": "new parts", "answer": True},
            "next_speaker": {"reason": "in turn", "answer": speaker},
            "instruction_or_question": {"reason": "next part", "answer": f"{speaker}, your part"},
        }
    )


def manager_script() -> list[str]:
    """The Magentic manager's replies: facts, plan, a ledger per round, the last, the answer."""
    rounds = [ledger(False, NAMES[r % AGENTS]) for r in range(MAGENTIC_ROUNDS)]
    return [FACTS, PLAN, *rounds, ledger(True, NAMES[0]), FINAL_ANSWER]


def handoff_scripts(tool_name: Callable[[str], str]) -> list[list[ScriptStep]]:
    """Each agent's replies in the handoff run: turn t is agent t % 5's, a handoff tool call to
    the next agent but for the last turn, which answers."""
    scripts: list[list[ScriptStep]] = [[] for _ in NAMES]
    for turn in range(HANDOFF_TURNS):
        agent = turn % AGENTS
        if turn == HANDOFF_TURNS - 1:
            scripts[agent].append(REPLY)
        else:
            target = NAMES[(agent + 1) % AGENTS]
            scripts[agent].append(ToolCall(f"call-{turn}", tool_name(target), {}))
    return scripts


def participant_turns(shape: str) -> int:
    """Participant turns per run (the participants' model calls)."""
    return {
        "sequential": AGENTS,
        "concurrent": AGENTS,
        "group_chat": GROUP_CHAT_ROUNDS,
        "handoff": HANDOFF_TURNS,
        "magentic": MAGENTIC_ROUNDS,
    }[shape]


def model_script(shape: str, tool_name: Callable[[str], str]) -> list[ScriptStep]:
    """Every model reply of one run, in order (what the model-alone case replays)."""
    if shape == "handoff":
        scripts = handoff_scripts(tool_name)
        return [scripts[t % AGENTS][t // AGENTS] for t in range(HANDOFF_TURNS)]
    if shape == "magentic":
        return [*manager_script(), *[REPLY] * MAGENTIC_ROUNDS]
    return [REPLY] * participant_turns(shape)


def turns(shape: str) -> int:
    """Model calls per run: the units of the table."""
    return len(model_script(shape, str))


@dataclass
class Case:
    """One timed thing: ``build()`` makes a fresh run (new agents and workflow, untimed)."""

    build: Callable[[], Run]
    check: Callable[[Any], None]
    units: int  # turns per run
    samples: list[float] = field(default_factory=list[float])
    reps: int = 1


def check_calls(impl: str, shape: str, calls: int) -> None:
    if calls != turns(shape):
        raise SystemExit(f"{impl} {shape}: {calls} model calls, expected {turns(shape)}")


# --------------------------------------------------------------------------------------------
# agentic


def agentic_workflow(shape: str) -> tuple[Any, list[Any]]:
    """A fresh workflow of ``shape`` and every scripted client it calls."""
    from agentic_core import ChatAgent, ChatMessage, FunctionCallContent
    from agentic_core.testing import ScriptedChatClient
    from agentic_orchestrator import (
        ConcurrentBuilder,
        GroupChatBuilder,
        HandoffBuilder,
        MagenticBuilder,
        SequentialBuilder,
        round_robin_selector,
    )
    from agentic_orchestrator._handoff_tools import transfer_tool_name

    def reply(step: ScriptStep) -> str | ChatMessage:
        if isinstance(step, ToolCall):
            call = FunctionCallContent(
                call_id=step.call_id, name=step.name, arguments=dict(step.arguments)
            )
            return ChatMessage.assistant(contents=[call])
        return step

    if shape == "handoff":
        scripts = handoff_scripts(transfer_tool_name)
    else:
        scripts = [[REPLY] * participant_turns(shape) for _ in NAMES]
    clients = [ScriptedChatClient([reply(s) for s in script]) for script in scripts]
    agents = [ChatAgent(c, name=name) for c, name in zip(clients, NAMES, strict=True)]
    if shape == "sequential":
        return SequentialBuilder(participants=agents).build(), clients
    if shape == "concurrent":
        return ConcurrentBuilder(participants=agents).build(), clients
    if shape == "group_chat":
        workflow = GroupChatBuilder(
            participants=agents,
            selection_func=round_robin_selector,
            max_rounds=GROUP_CHAT_ROUNDS,
        ).build()
        return workflow, clients
    if shape == "handoff":
        workflow = (
            HandoffBuilder(
                participants=agents,
                termination_condition=lambda conversation: conversation[-1].text == REPLY,
            )
            .with_start_agent(agents[0])
            .build()
        )
        return workflow, clients
    manager_client = ScriptedChatClient(manager_script())
    manager = ChatAgent(manager_client, name=MANAGER)
    workflow = MagenticBuilder(
        participants=agents, manager=manager, max_rounds=MAGENTIC_LIMIT
    ).build()
    return workflow, [*clients, manager_client]


def agentic_case(shape: str) -> Case:
    def build() -> Run:
        workflow, clients = agentic_workflow(shape)

        async def run() -> Any:
            outputs = (await workflow.run(PROMPT)).outputs
            return outputs, sum(len(client.calls) for client in clients)

        return run

    def check(value: Any) -> None:
        outputs, calls = value
        check_calls("agentic", shape, calls)
        (output,) = outputs
        if shape == "magentic":
            assert output.text == FINAL_ANSWER, output
            return
        expected = {"concurrent": AGENTS, "handoff": 1}.get(shape, participant_turns(shape))
        assert len(output) == 1 + expected, (shape, len(output))
        assert output[-1].text == REPLY, output[-1]

    return Case(build, check, turns(shape))


def agentic_model_alone(shape: str) -> Case:
    from agentic_core import ChatMessage, FunctionCallContent
    from agentic_core.testing import ScriptedChatClient
    from agentic_orchestrator._handoff_tools import transfer_tool_name

    script = [
        ChatMessage.assistant(
            contents=[FunctionCallContent(call_id=s.call_id, name=s.name, arguments={})]
        )
        if isinstance(s, ToolCall)
        else s
        for s in model_script(shape, transfer_tool_name)
    ]

    def build() -> Run:
        client = ScriptedChatClient(script)
        conversation = [ChatMessage.user(PROMPT)]

        async def run() -> Any:
            for _ in script:
                conversation.append((await client.generate(list(conversation))).message)
            return conversation

        return run

    def check(conversation: Any) -> None:
        assert len(conversation) == 1 + len(script)

    return Case(build, check, len(script))


# --------------------------------------------------------------------------------------------
# Microsoft Agent Framework (agent-framework-orchestrations)


def maf_unavailable() -> str | None:
    try:
        import _maf_client  # noqa: F401
        import agent_framework_orchestrations  # noqa: F401
    except ImportError as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def maf_handoff_tool_name(target: str) -> str:
    from agent_framework_orchestrations._handoff import get_handoff_tool_name

    return get_handoff_tool_name(target)


def maf_workflow(shape: str) -> tuple[Any, list[Any]]:
    """A fresh MAF workflow of ``shape`` and every scripted client it calls."""
    from _maf_client import ScriptedChatClient
    from agent_framework import Agent
    from agent_framework_orchestrations import (
        ConcurrentBuilder,
        GroupChatBuilder,
        HandoffBuilder,
        MagenticBuilder,
        SequentialBuilder,
    )

    if shape == "handoff":
        scripts = handoff_scripts(maf_handoff_tool_name)
    else:
        scripts = [[REPLY] * participant_turns(shape) for _ in NAMES]
    clients = [ScriptedChatClient(script=script) for script in scripts]
    # MAF refuses handoff participants that do not persist history per service call.
    persist = shape == "handoff"
    agents = [
        Agent(client, name=name, require_per_service_call_history_persistence=persist)
        for client, name in zip(clients, NAMES, strict=True)
    ]
    if shape == "sequential":
        return SequentialBuilder(participants=agents).build(), clients
    if shape == "concurrent":
        return ConcurrentBuilder(participants=agents).build(), clients
    if shape == "group_chat":

        def round_robin(state: Any) -> str:
            names = list(state.participants)
            return names[state.current_round % len(names)]

        workflow = GroupChatBuilder(
            participants=agents, selection_func=round_robin, max_rounds=GROUP_CHAT_ROUNDS
        ).build()
        return workflow, clients
    if shape == "handoff":
        workflow = (
            HandoffBuilder(
                participants=agents,
                termination_condition=lambda conversation: conversation[-1].text == REPLY,
            )
            .with_start_agent(agents[0])
            .build()
        )
        return workflow, clients
    manager_client = ScriptedChatClient(script=manager_script())
    manager = Agent(manager_client, name=MANAGER)
    workflow = MagenticBuilder(
        participants=agents, manager_agent=manager, max_round_count=MAGENTIC_LIMIT
    ).build()
    return workflow, [*clients, manager_client]


def maf_case(shape: str) -> Case:
    def build() -> Run:
        workflow, clients = maf_workflow(shape)

        async def run() -> Any:
            outputs = (await workflow.run(PROMPT)).get_outputs()
            return outputs, sum(len(client.calls) for client in clients)

        return run

    def check(value: Any) -> None:
        outputs, calls = value
        assert outputs, f"MAF {shape} produced no output"
        check_calls("MAF", shape, calls)
        if shape == "group_chat":  # its output says the chat reached max_rounds
            return
        text = outputs[-1].text
        expected = FINAL_ANSWER if shape == "magentic" else REPLY
        assert expected in text, (shape, text)

    return Case(build, check, turns(shape))


def maf_model_alone(shape: str) -> Case:
    from _maf_client import RawScriptedChatClient
    from agent_framework import Message

    script = model_script(shape, maf_handoff_tool_name)

    def build() -> Run:
        client = RawScriptedChatClient(script=script)
        conversation = [Message("user", [PROMPT])]

        async def run() -> Any:
            for _ in script:
                response = await client.get_response(list(conversation))
                conversation.extend(response.messages)
            return conversation

        return run

    def check(conversation: Any) -> None:
        assert len(conversation) == 1 + len(script)

    return Case(build, check, len(script))


# --------------------------------------------------------------------------------------------
# measurement


async def measure(rounds: int, peers: bool, shapes: Sequence[str]) -> dict[str, dict[str, Case]]:
    cases: dict[str, dict[str, Case]] = {}
    for shape in shapes:
        cases[shape] = {"agentic": agentic_case(shape), "agentic_model": agentic_model_alone(shape)}
        if peers:
            cases[shape]["maf"] = maf_case(shape)
            cases[shape]["maf_model"] = maf_model_alone(shape)
    # every case once per round (ours, its model alone, MAF, its model alone, per shape)
    await run_rounds([case for shape in cases.values() for case in shape.values()], rounds, 0.2)
    return cases


async def profile(shape: str, impls: Sequence[str]) -> None:
    """About a second of runs of ``shape``, per implementation: ours under pyinstrument (the
    call tree), MAF's under cProfile (pyinstrument's samples of MAF's deep async stacks land
    mostly in ``_weakrefset``, which cProfile shows is not where its time goes)."""
    import cProfile
    import pstats

    from pyinstrument import Profiler

    for impl in impls:
        case = agentic_case(shape) if impl == "agentic" else maf_case(shape)
        case.check(await case.build()())  # warm-up, and the result checked
        first = case.build()
        t0 = time.perf_counter()
        await first()
        # Built before the profile starts, about as many as a second runs: no more alive at once
        # (a framework may keep a registry of its live objects and walk it).
        count = max(1, min(5_000, round(1.2 / (time.perf_counter() - t0))))
        runs = [case.build() for _ in range(count)]
        tree = impl == "agentic"
        sampler = Profiler(interval=0.0001, async_mode="enabled") if tree else None
        tracer = None if tree else cProfile.Profile()
        done = 0
        if sampler is not None:
            sampler.start()
        if tracer is not None:
            tracer.enable()
        deadline = time.perf_counter() + 1.0
        for run in runs:
            await run()
            done += 1
            if time.perf_counter() > deadline:
                break
        if tracer is not None:
            tracer.disable()
        print(f"==== {impl}: {shape}, {done} runs of {turns(shape)} turns")
        if sampler is not None:
            sampler.stop()
            print(sampler.output_text(unicode=True, color=False))
        if tracer is not None:
            stats = pstats.Stats(tracer)
            calls: int = getattr(stats, "total_calls")  # noqa: B009 - set by Stats, not declared
            print(f"{calls / (done * turns(shape)):,.0f} Python calls per turn")
            stats.sort_stats("tottime").print_stats(25)


def print_table(cases: dict[str, dict[str, Case]], rounds: int) -> None:
    print(
        f"\nµs per turn, median (min-max) of {rounds} rounds, every case once per round; "
        "overhead = run - model alone, paired per round"
    )
    header = (
        f"{'shape':<12}{'impl':<10}{'run':>22}{'model alone':>22}{'overhead':>22}"
        f"{'MAF/agentic overhead':>24}"
    )
    print(header)
    print("-" * len(header))
    verdicts: list[str] = []
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
                every = min(ratios) >= TARGET
                verdict = "meets it in every round" if every else "misses it in some round"
                verdicts.append(
                    f"{shape:<12}MAF/agentic overhead {statistics.median(ratios):.1f}x, lowest "
                    f"round {min(ratios):.1f}x (target >= {TARGET:.0f}x: {verdict})"
                )
    if verdicts:
        print()
        print("\n".join(verdicts))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--no-peers", action="store_true", help="skip Microsoft Agent Framework")
    parser.add_argument(
        "--shapes", nargs="+", choices=SHAPES, default=list(SHAPES), help="patterns to time"
    )
    parser.add_argument(
        "--profile", choices=SHAPES, help="print a pyinstrument profile of one pattern instead"
    )
    parser.add_argument(
        "--impl", choices=["agentic", "maf"], help="with --profile: one implementation only"
    )
    args = parser.parse_args()
    # MAF logs a warning each time a group chat reaches max_rounds, which every run here does.
    logging.getLogger("agent_framework_orchestrations").setLevel(logging.ERROR)
    missing = None if args.no_peers else maf_unavailable()
    if missing:
        print(f"Microsoft Agent Framework unavailable ({missing}); measuring agentic only")
    peers = not args.no_peers and missing is None
    if args.profile:
        impls = [args.impl] if args.impl else ["agentic", *(["maf"] if peers else [])]
        asyncio.run(profile(args.profile, impls))
        return
    cases = asyncio.run(measure(args.rounds, peers, args.shapes))
    print_table(cases, args.rounds)


if __name__ == "__main__":
    main()
