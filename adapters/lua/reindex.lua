-- reindex: the holder of a unit puts its key back into the index of each of its categories whose
-- stream holds entries (docs/ARCHITECTURE.md "A key the index lost"). Discovery found the unit in
-- no index while this instance holds it. A reap takes a key out of the index only with its stream
-- (reap.lua at once; on a cluster reap_begin.lua moves it to the reaping set, which discovery
-- reads, until reap_stream.lua has deleted the stream), so a held unit whose stream holds entries
-- and whose key no index has lost its index entry some other way: a failover to a replica that
-- had not yet received the publish's SADD, an operator's SREM. Left out of the index, its entries
-- would wait for the next publish to the key. A unit with no entries anywhere was reaped (an
-- instance that acquired it after the reap has made its stream again, empty, with its group):
-- its holder releases it. Under the lease, so that no reap runs in between: only the holder
-- reaps, and its reap needs the key indexed (or in the reaping set) to begin.
-- KEYS[1] = lease key, KEYS[2..1+n] = the unit's streams, then (on one server) KEYS[2+n..1+2n] =
-- each stream's category index; under the cluster key layout the indexes are in other slots and
-- are not given: the broker adds the key to them itself, after this answer
-- ARGV[1] = token O:N, ARGV[2] = n, ARGV[3] = the unit's key
-- Returns one character per stream, in order, as one string: '1' the stream holds entries (and,
-- when its index was given, the key is in it now), '0' it does not (or is no stream); or FENCED.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('FENCED lease not held by ' .. ARGV[1])
end
local n = tonumber(ARGV[2])
local indexed = #KEYS == 1 + 2 * n
local out = {}
for i = 1, n do
  local stream = KEYS[1 + i]
  if redis.call('TYPE', stream)['ok'] == 'stream' and redis.call('XLEN', stream) > 0 then
    if indexed then
      redis.call('SADD', KEYS[1 + n + i], ARGV[3])
    end
    out[i] = '1'
  else
    out[i] = '0'
  end
end
return table.concat(out)
