-- The fenced effect sink's commit (adapters/lua/lib/commit_effect.lua), prepended by
-- cmake/embed_scripts.cmake to every script of adapters/lua that calls commit_effect():
-- fenced_commit (the handler's own step) and fenced_commit_next (the commit carried by the step
-- between two events). The caller has checked the lease. Optimistic concurrency on a per-key
-- sequence number (1, 2, 3, ...): only seq == last + 1 is accepted; a seq at or below the last is
-- a duplicate (for seq == last the reply names the token that committed it, so a caller whose
-- earlier reply was lost can recognise its own commit). `sink` is the hash of last_seq and
-- last_token, `effects` the hash of seq -> effect (opaque text, stored verbatim).
-- Returns {'accepted'|'duplicate'|'out_of_order', last seq after the call, committer token}.
-- Journals (lib/journal.lua) commit or commit_rejected (duplicate or out_of_order, the last seq).
-- lib/commit_next.lua's steady_step decides through the two functions below it too.

-- The sink's last accepted seq (0 before the first commit).
local function last_seq(sink)
  return tonumber(redis.call('HGET', sink, 'last_seq') or '0')
end

-- The writes of an accepted commit of `seq_text` by `token`, journaled as commit.
local function write_commit(J, sink, effects, token, seq_text, effect)
  redis.call('HSET', sink, 'last_seq', seq_text, 'last_token', token)
  redis.call('HSET', effects, seq_text, effect)
  journal(J, 'commit', '', nil, seq_text)
end

local function commit_effect(J, sink, effects, token, seq_text, effect)
  local last = last_seq(sink)
  local seq = tonumber(seq_text)
  if seq <= last then
    local by = ''
    if seq == last then
      by = redis.call('HGET', sink, 'last_token') or ''
    end
    journal(J, 'commit_rejected', '', 'duplicate last=' .. last .. ' by ' .. by, seq_text)
    return {'duplicate', last, by}
  end
  if seq ~= last + 1 then
    journal(J, 'commit_rejected', '', 'out_of_order last=' .. last, seq_text)
    return {'out_of_order', last, ''}
  end
  write_commit(J, sink, effects, token, seq_text, effect)
  return {'accepted', seq, token}
end

