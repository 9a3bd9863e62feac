"""agentic-bus.

NATS JetStream messaging, KV state stores, event streams and the distributed runtime for agentic.

``NatsBus`` (core's ``MessageBus``), ``Subjects``, ``NatsKVStateStore`` and ``NatsCheckpointStore``
(JetStream KV), ``NatsEventSink`` and ``replay_events`` (the ``AGENTIC_EVENTS`` stream),
``NatsRuntime`` and ``Worker`` (distributed supersteps that survive worker, coordinator and
server crashes), ``ProxyAgent`` and ``serve_agent`` (agents across processes), and
``answer_request`` (human-in-the-loop from any process); with the ``[a2a]`` extra, ``A2AAgent``
and ``serve_a2a`` (A2A over HTTP, both ways).
"""

from agentic_core import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-bus"
)
