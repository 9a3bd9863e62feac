"""Secret: an API key that never shows itself in reprs, logs, exceptions or pickles."""

from __future__ import annotations

from typing import NoReturn

_MASK = "**********"


class Secret:
    """A string that prints as ``**********``; ``reveal()`` is the one way to read it.

    >>> key = Secret("sk-123")
    >>> key, str(key), f"{key}"
    (Secret('**********'), '**********', '**********')
    >>> key.reveal()
    'sk-123'
    """

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        """The secret itself: only for the header that carries it."""
        return self._value

    def redact(self, text: str) -> str:
        """``text`` with every occurrence of the secret masked."""
        return text.replace(self._value, _MASK) if self._value else text

    def __repr__(self) -> str:
        return f"Secret({_MASK!r})"

    def __str__(self) -> str:
        return _MASK

    def __format__(self, format_spec: str) -> str:
        return _MASK

    def __bool__(self) -> bool:
        return bool(self._value)

    def __reduce__(self) -> NoReturn:
        raise TypeError("a Secret cannot be pickled: pass the key to the process that needs it")
