"""agentic-orchestrator.

Orchestration patterns, DAG orchestrator, task agents and the agentic command line.

Status: in progress. The orchestration patterns (sequential, concurrent, group chat, handoff,
Magentic), each a builder returning a core ``Workflow``, ``TaskAgent``, the DAG
``Orchestrator`` and ``DelegatingAgent`` are here; the code-generation executors and the
command line belong to a later issue.
"""

from agentic_core import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-orchestrator"
)
