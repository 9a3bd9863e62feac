"""``KeyPatterns``: a naming convention for state keys, for applications that share a store."""

from __future__ import annotations

__all__ = ["KeyPatterns"]


def _part(value: str) -> str:
    # ``%`` first, so an escaped id can never collide with one that was written escaped.
    return value.replace("%", "%25").replace(":", "%3A")


class KeyPatterns:
    """A documented convention for state-store keys: ``agents:{id}:state``, ``tasks:{id}:state``,
    ``sessions:{id}``...

    agentic's own components do not write these keys (each store keeps its data under its own
    prefix); the convention is for your code, so that the services of one application that share
    a ``StateStore`` find each other's state where they expect it. Ids are escaped (``:`` as
    ``%3A``, ``%`` as ``%25``), so an id can never reach into another key: ``agent_state("a:b")``
    is ``agents:a%3Ab:state``, never ``agents:a:b:state``. Use them with any ``StateStore`` (the
    store adds its own prefix).

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
