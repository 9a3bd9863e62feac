"""The tools of the run file ``examples/agentic.toml``: they hold the facts, the model picks them.

Stand-ins for real services (a weather API, a city guide) with a few cities built in. Each
returns one short line that starts with the city, which a small model can quote whole: sized,
like ``agentic demo``, for the embedded SmolLM2-135M (measured in ``tests/test_examples_local.py``).
A temperature below zero is written "3.5 °C below zero": quoting "-3.5", the 135M model drops
the minus sign.
"""

from __future__ import annotations

from typing import Annotated

from agentic_core import tool

_WEATHER = {
    "oslo": "3.5 °C below zero, light snow",
    "lisbon": "18 °C, sunny",
    "paris": "9 °C, cloudy",
    "tokyo": "12 °C, clear",
}
_DAYS = {
    "oslo": "Vigeland Park, Viking Ship Museum, dinner at Aker Brygge",
    "lisbon": "Belém Tower, tram 28 through Alfama, dinner in Bairro Alto",
    "paris": "the Louvre, a walk along the Seine, dinner in Montmartre",
    "tokyo": "Senso-ji temple, Meiji shrine, dinner in Shinjuku",
}

City = Annotated[str, "City name, e.g. 'Oslo'"]


@tool
def weather(city: City) -> str:
    """Today's weather in a city."""
    name = city.strip()
    return f"{name} weather: {_WEATHER.get(name.lower(), '12 °C, cloudy')}"


@tool
def day_plan(city: City) -> str:
    """A plan for one day in a city."""
    name = city.strip()
    plan = _DAYS.get(name.lower(), "the old town, the city museum, dinner in the centre")
    return f"{name} plan: {plan}"
