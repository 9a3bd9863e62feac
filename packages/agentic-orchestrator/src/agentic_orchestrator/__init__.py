"""agentic-orchestrator.

Orchestration patterns (sequential, concurrent, group chat, handoff, Magentic), each a builder
returning a core ``Workflow``; ``TaskAgent``, the DAG ``Orchestrator`` and ``DelegatingAgent``;
the grounded code-generation executors and ``code_loop``; ``RunViewer`` (a live web view of
runs, extra ``[viewer]``); and the ``agentic`` command line
(``agentic_orchestrator._cli``, not part of the Python API).
"""

from agentic_core import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-orchestrator"
)
