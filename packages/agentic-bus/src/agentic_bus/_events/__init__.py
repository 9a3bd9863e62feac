"""Workflow events on JetStream: ``_naming`` (subjects, kinds, headers and the codec; no I/O),
``_sink`` (``NatsEventSink``, the publisher) and ``_replay`` (``replay_events``, the reader)."""
