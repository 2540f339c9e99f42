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

