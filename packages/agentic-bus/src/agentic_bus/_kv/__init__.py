"""The JetStream KV side of agentic-bus: one bucket per store, values of any size, the stores.

``_connection`` (a store's connection to its bucket and its lifecycle), ``_framing`` (how a
value lies in the bucket: tags, manifests, headers; no I/O), ``_parts`` (values in parts),
``_scan`` (the live keys matching a pattern), ``_bucket`` (reads, writes, deletes and scans of
one bucket), ``_keys`` (user keys as KV tokens), and the stores on top: ``_state``
(``NatsKVStateStore``), ``_checkpoints`` (``NatsCheckpointStore``), ``_blobs`` (the runtime's
claim checks).
"""
