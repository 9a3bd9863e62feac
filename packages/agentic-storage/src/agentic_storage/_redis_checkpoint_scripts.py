"""The Lua scripts of ``RedisCheckpointStore``: each change to a checkpoint and its indexes is one
script, so Redis applies it whole or not at all (a crash cannot leave a half-indexed checkpoint).

Key layout under the store's prefix ``p`` (ids and names are used verbatim after their tag):

- ``p:cp:{id}``: a hash: ``data`` (the tagged, maybe compressed checkpoint JSON), ``meta``
  (its ``CheckpointMetadata`` JSON), ``run_id``, ``workflow_id``.
- ``p:run:{run_id}``: a sorted set of the run's checkpoint ids, scored by superstep.
- ``p:workflow:{workflow_id}``: a sorted set of the workflow's checkpoint ids, scored by the
  checkpoint's ``created_at``.
- ``p:index``: a sorted set of every checkpoint id, scored by ``created_at``.

Every entry is keyed by checkpoint id and every value comes from the checkpoint itself, so
running ``SAVE`` again for the same checkpoint (a retry after a timeout, or a request Redis
applies late) leaves exactly what one run leaves.

The scripts touch keys derived from stored fields (a re-saved id's old run), which a Redis
Cluster would refuse: the store targets a standalone server or a primary with replicas.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

__all__ = ["DELETE_IDS", "DELETE_RUN", "SAVE", "LuaScript"]


@dataclass(frozen=True, slots=True)
class LuaScript:
    """A script's text and SHA1: sent by ``EVALSHA`` (40 bytes), by ``EVAL`` only when the
    server does not have it cached (first use, or after a restart)."""

    text: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.text.encode()).hexdigest())  # noqa: S324


# KEYS: cp key, run zset, workflow zset, index zset.
# ARGV: id, data, meta, run_id, workflow_id, superstep, created_at score, ttl ms (0: none),
#       cp key prefix, run key prefix, workflow key prefix.
# Redis does not undo a script's writes when a later command fails: the key types are checked
# before anything is written, so a foreign key under the prefix leaves no half-indexed save.
SAVE = LuaScript("""
for i, expected in ipairs({'hash', 'zset', 'zset', 'zset'}) do
  local found = redis.call('TYPE', KEYS[i])['ok']
  if found ~= 'none' and found ~= expected then
    return redis.error_reply('WRONGTYPE key ' .. KEYS[i] .. ' holds a ' .. found)
  end
end
local old = redis.call('HMGET', KEYS[1], 'run_id', 'workflow_id')
if old[1] and old[1] ~= ARGV[4] then redis.call('ZREM', ARGV[10] .. old[1], ARGV[1]) end
if old[2] and old[2] ~= ARGV[5] then redis.call('ZREM', ARGV[11] .. old[2], ARGV[1]) end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'data', ARGV[2], 'meta', ARGV[3], 'run_id', ARGV[4],
           'workflow_id', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[6], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[7], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[7], ARGV[1])
local ttl = tonumber(ARGV[8])
if ttl > 0 then
  -- A save refreshes the whole run, so a long run never loses its early checkpoints.
  for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    redis.call('PEXPIRE', ARGV[9] .. id, ttl)
  end
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PEXPIRE', KEYS[3], ttl)
  redis.call('PEXPIRE', KEYS[4], ttl)
end
return 1
""")

_DELETE_ONE = """
local function delete_one(id)
  local key = ARGV[1] .. id
  local owner = redis.call('HMGET', key, 'run_id', 'workflow_id')
  local gone = redis.call('DEL', key)
  if owner[1] then redis.call('ZREM', ARGV[2] .. owner[1], id) end
  if owner[2] then redis.call('ZREM', ARGV[3] .. owner[2], id) end
  redis.call('ZREM', ARGV[4], id)
  return gone
end
"""

# ARGV: cp key prefix, run key prefix, workflow key prefix, index key, then the ids.
DELETE_IDS = LuaScript(
    _DELETE_ONE
    + """
local count = 0
for i = 5, #ARGV do count = count + delete_one(ARGV[i]) end
return count
"""
)

# KEYS: run zset. ARGV: cp key prefix, run key prefix, workflow key prefix, index key.
DELETE_RUN = LuaScript(
    _DELETE_ONE
    + """
local count = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do count = count + delete_one(id) end
redis.call('DEL', KEYS[1])
return count
"""
)
