"""Chat messages and their contents: the data every agent and chat client exchanges."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field

from agentic_core.protocols._trusted import new_id, trusted


class Role(StrEnum):
    """Who wrote a message."""

    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class TextContent(BaseModel):
    """Plain text."""

    type: Literal["text"] = "text"
    text: str


class FunctionCallContent(BaseModel):
    """The model asks to call the tool ``name`` with ``arguments``; ``call_id`` pairs the result."""

    type: Literal["function_call"] = "function_call"
    call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict[str, Any])


class FunctionResultContent(BaseModel):
    """The result of the tool call ``call_id`` (``is_error``: it failed and ``result`` says why)."""

    type: Literal["function_result"] = "function_result"
    call_id: str
    result: Any = None
    is_error: bool = False


Content = Annotated[
    TextContent | FunctionCallContent | FunctionResultContent, Field(discriminator="type")
]


class ChatMessage(BaseModel):
    """One message of a conversation: a role and a list of contents.

    Build them with ``ChatMessage.user("hi")``, ``.system(...)``, ``.assistant(...)`` and
    ``ChatMessage.tool(call_id, result)``.
    """

    model_config = ConfigDict(frozen=False)

    role: Role
    contents: list[Content] = Field(default_factory=list[Content])
    author_name: str | None = None
    message_id: str = Field(default_factory=new_id)

    @property
    def text(self) -> str:
        """The text contents joined (no separator), ``""`` when there is none."""
        return "".join(c.text for c in self.contents if isinstance(c, TextContent))

    @property
    def function_calls(self) -> list[FunctionCallContent]:
        """The tool calls this message asks for."""
        return [c for c in self.contents if isinstance(c, FunctionCallContent)]

    @property
    def function_results(self) -> list[FunctionResultContent]:
        """The tool results this message carries."""
        return [c for c in self.contents if isinstance(c, FunctionResultContent)]

    @classmethod
    def system(cls, text: str, **kwargs: Any) -> Self:
        """A system message with ``text``."""
        if not kwargs and type(text) is str and cls is ChatMessage:
            return cls._text_message(Role.SYSTEM, text)
        return cls(role=Role.SYSTEM, contents=[TextContent(text=text)], **kwargs)

    @classmethod
    def user(cls, text: str, **kwargs: Any) -> Self:
        """A user message with ``text``."""
        if not kwargs and type(text) is str and cls is ChatMessage:
            return cls._text_message(Role.USER, text)
        return cls(role=Role.USER, contents=[TextContent(text=text)], **kwargs)

    @classmethod
    def assistant(cls, text: str = "", **kwargs: Any) -> Self:
        """An assistant message with ``text`` (plus any ``contents=`` given)."""
        if not kwargs and type(text) is str and text and cls is ChatMessage:
            return cls._text_message(Role.ASSISTANT, text)
        contents: list[Content] = [TextContent(text=text)] if text else []
        contents.extend(kwargs.pop("contents", []))
        return cls(role=Role.ASSISTANT, contents=contents, **kwargs)

    @classmethod
    def tool(cls, call_id: str, result: Any, *, is_error: bool = False, **kwargs: Any) -> Self:
        """A tool message carrying the result of the call ``call_id``."""
        if not kwargs and type(call_id) is str and type(is_error) is bool and cls is ChatMessage:
            # Every field's value is of its exact type (``result`` is Any): nothing to validate.
            content = trusted(
                FunctionResultContent,
                {
                    "type": "function_result",
                    "call_id": call_id,
                    "result": result,
                    "is_error": is_error,
                },
                {"call_id", "result", "is_error"},
            )
            return cls._message(Role.TOOL, content)
        content = FunctionResultContent(call_id=call_id, result=result, is_error=is_error)
        return cls(role=Role.TOOL, contents=[content], **kwargs)

    # The factories' common case (a str, no other keyword) is built without validation: the
    # values are of the fields' exact types already. Equal to the validated construction,
    # ``model_fields_set`` included (tested); subclasses and anything else are validated.

    @classmethod
    def _text_message(cls, role: Role, text: str) -> Self:
        return cls._message(role, trusted(TextContent, {"type": "text", "text": text}, {"text"}))

    @classmethod
    def _message(cls, role: Role, content: Content) -> Self:
        fields = {"role": role, "contents": [content], "author_name": None, "message_id": new_id()}
        return trusted(cls, fields, {"role", "contents"})


class UsageDetails(BaseModel):
    """Token counts of one or more model calls; ``a + b`` adds them."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def __radd__(self, other: object) -> UsageDetails:
        # So that sum(usages) works: sum starts from 0.
        if isinstance(other, UsageDetails):
            return other + self
        if other == 0:
            return self
        return NotImplemented

    def __add__(self, other: UsageDetails) -> UsageDetails:
        inputs = self.input_tokens + other.input_tokens
        outputs = self.output_tokens + other.output_tokens
        total = self.total_tokens + other.total_tokens
        if type(inputs) is int and type(outputs) is int and type(total) is int:
            # Added per model call: sums of ints need no validation (equal to the validated sum).
            fields = {"input_tokens": inputs, "output_tokens": outputs, "total_tokens": total}
            return trusted(UsageDetails, fields, {"input_tokens", "output_tokens", "total_tokens"})
        return UsageDetails(input_tokens=inputs, output_tokens=outputs, total_tokens=total)
