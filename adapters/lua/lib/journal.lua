-- The decision journal (docs/ARCHITECTURE.md "The decision journal"), prepended by
-- cmake/embed_scripts.cmake to every script of adapters/lua that calls journal_of(),
-- journal_for() or journal_at(), or journal() through another library. A caller
-- that wants a script's decision journaled appends ONE key (the lease unit's journal stream)
-- after the script's own KEYS and EIGHT values after its own ARGV: MAXLEN, node, category, key,
-- group, generation, seq, detail (script_contracts.h JournalTail). Without them nothing is
-- written and the call is the same as before. The decision and its record are one atomic step
-- in server order; the record's fields are history fields (seqby/core/history.h
-- kHistoryFields), and its time is the entry id's (server time).

-- The journal fields of the tail whose stream is `stream` and whose eight values follow ARGV[a]
-- (journal_of's, or one step's of a script that steps for many: fenced_steps).
local function journal_at(stream, a)
  return {stream = stream, maxlen = ARGV[a + 1], node = ARGV[a + 2], category = ARGV[a + 3],
          partition = ARGV[a + 4], group = ARGV[a + 5], generation = ARGV[a + 6],
          seq = ARGV[a + 7], detail = ARGV[a + 8]}
end

-- The journal of a script whose own KEYS and ARGV are `own_keys` and `own_args` long: nil when
-- the caller appended no tail.
local function journal_of(own_keys, own_args)
  if #KEYS ~= own_keys + 1 then
    return nil
  end
  return journal_at(KEYS[own_keys + 1], own_args)
end

-- The journal of one lease unit of a script that decides for many (renew_many, acquire_many):
-- the same fields as journal_of's, given one by one.
local function journal_for(stream, maxlen, node, category, partition, group, generation)
  return {stream = stream, maxlen = maxlen, node = node, category = category,
          partition = partition, group = group, generation = generation, seq = '-1', detail = ''}
end

-- Appends decision `op` about entry `event` ('' for none). `detail`, `seq` and `generation`
-- default (nil) to the caller's.
local function journal(j, op, event, detail, seq, generation)
  if not j then
    return
  end
  local fields = {'op', op, 'node', j.node}
  local function put(name, value, default)
    if value ~= default then
      fields[#fields + 1] = name
      fields[#fields + 1] = value
    end
  end
  put('category', j.category, '')
  put('key', j.partition, '')
  put('group', j.group, '')
  put('generation', tostring(generation or j.generation), '0')
  put('event', event, '')
  put('seq', tostring(seq or j.seq), '-1')
  put('detail', detail or j.detail, '')
  redis.call('XADD', j.stream, 'MAXLEN', '~', j.maxlen, '*', unpack(fields))
end

-- The refusal of a fenced step by `token` (default ARGV[1]): journaled as `op`, answered FENCED.
local function fenced(j, op, token)
  local refused = 'FENCED lease not held by ' .. (token or ARGV[1])
  journal(j, op, '', refused)
  return redis.error_reply(refused)
end

