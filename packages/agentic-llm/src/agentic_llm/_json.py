"""Reading providers' JSON: what every mapping shares (pure functions, no I/O)."""

from __future__ import annotations

from typing import Any, TypeAlias, cast

from pydantic import BaseModel, ValidationError

JSONObject: TypeAlias = dict[str, Any]


def as_object(value: Any) -> JSONObject:
    """``value`` when it is a JSON object, else an empty one (providers omit fields freely)."""
    return cast("JSONObject", value) if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else an empty one."""
    return cast("list[Any]", value) if isinstance(value, list) else []


def parse_structured_value(text: str, response_format: type[BaseModel]) -> BaseModel | None:
    """The reply parsed into ``response_format``, or None (the agent then asks again)."""
    try:
        return response_format.model_validate_json(text)
    except ValidationError:
        return None
