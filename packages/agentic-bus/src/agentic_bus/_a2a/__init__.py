"""A2A (Agent2Agent) on the official ``a2a-sdk`` (the ``[a2a]`` extra): ``A2AAgent`` calls a
remote A2A agent as a core ``Agent``; ``serve_a2a`` serves a core ``Agent`` or ``Workflow`` as one.

Nothing here imports ``a2a`` at package import: only the modules that need it do.
"""
