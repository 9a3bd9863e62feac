"""Function tools: schemas from signatures and docstrings, validated invocation, the decorator."""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from enum import Enum
from typing import Annotated, Any, Literal, assert_type

import pytest
from pydantic import BaseModel, Field

from agentic_core._errors import ToolError
from agentic_core.agents._tools import FunctionTool, tool
from agentic_core.protocols._tool import Tool

# -- types used by the tools below (module level, so string annotations resolve) ---------------


class Unit(Enum):
    """Temperature unit."""

    CELSIUS = "c"
    FAHRENHEIT = "f"


class Address(BaseModel):
    """A postal address."""

    street: str
    city: str


class TreeNode(BaseModel):
    value: int
    children: list[TreeNode] = []


@tool
def get_weather(
    city: Annotated[str, Field(description="City name, e.g. Paris.")],
    unit: Unit = Unit.CELSIUS,
    days: int = 1,
) -> str:
    """Current weather for a city.

    Looks the forecast up in the weather service.

    Args:
        city: Ignored: the Field description wins.
        unit: Temperature unit of the answer.
        days: How many days
            to forecast.
    """
    return f"{city}: 20 {unit.value} for {days} day(s)"


@tool
async def send_letter(to: Address, body: Annotated[str, "The text of the letter."]) -> Address:
    """Send a letter."""
    return to


# -- schema ---------------------------------------------------------------------------------------


def test_schema_of_a_function_with_field_docstring_and_enum_parameters() -> None:
    assert get_weather.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. Paris."},
            "unit": {
                "type": "string",
                "enum": ["c", "f"],
                "description": "Temperature unit of the answer.",
                "default": "c",
            },
            "days": {"type": "integer", "default": 1, "description": "How many days to forecast."},
        },
        "required": ["city"],
        "additionalProperties": False,
    }


def test_schema_of_a_pydantic_model_parameter_is_inlined() -> None:
    assert send_letter.parameters == {
        "type": "object",
        "properties": {
            "to": {
                "type": "object",
                "description": "A postal address.",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                "required": ["street", "city"],
            },
            "body": {"type": "string", "description": "The text of the letter."},
        },
        "required": ["to", "body"],
        "additionalProperties": False,
    }


def test_schema_without_parameters_is_an_empty_object() -> None:
    @tool
    def ping() -> str:
        return "pong"

    assert ping.parameters == {
        "type": "object",
        "properties": {},
        "required": [],
        "additionalProperties": False,
    }


def test_optional_parameter_allows_null_and_is_not_required() -> None:
    @tool
    def search(query: str, limit: int | None = None) -> None: ...

    schema = search.parameters
    assert schema["properties"]["limit"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}],
        "default": None,
    }
    assert schema["required"] == ["query"]


def test_list_and_literal_parameters() -> None:
    @tool
    def tag(labels: list[str], mode: Literal["add", "remove"] = "add") -> None: ...

    properties = tag.parameters["properties"]
    assert properties["labels"] == {"type": "array", "items": {"type": "string"}}
    assert properties["mode"] == {"type": "string", "enum": ["add", "remove"], "default": "add"}


def test_list_of_models_is_inlined() -> None:
    @tool
    def deliver(addresses: list[Address]) -> None: ...

    items = deliver.parameters["properties"]["addresses"]["items"]
    assert items["type"] == "object"
    assert items["properties"] == {"street": {"type": "string"}, "city": {"type": "string"}}


def test_recursive_model_is_kept_as_a_reference_into_defs() -> None:
    @tool
    def total(tree: TreeNode) -> int:
        return tree.value

    schema = total.parameters
    assert schema["properties"]["tree"] == {"$ref": "#/$defs/TreeNode"}
    assert schema["$defs"]["TreeNode"]["properties"]["children"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/TreeNode"},
        "default": [],
    }


def test_schema_has_no_titles_or_unresolved_references() -> None:
    text = repr(get_weather.parameters) + repr(send_letter.parameters)

    assert "'title'" not in text
    assert "$ref" not in text
    assert "$defs" not in text


def test_parameter_named_title_is_kept() -> None:
    @tool
    def rename(title: str) -> None: ...

    assert rename.parameters["properties"] == {"title": {"type": "string"}}


def test_parameter_names_that_clash_with_pydantic_work() -> None:
    @tool
    def export(json: str, copy: bool, model_config: int = 0) -> str:
        return f"{json}/{copy}/{model_config}"

    assert list(export.parameters["properties"]) == ["json", "copy", "model_config"]
    assert asyncio.run(export.invoke({"json": "a", "copy": True})) == "a/True/0"


def test_annotated_string_describes_a_parameter() -> None:
    @tool
    def greet(who: Annotated[str, "Whom to greet."]) -> str:
        return who

    assert greet.parameters["properties"]["who"] == {
        "type": "string",
        "description": "Whom to greet.",
    }


def test_annotated_string_wins_over_the_docstring() -> None:
    @tool
    def greet(who: Annotated[str, "From Annotated."]) -> None:
        """Greet.

        Args:
            who: From the docstring.
        """

    assert greet.parameters["properties"]["who"]["description"] == "From Annotated."


def test_docstring_args_section_with_types_and_continuations() -> None:
    @tool
    def move(x: int, y: int, *, fast: bool = False) -> None:
        """Move the cursor.

        Args:
            x (int): Column,
                counted from zero.
            y: Row.
            fast: Skip the animation.

        Returns:
            Nothing.
        """

    properties = move.parameters["properties"]
    assert properties["x"]["description"] == "Column, counted from zero."
    assert properties["y"]["description"] == "Row."
    assert properties["fast"]["description"] == "Skip the animation."


def test_unannotated_parameter_accepts_anything() -> None:
    @tool
    def echo(value) -> Any:  # pyright: ignore[reportMissingParameterType]
        return value

    assert echo.parameters["properties"] == {"value": {}}
    assert asyncio.run(echo.invoke({"value": [1, "a"]})) == [1, "a"]


def test_parameters_returns_a_copy() -> None:
    get_weather.parameters["properties"].clear()

    assert "city" in get_weather.parameters["properties"]


# -- name and description -----------------------------------------------------------------------


def test_name_and_description_come_from_the_function() -> None:
    assert get_weather.name == "get_weather"
    assert get_weather.description == "Current weather for a city."


def test_description_joins_the_first_paragraph() -> None:
    @tool
    def lookup() -> None:
        """Look a word up
        in the dictionary.
        Args:
            nothing: here.
        """

    assert lookup.description == "Look a word up in the dictionary."


def test_function_without_docstring_has_an_empty_description() -> None:
    @tool
    def bare() -> None: ...

    assert bare.description == ""


def test_decorator_with_options_overrides_name_and_description() -> None:
    @tool(name="weather", description="Weather now.")
    def get_weather_now(city: str) -> str:
        """Ignored."""
        return city

    assert isinstance(get_weather_now, FunctionTool)
    assert get_weather_now.name == "weather"
    assert get_weather_now.description == "Weather now."


def test_tool_called_as_a_function_with_options() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    adder = tool(add, name="adder")

    assert adder.name == "adder"
    assert adder.fn is add


def test_repr_shows_the_name() -> None:
    assert repr(get_weather) == "FunctionTool(name='get_weather')"


def test_function_tool_is_a_tool() -> None:
    assert isinstance(get_weather, Tool)
    assert isinstance(send_letter, Tool)


# -- invocation -----------------------------------------------------------------------------------


async def test_invoke_sync_function_validates_and_converts() -> None:
    result = await get_weather.invoke({"city": "Paris", "unit": "f", "days": "3"})

    assert result == "Paris: 20 f for 3 day(s)"


async def test_invoke_async_function_converts_dict_to_model() -> None:
    result = await send_letter.invoke({"to": {"street": "1 Main St", "city": "Oslo"}, "body": "Hi"})

    assert result == Address(street="1 Main St", city="Oslo")


async def test_sync_function_runs_off_the_event_loop_thread() -> None:
    @tool
    def which_thread() -> threading.Thread:
        return threading.current_thread()

    worker = await which_thread.invoke({})

    assert worker is not threading.current_thread()


async def test_async_function_runs_on_the_event_loop_thread() -> None:
    @tool
    async def which_thread() -> threading.Thread:
        return threading.current_thread()

    assert await which_thread.invoke({}) is threading.current_thread()


async def test_sync_tools_do_not_block_each_other() -> None:
    barrier = threading.Barrier(2, timeout=5)

    @tool
    def meet() -> bool:
        barrier.wait()  # both calls must be in flight at once to pass the barrier
        return True

    assert await asyncio.gather(meet.invoke({}), meet.invoke({})) == [True, True]


async def test_omitted_arguments_use_the_function_defaults() -> None:
    sentinel: list[str] = []

    def collect(item: str, into: list[str] = sentinel) -> list[str]:
        into.append(item)
        return into

    result = await tool(collect).invoke({"item": "a"})

    assert result is sentinel


async def test_positional_only_and_keyword_only_parameters() -> None:
    @tool
    def span(start: int, /, end: int, *, step: int = 1) -> list[int]:
        return list(range(start, end, step))

    assert await span.invoke({"start": 0, "end": 6, "step": 2}) == [0, 2, 4]
    assert span.parameters["required"] == ["start", "end"]


async def test_exceptions_of_the_function_propagate_unchanged() -> None:
    @tool
    def fail() -> None:
        raise LookupError("no such city")

    with pytest.raises(LookupError, match="no such city"):
        await fail.invoke({})


async def test_callable_object_with_async_call_is_awaited() -> None:
    class Doubler:
        """Double a number."""

        async def __call__(self, n: int) -> int:
            return 2 * n

    doubler = tool(Doubler())

    assert (doubler.name, doubler.description) == ("Doubler", "Double a number.")
    assert await doubler.invoke({"n": 4}) == 8


async def test_partial_function_keeps_the_name_and_docstring_of_its_function() -> None:
    async def power(base: int, exponent: int) -> int:
        """Raise a number to a power."""
        return base**exponent

    partial_tool = tool(functools.partial(power, exponent=2))

    assert partial_tool.name == "power"
    assert partial_tool.description == "Raise a number to a power."


async def test_partial_function_makes_bound_parameters_optional() -> None:
    async def power(base: int, exponent: int) -> int:
        return base**exponent

    square = tool(functools.partial(power, exponent=2), name="square")

    assert list(square.parameters["properties"]) == ["base", "exponent"]
    assert square.parameters["required"] == ["base"]
    assert await square.invoke({"base": 3}) == 9


async def test_wrapping_a_function_tool_again_keeps_the_signature() -> None:
    renamed = tool(send_letter, name="post")

    result = await renamed.invoke({"to": {"street": "s", "city": "c"}, "body": "b"})

    assert renamed.parameters == send_letter.parameters
    assert result == Address(street="s", city="c")


# -- validation errors ----------------------------------------------------------------------------


async def test_missing_required_argument_names_tool_and_field() -> None:
    with pytest.raises(ToolError, match=r"'get_weather'.*city: missing required argument"):
        await get_weather.invoke({})


async def test_wrong_type_names_field_and_shows_the_input() -> None:
    with pytest.raises(ToolError) as caught:
        await get_weather.invoke({"city": "Paris", "days": "many"})

    message = str(caught.value)
    assert "'get_weather'" in message
    assert "days: Input should be a valid integer" in message
    assert "(got 'many')" in message


async def test_unknown_argument_is_rejected_and_parameters_listed() -> None:
    with pytest.raises(ToolError) as caught:
        await get_weather.invoke({"city": "Paris", "country": "FR"})

    assert "country: unexpected argument (parameters are: city, unit, days)" in str(caught.value)


async def test_every_bad_field_is_reported_including_nested_ones() -> None:
    with pytest.raises(ToolError) as caught:
        await send_letter.invoke({"to": {"street": 5}, "body": None})

    message = str(caught.value)
    assert "'send_letter'" in message
    assert "to.street: Input should be a valid string" in message
    assert "to.city: field required" in message
    assert "body: Input should be a valid string" in message


async def test_bad_enum_value_is_a_tool_error() -> None:
    with pytest.raises(ToolError, match="unit: Input should be 'c' or 'f'"):
        await get_weather.invoke({"city": "Paris", "unit": "kelvin"})


async def test_function_is_not_called_when_arguments_are_invalid() -> None:
    calls: list[int] = []

    @tool
    def record(n: int) -> None:
        calls.append(n)

    with pytest.raises(ToolError):
        await record.invoke({"n": "x"})
    assert calls == []


async def test_long_inputs_are_shortened_in_messages() -> None:
    with pytest.raises(ToolError) as caught:
        await get_weather.invoke({"city": "Paris", "days": "x" * 500})

    assert "..." in str(caught.value)
    assert len(str(caught.value)) < 300


# -- decoration errors ----------------------------------------------------------------------------


def test_var_positional_parameters_are_rejected() -> None:
    def spread(*values: int) -> int:
        return sum(values)

    with pytest.raises(ToolError, match=r"'spread'.*\*values"):
        tool(spread)


def test_var_keyword_parameters_are_rejected() -> None:
    def options(**extra: str) -> None: ...

    with pytest.raises(ToolError, match=r"\*\*extra"):
        tool(options)


def test_name_rejected_by_providers_is_an_error() -> None:
    with pytest.raises(ToolError, match="pass name="):
        tool(lambda x: x)


def test_invalid_explicit_name_is_an_error() -> None:
    def fine() -> None: ...

    with pytest.raises(ToolError, match="'has space'"):
        tool(fine, name="has space")


def test_unbound_method_is_rejected_with_a_hint() -> None:
    class Service:
        def lookup(self, key: str) -> str:
            return key

    with pytest.raises(ToolError, match=r"tool\(instance.method\)"):
        tool(Service.lookup)


async def test_bound_method_is_a_tool() -> None:
    class Service:
        def lookup(self, key: str) -> str:
            return key.upper()

    lookup = tool(Service().lookup)

    assert list(lookup.parameters["properties"]) == ["key"]
    assert await lookup.invoke({"key": "a"}) == "A"


def test_unresolvable_annotation_is_an_error() -> None:
    class Local(BaseModel):
        x: int

    def use(item: Local) -> None: ...  # a string annotation naming a class local to this test

    with pytest.raises(ToolError, match="cannot resolve a type annotation"):
        tool(use)


def test_type_without_json_schema_is_an_error() -> None:
    def lock(guard: threading.Event) -> None: ...

    with pytest.raises(ToolError, match="'lock'"):
        tool(lock)


# -- passthrough ----------------------------------------------------------------------------------


def test_calling_the_tool_calls_the_function() -> None:
    result = get_weather("Rome", Unit.FAHRENHEIT, days=2)

    assert_type(result, str)
    assert result == "Rome: 20 f for 2 day(s)"


async def test_calling_an_async_tool_returns_its_coroutine() -> None:
    address = Address(street="s", city="c")

    pending = send_letter(address, "body")

    assert inspect.iscoroutine(pending)
    assert await pending is address


def test_tool_keeps_the_function_metadata() -> None:
    assert get_weather.__name__ == "get_weather"  # pyright: ignore[reportAttributeAccessIssue]
    assert (get_weather.__doc__ or "").startswith("Current weather for a city.")
