"""``KeyPatterns``: the state keys agentic's components agree on, in one place."""

from __future__ import annotations

__all__ = ["KeyPatterns"]


def _part(value: str) -> str:
    # ``%`` first, so an escaped id can never collide with one that was written escaped.
    return value.replace("%", "%25").replace(":", "%3A")


class KeyPatterns:
    """Standard state-store keys: ``agents:{id}:state``, ``tasks:{id}:state``, ``sessions:{id}``...

    Ids are escaped (``:`` as ``%3A``, ``%`` as ``%25``), so an id can never reach into another
    key: ``agent_state("a:b")`` is ``agents:a%3Ab:state``, never ``agents:a:b:state``. Use them
    with any ``StateStore`` (the store adds its own prefix).

    Example:
        ```python
        await store.set(KeyPatterns.agent_state("planner"), {"status": "idle"})
        ```
    """

    @staticmethod
    def agent_state(agent_id: str) -> str:
        """An agent's state: ``agents:{agent_id}:state``."""
        return f"agents:{_part(agent_id)}:state"

    @staticmethod
    def agent_metrics(agent_id: str) -> str:
        """An agent's metrics: ``agents:{agent_id}:metrics``."""
        return f"agents:{_part(agent_id)}:metrics"

    @staticmethod
    def task_state(task_id: str) -> str:
        """A task's state: ``tasks:{task_id}:state``."""
        return f"tasks:{_part(task_id)}:state"

    @staticmethod
    def session(session_id: str) -> str:
        """A session: ``sessions:{session_id}``."""
        return f"sessions:{_part(session_id)}"

    @staticmethod
    def cache(key: str) -> str:
        """A cached value: ``cache:{key}``."""
        return f"cache:{_part(key)}"
