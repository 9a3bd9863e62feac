"""The programs that run inside the Code Mode sandbox, kept here as real, checked source files.

``runtime.py`` becomes ``<module>/_runtime.py`` of the generated stub package (the channel to the
host); ``runner.py`` becomes the runner the sandbox starts (``runner_source`` writes the run's
settings into it). agentic-mcp never imports them: ``_codemode_stubs`` reads their text with
``importlib.resources``. They run on whatever Python 3.9+ the sandbox has, with the standard
library only: no imports from agentic, no syntax or library calls newer than 3.9 (annotations
are never evaluated there, thanks to ``from __future__ import annotations``).
"""
