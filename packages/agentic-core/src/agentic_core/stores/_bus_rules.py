"""What every MessageBus checks the same way: subjects, wildcard matching, payloads, headers."""

from __future__ import annotations

import json
from collections.abc import Mapping

from pydantic import BaseModel

from agentic_core._errors import InvalidSubjectError, SerializationError
from agentic_core.protocols._bus import BusPayload


def check_subject(subject: str, *, wildcards: bool) -> list[str]:
    """The tokens of ``subject``; ``InvalidSubjectError`` naming what is wrong with it.

    ``wildcards``: ``*`` (a whole token) and ``>`` (the last token) are allowed (subscriptions).
    """
    if not isinstance(subject, str) or not subject:  # pyright: ignore[reportUnnecessaryIsInstance]
        raise InvalidSubjectError(f"a subject must be a non-empty string, got {subject!r}")
    tokens = subject.split(".")
    for index, part in enumerate(tokens):
        if not part:
            raise InvalidSubjectError(f"subject {subject!r} has an empty token")
        if any(char.isspace() or not char.isprintable() for char in part):
            raise InvalidSubjectError(f"subject {subject!r} contains whitespace or control chars")
        if part in ("*", ">"):
            if not wildcards:
                raise InvalidSubjectError(
                    f"subject {subject!r} has a wildcard; only subscriptions may use them"
                )
            if part == ">" and index != len(tokens) - 1:
                raise InvalidSubjectError(f"subject {subject!r}: '>' must be the last token")
        elif "*" in part or ">" in part:
            raise InvalidSubjectError(
                f"subject {subject!r}: wildcards must be whole tokens, not part of {part!r}"
            )
    return tokens


def subject_matches(pattern: str, subject: str) -> bool:
    """Whether the concrete ``subject`` matches the subscription ``pattern``."""
    wanted = pattern.split(".")
    got = subject.split(".")
    for index, part in enumerate(wanted):
        if part == ">":
            return len(got) > index
        if index >= len(got) or (part != "*" and part != got[index]):
            return False
    return len(got) == len(wanted)


def encode_bus_payload(data: BusPayload) -> bytes:
    """``data`` as the bytes that travel: bytes as-is, str as UTF-8, models and dicts as JSON."""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data)
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, BaseModel):
        return data.model_dump_json().encode("utf-8")
    if isinstance(data, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        try:
            return json.dumps(data, separators=(",", ":"), allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise SerializationError(f"a bus message must be JSON: {exc}") from exc
    raise SerializationError(
        f"a bus message is bytes, str, a pydantic model or a dict, not {type(data).__name__}"
    )


def check_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """A copy of ``headers``; ``InvalidSubjectError``-free but ``ValueError`` on bad entries."""
    if not headers:
        return {}
    checked: dict[str, str] = {}
    for key, value in headers.items():
        if not isinstance(key, str) or not key or any(c.isspace() or c == ":" for c in key):  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"header name {key!r} must be a non-empty part without ':' or spaces")
        if not isinstance(value, str) or "\r" in value or "\n" in value:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(f"header {key!r} must be a one-line string, got {value!r}")
        checked[key] = value
    return checked
