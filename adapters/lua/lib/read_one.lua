-- Reading ONE entry of a partition for a consumer (adapters/lua/lib/read_one.lua), prepended by
-- cmake/embed_scripts.cmake to every script of adapters/lua that calls read_one(): fenced_read
-- and fenced_next read through this one loop. `from` = '0' reads the consumer's own pending
-- entries from the start (id order, so the oldest unacknowledged entry comes first); '>' reads
-- the next never-delivered entry. A pending entry whose stream entry was deleted (an operator
-- trimmed or removed it) carries no fields: it is acknowledged and the next one read, a bounded
-- number of times. Returns {id, type, data, delivery_count}, false when there is nothing to
-- read, or an error reply (NOGROUP, AGAIN) to pass on. Journals the read (lib/journal.lua).
-- read_new reads up to `count` never-delivered entries at once (fenced_next's batch).

-- An entry's `type` and `data` fields ('' when absent).
local function type_and_data(fields)
  local event_type, data = '', ''
  for i = 1, #fields, 2 do
    if fields[i] == 'type' then
      event_type = fields[i + 1]
    elseif fields[i] == 'data' then
      data = fields[i + 1]
    end
  end
  return event_type, data
end

local function read_one(J, stream, group, consumer, from)
  for attempt = 1, 64 do
    local reply = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', 1,
                              'STREAMS', stream, from)
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
      redis.call('XACK', stream, group, id)
    else
      local event_type, data = type_and_data(fields)
      -- A never-delivered entry ('>') has just been delivered for the first time.
      local delivery_count = 1
      if from ~= '>' then
        local pending = redis.call('XPENDING', stream, group, id, id, 1, consumer)
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
end


-- Reads up to `count` never-delivered entries ('>') for a consumer: they are delivered to it
-- (pending) now, each with delivery count 1. Returns a flat list {id, type, data, 1, ...} (empty
-- when there is nothing new) or an error reply. Journals the read of the FIRST entry only: that
-- is the one entered next; each later one is journaled by the step that checks the lease before
-- entering it (fenced_next with a held id).
local function read_new(J, stream, group, consumer, count)
  local reply = redis.pcall('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count,
                            'STREAMS', stream, '>')
  if type(reply) == 'table' and reply.err then
    return reply
  end
  local out = {}
  if not reply or not reply[1] then
    return out
  end
  for _, entry in ipairs(reply[1][2]) do
    local event_type, data = type_and_data(entry[2] or {})
    out[#out + 1] = entry[1]
    out[#out + 1] = event_type
    out[#out + 1] = data
    out[#out + 1] = 1
  end
  if out[1] then
    journal(J, 'read', out[1], 'delivery=1')
  end
  return out
end
