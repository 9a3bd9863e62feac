"""The program's prints as the model will read them: capped, head and tail kept."""

from __future__ import annotations

from collections import deque


class OutputBuffer:
    """Keeps the first and the last characters of a stream, at most ``cap`` in all."""

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._head_cap = cap * 2 // 3
        self._head: list[str] = []
        self._head_size = 0
        self._tail: deque[str] = deque()
        self._tail_size = 0
        self.total = 0

    def append(self, text: str) -> None:
        """Add ``text`` (memory stays about ``cap`` whatever the program prints)."""
        self.total += len(text)
        room = self._head_cap - self._head_size
        if room > 0:
            self._head.append(text[:room])
            self._head_size += min(room, len(text))
            text = text[room:]
        if not text:
            return
        tail_cap = self._cap - self._head_cap
        self._tail.append(text[-tail_cap:] if tail_cap else "")
        self._tail_size += len(self._tail[-1])
        while self._tail and self._tail_size - len(self._tail[0]) >= tail_cap:
            self._tail_size -= len(self._tail.popleft())

    @property
    def truncated(self) -> bool:
        """More was printed than is kept."""
        return self.total > self._cap

    def text(self) -> str:
        """What was kept, with a notice where the middle was cut."""
        head = "".join(self._head)
        tail = "".join(self._tail)
        if not self.truncated:
            return head + tail
        tail = tail[-(self._cap - self._head_cap) :] if self._cap > self._head_cap else ""
        cut = self.total - len(head) - len(tail)
        return (
            f"{head}\n[... {cut:,} of {self.total:,} characters of output cut: print less, "
            f"aggregate or filter in code ...]\n{tail}"
        )
