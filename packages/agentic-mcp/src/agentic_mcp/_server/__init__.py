"""The MCP server side: agents and workflows served as MCP tools (``serve_mcp``).

``_targets`` turns each agent or workflow into a tool (name, description, input schema,
argument parsing), ``_agents`` keeps an agent's thread per MCP session, ``_workflows`` runs a
workflow with progress per superstep and resumes it with the answers ``_elicit`` asks for
(mid-call in the handshake eras, by ``InputRequiredResult`` in 2026-07-28), ``_results`` builds
what a call returns, ``_server`` puts them on the SDK's low-level ``Server``, and ``_serve``
serves it over stdio (``_stdio``: bad lines answered) or guarded streamable HTTP.
"""
