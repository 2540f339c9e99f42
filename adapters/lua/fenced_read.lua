-- fenced_read: read ONE entry of a partition for consumer O:N of group G, under the lease.
-- ARGV[3] = '0' reads this consumer's own pending entries from the start (id order, so the
-- oldest unacknowledged entry comes first); '>' reads the next never-delivered entry.
-- A pending entry whose stream entry was deleted (an operator trimmed or removed it) carries no
-- fields: it is acknowledged and the next one read, a bounded number of times.
-- KEYS[1] = lease key, KEYS[2] = C:K (the partition stream)
-- ARGV[1] = token O:N (also the consumer name), ARGV[2] = group, ARGV[3] = '0' or '>'
-- Returns nil when there is nothing to read, else {id, type, data, delivery_count};
-- FENCED when the lease is not ours; NOGROUP when the group does not exist.
-- Journal (lib/journal.lua): read (delivery=N) or read_fenced.
local J = journal_of(2, 3)
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return fenced(J, 'read_fenced')
end
for attempt = 1, 64 do
  local reply = redis.pcall('XREADGROUP', 'GROUP', ARGV[2], ARGV[1], 'COUNT', 1,
                            'STREAMS', KEYS[2], ARGV[3])
  if type(reply) == 'table' and reply.err then
    return reply
  end
  if not reply or not reply[1] or #reply[1][2] == 0 then
    return false
  end
  local entry = reply[1][2][1]
  local id = entry[1]
  local fields = entry[2]
  if not fields then
    redis.call('XACK', KEYS[2], ARGV[2], id)
  else
    local event_type, data = '', ''
    for i = 1, #fields, 2 do
      if fields[i] == 'type' then
        event_type = fields[i + 1]
      elseif fields[i] == 'data' then
        data = fields[i + 1]
      end
    end
    -- A never-delivered entry ('>') has just been delivered for the first time.
    local delivery_count = 1
    if ARGV[3] ~= '>' then
      local pending = redis.call('XPENDING', KEYS[2], ARGV[2], id, id, 1, ARGV[1])
      delivery_count = 0
      if pending[1] then
        delivery_count = pending[1][4]
      end
    end
    journal(J, 'read', id, 'delivery=' .. delivery_count)
    return {id, event_type, data, delivery_count}
  end
end
return redis.error_reply('AGAIN too many deleted pending entries; read again')
