"""The graph engine: executors, edges, the superstep runner, runtimes, events.

Its public names are exported from ``agentic_core``; the modules here are private.
"""
