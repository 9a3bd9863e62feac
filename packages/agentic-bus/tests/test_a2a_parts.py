"""Agentic messages and contents to A2A parts and messages and back (``_a2a/_parts.py``)."""

from __future__ import annotations

import json

import pytest
from a2a.types import Part
from a2a.types import Role as A2ARole

from agentic_bus._a2a._parts import (
    a2a_message,
    chat_message,
    content_parts,
    contents_of,
    data_of,
    data_part,
    parts_text,
    text_part,
)
from agentic_core import (
    ChatMessage,
    FunctionCallContent,
    FunctionResultContent,
    Role,
    TextContent,
)


def test_text_round_trips() -> None:
    message = ChatMessage.user("hello there")
    a2a = a2a_message(message, context_id="ctx", task_id="t1")
    assert a2a.role == A2ARole.ROLE_USER
    assert a2a.context_id == "ctx"
    assert a2a.task_id == "t1"
    assert a2a.message_id == message.message_id
    back = chat_message(a2a)
    assert back.role is Role.USER
    assert back.text == "hello there"
    assert back.message_id == message.message_id


def test_assistant_is_the_agent_role_and_other_roles_are_user() -> None:
    assert a2a_message(ChatMessage.assistant("hi")).role == A2ARole.ROLE_AGENT
    assert a2a_message(ChatMessage.system("rules")).role == A2ARole.ROLE_USER
    assert chat_message(a2a_message(ChatMessage.assistant("hi"))).role is Role.ASSISTANT


def test_data_parts_are_json_with_whole_numbers_kept() -> None:
    part = data_part({"n": 3, "x": 1.5, "items": [1, 2], "ok": True, "none": None})
    assert data_of([part]) == [{"n": 3, "x": 1.5, "items": [1, 2], "ok": True, "none": None}]
    (content,) = contents_of([part])
    assert isinstance(content, TextContent)
    assert json.loads(content.text) == {"n": 3, "x": 1.5, "items": [1, 2], "ok": True, "none": None}


def test_tool_calls_and_results_round_trip() -> None:
    call = FunctionCallContent(call_id="c1", name="lookup", arguments={"q": "x", "k": 2})
    result = FunctionResultContent(call_id="c1", result={"rows": [1]}, is_error=False)
    parts = content_parts([TextContent(text="see"), call, result])
    assert [p.WhichOneof("content") for p in parts] == ["text", "data", "data"]
    assert contents_of(parts) == [TextContent(text="see"), call, result]


def test_empty_text_contents_are_left_out() -> None:
    assert content_parts([TextContent(text="")]) == []


def test_unknown_parts_are_kept_as_text_with_a_note() -> None:
    raw = Part(raw=b"\x00\x01\x02", media_type="application/pdf", filename="r.pdf")
    url = Part(url="https://example.com/a.png", media_type="image/png")
    notes = [c for c in contents_of([raw, url]) if isinstance(c, TextContent)]
    assert len(notes) == 2
    assert "r.pdf" in notes[0].text
    assert "3 bytes" in notes[0].text
    assert "https://example.com/a.png" in notes[1].text


def test_parts_text_joins_what_a_reader_of_text_sees() -> None:
    text = parts_text([text_part("a"), data_part({"k": 1})])
    assert text == 'a\n{"k": 1}'


def test_data_part_refuses_what_is_not_json() -> None:
    with pytest.raises(TypeError, match="JSON data, got object"):
        data_part(object())
