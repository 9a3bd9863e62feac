"""The agent layer: chat agents with tools, threads, memory, reducers, agents in workflows.

Its public names are exported from ``agentic_core``; the modules here are private. This
package imports nothing itself, so using an agent does not load the graph engine.
"""
