-- Writes asked for before the first (adapters/lua/lib/permitted.lua), prepended by
-- cmake/embed_scripts.cmake to every script of adapters/lua that calls refused_write(): the
-- publish scripts whose writes of two commands land all or none. Redis checks an
-- ACL's key patterns against a script's KEYS before it runs (a key outside them refuses the
-- whole EVAL), but a command the ACL lacks only when the script calls it, and it does not undo
-- the script's writes before that call: a publish that may XADD but not SADD would leave its
-- entry appended and never indexed (and a publisher retrying once the ACL is mended would append
-- it twice). redis.acl_check_cmd (Redis 7.0) answers for the script's user without running
-- anything or logging a denial; a server without it is not asked, and refuses midway as before.
-- Returns nil when the user may run each of `writes` (each {command, key, args...}), else the
-- error reply naming the first it may not.
local function refused_write(writes)
  if not redis.acl_check_cmd then
    return nil
  end
  for _, write in ipairs(writes) do
    if not redis.acl_check_cmd(unpack(write)) then
      return redis.error_reply("NOPERM this user has no permissions to run the '" ..
                               string.lower(write[1]) .. "' command on " .. write[2] ..
                               ': nothing was written')
    end
  end
  return nil
end

