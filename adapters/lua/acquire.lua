-- acquire: take a partition lease at a fresh generation (ADR decision 5). Free lease: the
-- generation counter is incremented and the lease set to O:N with PX ttl. A lease still held by
-- this same owner (an earlier acquire whose reply was lost) is replaced at a fresh generation too,
-- so a generation is never handed out twice. A lease held by another owner: nil.
-- KEYS[1] = lease key, KEYS[2] = C:K:__fence__ (generation counter, never expires)
-- ARGV[1] = owner id (no colon), ARGV[2] = ttl in milliseconds
-- Returns the new generation (integer) or nil.
-- Journal (lib/journal.lua): acquire at the new generation (a refusal changes nothing: none).
local J = journal_of(2, 2)
local current = redis.call('GET', KEYS[1])
if current then
  local prefix = ARGV[1] .. ':'
  if string.sub(current, 1, #prefix) ~= prefix then
    return false
  end
end
local generation = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. generation, 'PX', ARGV[2])
journal(J, 'acquire', '', nil, nil, generation)
return generation
