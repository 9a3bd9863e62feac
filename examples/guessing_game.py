"""Human in the loop: an agent guesses a number, a person answers higher, lower or correct.

A port of Microsoft Agent Framework's sample
``python/samples/03-workflows/human-in-the-loop/guessing_game_with_human_input.py``: a
``TurnManager`` executor and an agent take turns; after each guess the turn manager asks the
human (``request_info``), and the answer either ends the game or goes back to the agent as
feedback. What it shows:

- the agent remembers its own conversation across turns of one run (each ``AgentExecutor``
  keeps one thread per run, saved with the run's checkpoints);
- structured output from the agent's default options (``ChatOptions(response_format=...)``)
  reaches the workflow as ``agent_response.value``;
- the application drives the loop with ``run_stream(responses=...)``.

Offline by default: the "model" is a function that reads the conversation (it bisects 1..10
with the feedback it was given) and the "human" is a script that knows the number. Run:
``uv run python examples/guessing_game.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from agentic_core import (
    AgentExecutor,
    AgentExecutorResponse,
    ChatAgent,
    ChatMessage,
    ChatOptions,
    Executor,
    RequestInfoEvent,
    Role,
    WorkflowBuilder,
    WorkflowContext,
    WorkflowEvent,
    WorkflowOutputEvent,
    handler,
    response_handler,
)
from agentic_core.testing import FunctionChatClient

SECRET = 7


@dataclass
class HumanFeedbackRequest:
    """Request sent to the human for feedback on the agent's guess."""

    prompt: str


class GuessOutput(BaseModel):
    """Structured output from the agent, enforced by its default response_format."""

    guess: int


class TurnManager(Executor):
    """Coordinates turns between the agent and the human."""

    def __init__(self, id: str = "turn_manager") -> None:  # noqa: A002
        super().__init__(id)

    @handler
    async def start(self, _: str, ctx: WorkflowContext[list[ChatMessage]]) -> None:
        """Start the game by asking the agent for an initial guess."""
        await ctx.send_message([ChatMessage.user("Start by making your first guess.")])

    @handler
    async def on_agent_response(self, result: AgentExecutorResponse, ctx: WorkflowContext) -> None:
        """Ask the human about the agent's guess (read from its structured output)."""
        guess = result.agent_response.value
        if not isinstance(guess, GuessOutput):
            raise RuntimeError("the agent's response carries no parsed GuessOutput")
        prompt = (
            f"The agent guessed: {guess.guess}. Type one of: higher (your number is higher than "
            "this guess), lower (your number is lower than this guess), correct, or exit."
        )
        await ctx.request_info(HumanFeedbackRequest(prompt=prompt), str)

    @response_handler
    async def on_human_feedback(
        self,
        original_request: HumanFeedbackRequest,
        feedback: str,
        ctx: WorkflowContext[list[ChatMessage], str],
    ) -> None:
        """Finish the game, or send the feedback back to the agent."""
        reply = feedback.strip().lower()
        if reply == "correct":
            await ctx.yield_output("Guessed correctly!")
            return
        last_guess = original_request.prompt.split(": ")[1].split(".")[0]
        await ctx.send_message(
            [
                ChatMessage.user(
                    f"Feedback: {reply}. Your last guess was {last_guess}. "
                    "Use this feedback to adjust and make your next guess (1-10)."
                )
            ]
        )


def bisecting_model(messages: Sequence[ChatMessage], options: ChatOptions | None) -> str:
    """A stand-in model: it bisects 1..10 using every guess and feedback in the conversation."""
    low, high = 1, 10
    guess: int | None = None
    for message in messages:
        if message.role is Role.ASSISTANT:
            guess = json.loads(message.text)["guess"]
        elif message.role is Role.USER and guess is not None:
            if re.search(r"Feedback: higher", message.text):
                low = guess + 1
            elif re.search(r"Feedback: lower", message.text):
                high = guess - 1
    if options is None or options.response_format is not GuessOutput:
        raise RuntimeError("the agent should ask for a GuessOutput by its default options")
    return GuessOutput(guess=(low + high) // 2).model_dump_json()


def human(prompt: str) -> str:
    """A person who knows the number."""
    guess = int(prompt.split(": ", 2)[1].split(".", 1)[0])
    if guess == SECRET:
        return "correct"
    return "higher" if guess < SECRET else "lower"


async def process_event_stream(stream: AsyncIterable[WorkflowEvent]) -> dict[str, str] | None:
    """Print outputs; answer the human feedback requests of this stream."""
    responses: dict[str, str] = {}
    async for event in stream:
        if isinstance(event, RequestInfoEvent) and isinstance(event.data, HumanFeedbackRequest):
            answer = human(event.data.prompt)
            print(f"HITL> {event.data.prompt}\n  human: {answer}")
            responses[event.request_id] = answer
        elif isinstance(event, WorkflowOutputEvent):
            print(f"Workflow output: {event.data}")
    return responses or None


async def main() -> None:
    guessing_agent = ChatAgent(
        FunctionChatClient(bisecting_model),
        "You guess a number between 1 and 10. If the user says 'higher' or 'lower', adjust your "
        'next guess. Return ONLY a JSON object matching {"guess": <integer 1..10>}.',
        name="GuessingAgent",
        options=ChatOptions(response_format=GuessOutput),
    )
    turn_manager = TurnManager()
    agent = AgentExecutor(guessing_agent, id="guessing_agent")
    workflow = (
        WorkflowBuilder("guessing-game", max_supersteps=50)
        .set_start_executor(turn_manager)
        .add_edge(turn_manager, agent)  # ask the agent to make or adjust a guess
        .add_edge(agent, turn_manager)  # its response comes back to the turn manager
        .build()
    )
    pending = await process_event_stream(workflow.run_stream("start"))
    while pending is not None:
        pending = await process_event_stream(workflow.run_stream(responses=pending))


if __name__ == "__main__":
    asyncio.run(main())
