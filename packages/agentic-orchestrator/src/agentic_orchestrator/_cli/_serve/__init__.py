"""``agentic serve``'s parts: one ASGI app serving a run file's agents and pattern over several
protocols.

``_mounts``: the app dispatching by path to each protocol's own (guarded) app and running their
lifespans; ``_lifespan``: one sub-app's ASGI lifespan driven as an async context; ``_tracing``:
an OpenTelemetry span and a log line per request; ``_protocols``: the protocols' apps, the
OpenAI endpoint of this package and the others through the ``agentic.servers`` entry points.
"""
