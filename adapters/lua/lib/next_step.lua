-- The step between two events of a partition (adapters/lua/lib/next_step.lua), prepended by
-- cmake/embed_scripts.cmake to every script of adapters/lua that calls next_step(): fenced_next
-- and fenced_commit_next, after their lease check. Acknowledges `ack_id` ('' for none), then
-- either reads for consumer `token` of `group` (`from` '0': one pending entry; '>': up to
-- `count_text` new entries) or, for `held` (an entry an earlier read delivered and held; '' for
-- none), says it may be entered. Returns fenced_next's reply (fenced_next.lua says its shape) or
-- an error reply to pass on. Journals (lib/journal.lua) the ack, then the read.
-- The steady state of a step (the ack of the entry just handled, then a held entry entered) is
-- answered by the ack's count alone, through steady_shape and enter_held below: by fenced_next,
-- and with a commit before them by lib/commit_next.lua's steady_step.

-- `count_text` (ARGV[5]) as a count of entries, or nil when it is not a count >= 1.
local function read_count(count_text)
  local count = tonumber(count_text or '1')
  if not count or count < 1 or count ~= math.floor(count) then
    return nil
  end
  return count
end

-- The ack of `ack_id`: XACK's count (0: it was acknowledged before), journaled, or the error
-- reply (NOGROUP) to pass on.
local function ack_entry(J, stream, group, ack_id)
  local acked = redis.pcall('XACK', stream, group, ack_id)
  if type(acked) ~= 'table' then
    journal(J, 'ack', ack_id, acked == 0 and 'again' or '')
  end
  return acked
end

-- Whether a step asked the steady state's shape: an entry to acknowledge, a held entry to enter
-- and a valid count (ARGV[5]: next_step refuses a bad one even when a held entry leaves it
-- unused, so a step with one is left to next_step).
local function steady_shape(ack_id, count_text, held)
  return ack_id ~= '' and held ~= nil and held ~= '' and read_count(count_text) ~= nil
end

-- The steady state's ack and entry: acknowledges `ack_id` and enters `held_id`, journaled as
-- next_step journals them. Returns XACK's count (0 or 1), the step's whole reply in short, or
-- the ack's error reply (NOGROUP), having entered nothing.
local function enter_held(J, stream, group, ack_id, held_id)
  local acked = ack_entry(J, stream, group, ack_id)
  if type(acked) ~= 'table' then
    journal(J, 'read', held_id, 'delivery=1')  -- delivered by a read of new entries, so once
  end
  return acked
end

local function next_step(J, stream, group, token, from, ack_id, count_text, held)
  local count = read_count(count_text)
  if not count then
    return redis.error_reply('ERR fenced_next: ARGV[5] is not a count >= 1: ' .. tostring(count_text))
  end
  held = held or ''
  local acked = -1
  if ack_id ~= '' then
    acked = ack_entry(J, stream, group, ack_id)
    if type(acked) == 'table' then
      return acked
    end
  end
  if held ~= '' then
    -- Delivered by a read of new entries ('>'), so delivered once.
    journal(J, 'read', held, 'delivery=1')
    return {acked, '', held}
  end
  if from == '>' and count > 1 then
    local entries = read_new(J, stream, group, token, count)
    if entries.err then
      return entries
    end
    if entries[1] then
      table.insert(entries, 1, '')
      table.insert(entries, 1, acked)
      return entries
    end
  else
    local entry = read_one(J, stream, group, token, from)
    if type(entry) == 'table' and entry.err then
      return entry
    end
    if entry then
      return {acked, '', entry[1], entry[2], entry[3], entry[4]}
    end
    if from ~= '>' then
      return {acked, ''}
    end
  end
  local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)
  return {acked, last[1] and last[1][1] or '0-0'}
end

