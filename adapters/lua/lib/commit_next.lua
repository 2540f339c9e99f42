-- The commit carried by the step (adapters/lua/lib/commit_next.lua), prepended by
-- cmake/embed_scripts.cmake to every script of adapters/lua that calls commit_next_step():
-- fenced_commit_next (one partition's step) and fenced_steps (the steps of many), after their
-- lease check. Commits the effect of the entry just handled (lib/commit_effect.lua), then, unless
-- the sink refused it as out of order, acknowledges that entry and reads or checks the held one
-- (lib/next_step.lua). Returns fenced_commit_next's reply (fenced_commit_next.lua says its shape).
local function commit_next_step(J, stream, sink, effects, token, group, from, ack_id, count,
                                held, seq, effect)
  local committed = commit_effect(J, sink, effects, token, seq, effect)
  if committed[1] == 'out_of_order' then
    return committed
  end
  local stepped = next_step(J, stream, group, token, from, ack_id, count, held)
  if stepped.err then
    committed[4] = stepped
    return committed
  end
  for _, value in ipairs(stepped) do
    committed[#committed + 1] = value
  end
  return committed
end

-- The steady state of a step: the entry just handled acknowledged, a held entry entered, and
-- with a commit (`seq` not ''), that commit accepted. Its reply says nothing the caller did not
-- send but the ack's count, so it is that integer (0 or 1) rather than fenced_commit_next's six
-- values or fenced_next's three: making that table and converting it cost the server a sixth of
-- a batched step (bench/real_redis.md "The steady step answered in short"). The same writes and
-- journal records as commit_next_step's (or next_step's), in the same order, through
-- lib/next_step.lua's steady_shape and enter_held (fenced_next's own short answer). Returns
-- nil, having written nothing, for a step in any other state (no ack or held entry, a bad count,
-- a commit that is not the next in order); after a commit that stood, an ack refused (NOGROUP)
-- gets commit_next_step's reply. Called after the lease check by fenced_commit_next and, per
-- step, fenced_steps.
local function steady_step(J, stream, sink, effects, token, group, ack_id, count_text, held, seq,
                           effect)
  if not steady_shape(ack_id, count_text, held) then
    return nil
  end
  if seq ~= '' then
    if tonumber(seq) ~= last_seq(sink) + 1 then
      return nil
    end
    write_commit(J, sink, effects, token, seq, effect)
  end
  local acked = enter_held(J, stream, group, ack_id, held)
  if type(acked) == 'table' and seq ~= '' then
    return {'accepted', tonumber(seq), token, acked}
  end
  return acked
end
