"""The run viewer (``agentic viewer``, ``RunViewer``): a small web app showing workflow runs live.

Private: the public names (``RunViewer``, ``ViewerError``) are exported from
``agentic_orchestrator``. Importing this package needs no web server; ``RunViewer.app`` and
``serve`` need the extra ``agentic-orchestrator[viewer]`` (starlette, uvicorn, sse-starlette).
"""

from agentic_orchestrator._viewer._errors import ViewerError
from agentic_orchestrator._viewer._run_viewer import RunViewer

__all__ = ["RunViewer", "ViewerError"]
