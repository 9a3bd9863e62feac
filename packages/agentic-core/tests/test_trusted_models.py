"""Models built without validation on the hot paths equal their validated construction.

The agent loop and the message factories build some pydantic models from values already of
the fields' types (``protocols/_trusted.py``); what they build must be indistinguishable from
the validated construction: the same type, the same field values, the same fields set (which
``model_dump(exclude_unset=True)`` and ``ChatOptions.merged_with`` read), and a set of its own.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from pydantic import BaseModel, PrivateAttr, ValidationError

from agentic_core import ChatAgent, ChatOptions, tool
from agentic_core.protocols._agent import AgentResponse
from agentic_core.protocols._messages import (
    ChatMessage,
    FunctionResultContent,
    Role,
    TextContent,
    UsageDetails,
)
from agentic_core.protocols._trusted import new_id, replaced, trusted
from agentic_core.testing import ScriptedChatClient


def assert_same_model(built: BaseModel, validated: BaseModel) -> None:
    """``built`` is what ``validated`` is: type, fields, fields set, nested models too."""
    assert type(built) is type(validated)
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_dump(exclude_unset=True) == validated.model_dump(exclude_unset=True)
    assert built.__pydantic_extra__ == validated.__pydantic_extra__
    assert built.__pydantic_private__ == validated.__pydantic_private__


# --- the models built without validation qualify ------------------------------------------------


@pytest.mark.parametrize(
    "model",
    [ChatMessage, TextContent, FunctionResultContent, UsageDetails, AgentResponse, ChatOptions],
)
def test_every_model_built_without_validation_has_nothing_trusted_would_skip(
    model: type[BaseModel],
) -> None:
    # trusted() sets no extra, no private attributes and runs no model_post_init.
    assert model.model_config.get("extra") != "allow"
    assert not model.__private_attributes__
    assert model.__pydantic_post_init__ is None


# --- ids ----------------------------------------------------------------------------------------


def test_new_ids_are_random_uuid4_hex_strings() -> None:
    ids = [new_id() for _ in range(2_000)]

    assert len(set(ids)) == len(ids)
    for made in ids:
        parsed = uuid.UUID(made)
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)
        assert parsed.hex == made


def test_ids_are_unique_across_threads() -> None:
    import threading

    made: list[list[str]] = [[] for _ in range(4)]

    def take(into: list[str]) -> None:
        into.extend(new_id() for _ in range(3_000))  # crosses several batches of 256

    threads = [threading.Thread(target=take, args=(ids,)) for ids in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    every = [i for ids in made for i in ids]
    assert len(set(every)) == len(every) == 12_000


_FORKED_IDS = """
import os
from agentic_core.protocols._trusted import new_id

new_id()  # the parent now holds a batch the child inherits
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(read)
    os.write(write, "".join(new_id() for _ in range(300)).encode())
    os._exit(0)
os.close(write)
with os.fdopen(read) as pipe:
    child = pipe.read()
os.waitpid(pid, 0)
print(child)
print("".join(new_id() for _ in range(300)))
"""


def test_a_forked_child_never_repeats_its_parents_ids() -> None:
    import subprocess
    import sys

    # A fresh interpreter without threads: fork() in a threaded process warns on 3.12+.
    done = subprocess.run(
        [sys.executable, "-c", _FORKED_IDS], capture_output=True, text=True, check=True
    )
    child_text, parent_text = done.stdout.split()
    child = {child_text[i : i + 32] for i in range(0, len(child_text), 32)}
    parent = {parent_text[i : i + 32] for i in range(0, len(parent_text), 32)}
    assert len(child) == len(parent) == 300
    assert not child & parent


def test_messages_and_threads_get_new_uuid4_ids() -> None:
    agent = ChatAgent(ScriptedChatClient([]), name="a")

    for made in (ChatMessage.user("x").message_id, agent.get_new_thread().id):
        assert uuid.UUID(made).version == 4
    assert agent.id.startswith("a-")
    assert len(agent.id) == len("a-") + 8


# --- the message factories ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("factory", "role"),
    [
        (ChatMessage.system, Role.SYSTEM),
        (ChatMessage.user, Role.USER),
        (ChatMessage.assistant, Role.ASSISTANT),
    ],
    ids=["system", "user", "assistant"],
)
def test_a_text_message_equals_its_validated_construction(factory: Any, role: Role) -> None:
    built: ChatMessage = factory("hello")

    validated = ChatMessage(
        role=role, contents=[TextContent(text="hello")], message_id=built.message_id
    )
    validated.__pydantic_fields_set__.discard("message_id")  # given here only to compare

    assert_same_model(built, validated)
    assert_same_model(built.contents[0], validated.contents[0])


@pytest.mark.parametrize("result", ["value-1", {"temp": [21, 22]}, None])
@pytest.mark.parametrize("is_error", [False, True])
def test_a_tool_message_equals_its_validated_construction(result: Any, is_error: bool) -> None:
    built = ChatMessage.tool("call-1", result, is_error=is_error)

    content = FunctionResultContent(call_id="call-1", result=result, is_error=is_error)
    validated = ChatMessage(role=Role.TOOL, contents=[content], message_id=built.message_id)
    validated.__pydantic_fields_set__.discard("message_id")

    assert_same_model(built, validated)
    assert_same_model(built.contents[0], content)
    assert built.function_results[0].result is result  # Any: kept as given, as validated


def test_each_message_has_its_own_contents_and_fields_set() -> None:
    first, second = ChatMessage.user("x"), ChatMessage.user("x")
    first.author_name = "ada"  # assignment marks the field as set, on this message only

    assert first.contents is not second.contents
    assert "author_name" in first.model_fields_set
    assert "author_name" not in second.model_fields_set


def test_a_text_that_is_not_a_str_is_still_refused() -> None:
    with pytest.raises(ValidationError):
        ChatMessage.user(5)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ChatMessage.tool(7, "x")  # type: ignore[arg-type]


def test_a_factory_of_a_message_subclass_builds_the_subclass() -> None:
    class TaggedMessage(ChatMessage):
        tag: str = "none"

    message = TaggedMessage.user("hi")

    assert type(message) is TaggedMessage
    assert (message.tag, message.text) == ("none", "hi")
    assert type(TaggedMessage.tool("c", 1)) is TaggedMessage


def test_factory_keywords_are_validated_as_before() -> None:
    message = ChatMessage.user("hi", author_name="ada")

    assert message.model_fields_set == {"role", "contents", "author_name"}
    with pytest.raises(ValidationError):
        ChatMessage.user("hi", author_name=3)


# --- usage --------------------------------------------------------------------------------------


def test_usage_sums_equal_their_validated_construction() -> None:
    total = UsageDetails(input_tokens=1, output_tokens=2, total_tokens=3) + UsageDetails(
        input_tokens=10, output_tokens=20, total_tokens=30
    )

    assert_same_model(total, UsageDetails(input_tokens=11, output_tokens=22, total_tokens=33))


def test_usage_that_does_not_sum_to_ints_is_still_validated() -> None:
    odd = UsageDetails.model_construct(input_tokens=0.5)  # an unvalidated, fractional count

    with pytest.raises(ValidationError):
        _ = odd + UsageDetails()


# --- copies -------------------------------------------------------------------------------------


def test_replaced_equals_model_copy_with_the_update() -> None:
    message = ChatMessage.assistant("hi")

    copied = replaced(message, {"author_name": "ada"})

    assert_same_model(copied, message.model_copy(update={"author_name": "ada"}))
    assert message.author_name is None
    assert copied.model_fields_set is not message.model_fields_set


def test_replaced_copies_a_model_with_private_attributes_through_model_copy() -> None:
    class WithPrivate(BaseModel):
        name: str = ""
        _cache: dict[str, int] = PrivateAttr(default_factory=lambda: {"hits": 1})

    model = WithPrivate(name="a")

    copied = replaced(model, {"name": "b"})

    assert_same_model(copied, model.model_copy(update={"name": "b"}))
    assert copied._cache == {"hits": 1}


def test_trusted_sets_the_given_fields_and_fields_set() -> None:
    built = trusted(TextContent, {"type": "text", "text": "x"}, {"text"})

    assert_same_model(built, TextContent(text="x"))


# --- what the agent builds ----------------------------------------------------------------------


def lookup(key: int) -> str:
    """Look a key up."""
    return f"value-{key}"


async def test_the_agent_response_equals_its_validated_construction() -> None:
    client = ScriptedChatClient(["done"])
    agent = ChatAgent(client, name="a", id="a-1", tools=[tool(lookup)])

    response = await agent.run("go")

    validated = AgentResponse(
        messages=response.messages,
        text="done",
        usage=response.usage,
        agent_id="a-1",
        value=None,
        user_input_requests=[],
    )
    assert_same_model(response, validated)
    assert_same_model(response.messages[0], response.messages[0].model_copy())
    assert response.messages[0].model_fields_set >= {"author_name"}


async def test_an_agent_id_that_is_not_a_str_is_refused_in_the_response() -> None:
    agent = ChatAgent(ScriptedChatClient(["done"]), id=5)  # type: ignore[arg-type]

    with pytest.raises(ValidationError):
        await agent.run("go")


async def test_the_options_an_agent_sends_equal_a_validated_copy_with_its_tools() -> None:
    client = ScriptedChatClient(["done"])
    lookup_tool = tool(lookup)
    agent = ChatAgent(client, tools=[lookup_tool], options=ChatOptions(temperature=0.3))

    await agent.run("go")

    [(_, sent)] = client.calls
    assert sent is not None
    assert_same_model(sent, ChatOptions(temperature=0.3, tools=[lookup_tool]))
    assert sent.tools is not agent.tools
    assert agent.options.model_fields_set == {"temperature"}


# --- the lifecycle events a stream gets every superstep ------------------------------------------


def test_lifecycle_events_equal_their_validated_construction() -> None:
    from agentic_core.protocols._events import (
        ExecutorCompletedEvent,
        ExecutorInvokedEvent,
        SuperstepCompletedEvent,
        SuperstepStartedEvent,
        executor_completed,
        executor_invoked,
        superstep_completed,
        superstep_started,
    )

    pairs: list[tuple[BaseModel, BaseModel]] = [
        (
            superstep_started(3, ["a", "b"]),
            SuperstepStartedEvent(superstep=3, executor_ids=["a", "b"]),
        ),
        (executor_invoked("a", 3), ExecutorInvokedEvent(executor_id="a", superstep=3)),
        (
            executor_completed("a", 3, 0.25),
            ExecutorCompletedEvent(executor_id="a", superstep=3, duration_s=0.25),
        ),
        (superstep_completed(3), SuperstepCompletedEvent(superstep=3)),
    ]
    for built, validated in pairs:
        assert_same_model(built, validated)
        assert built.model_dump_json() == validated.model_dump_json()
        assert repr(built) == repr(validated)
        for event in (built, validated):  # qualifies: nothing trusted() would leave unset
            assert not type(event).model_config.get("extra")
            assert not type(event).__private_attributes__


def test_a_streamed_run_yields_the_validated_lifecycle_events() -> None:
    import asyncio
    from typing import Never

    from agentic_core import WorkflowBuilder, WorkflowContext, executor

    @executor
    async def one(n: int, ctx: WorkflowContext[int]) -> None:
        await ctx.send_message(n + 1)

    @executor
    async def two(n: int, ctx: WorkflowContext[Never, int]) -> None:
        await ctx.yield_output(n)

    workflow = WorkflowBuilder().set_start_executor(one).add_edge(one, two).build()

    async def collect() -> list[BaseModel]:
        return [event async for event in workflow.run_stream(1)]

    for event in asyncio.run(collect()):
        rebuilt = type(event).model_validate(event.model_dump())
        assert event == rebuilt
        assert event.model_fields_set == rebuilt.model_fields_set
