#!/usr/bin/env bash
# bench/step_batch_whatif.sh: what one script carrying the steps of K partitions at once would
# cost redis-server per step, against K = 1 (one script per step, as the engine runs today). Each
# step is the steady state of fenced_commit_next reduced to its calls: the lease check (GET), the
# sink's commit (HGET, HSET of last_seq and last_token, HSET of the effect) and the ack (XACK), each
# partition's step inside a pcall of its own, as a batched script would have to (an error in one
# partition's step must not end the others'). Not the engine: a what-if of its next step
# (bench/real_redis.md "A script for the steps of many partitions"). It prints the server's
# EVALSHA execution time per step (INFO commandstats: no I/O, no parsing), for K = 1, 4, 16, 32,
# STEPS_TOTAL steps each (default 40,000), pipelined 16 deep by redis-benchmark over one client.
# Run it under scripts/with-redis (a private server):
#   scripts/with-redis bench/step_batch_whatif.sh
set -euo pipefail

url=${SEQBY_TEST_REDIS_URL:?step_batch_whatif: run it under scripts/with-redis}
port=${url##*:}
steps_total=${STEPS_TOTAL:-40000}
[[ "$steps_total" =~ ^[1-9][0-9]*$ ]] || { echo "step_batch_whatif: STEPS_TOTAL must be a whole number >= 1" >&2; exit 2; }
command -v redis-benchmark >/dev/null || { echo "step_batch_whatif: needs redis-benchmark (Debian's redis-tools)" >&2; exit 2; }
cli() { redis-cli -p "$port" "$@"; }

# 64 partitions of 200 entries each, all delivered (pending) to consumer o:1, whose lease it holds.
setup='
for p = 0, 63 do
  local s = "whatif:p" .. p
  redis.call("DEL", s, s .. ":__lease__", s .. ":sink", s .. ":effects")
  for i = 1, 200 do
    redis.call("XADD", s, "*", "type", "t", "data", "{\"k\":\"p" .. p .. "\",\"n\":" .. i .. "}")
  end
  redis.call("XGROUP", "CREATE", s, "g", "0")
  redis.call("XREADGROUP", "GROUP", "g", "o:1", "COUNT", 1000, "STREAMS", s, ">")
  redis.call("SET", s .. ":__lease__", "o:1")
end
return 64'
cli EVAL "$setup" 0 >/dev/null

# KEYS per step: lease, stream, sink, effects; ARGV: token, effect, then one entry id per step.
steps='
local function step(lease, stream, sink, effects, token, effect, id)
  if redis.call("GET", lease) ~= token then
    return redis.error_reply("FENCED lease not held by " .. token)
  end
  local last = tonumber(redis.call("HGET", sink, "last_seq") or "0")
  redis.call("HSET", sink, "last_seq", last + 1, "last_token", token)
  redis.call("HSET", effects, last + 1, effect)
  local acked = redis.call("XACK", stream, "g", id)
  return {"accepted", last + 1, token, acked}
end
local out = {}
for i = 0, #KEYS / 4 - 1 do
  local ok, reply = pcall(step, KEYS[i * 4 + 1], KEYS[i * 4 + 2], KEYS[i * 4 + 3], KEYS[i * 4 + 4],
                          ARGV[1], ARGV[2], ARGV[3 + i])
  out[#out + 1] = ok and reply or {err = tostring(reply)}
end
return out'
sha=$(cli SCRIPT LOAD "$steps")

echo "# one script per K partitions' steps: redis-server execution time per step (INFO commandstats)"
echo "#  K   scripts   us per script   us per step   against K = 1"
base=""
for k in 1 4 16 32; do
  keys=() ids=()
  for ((p = 0; p < k; ++p)); do
    keys+=("whatif:p$p:__lease__" "whatif:p$p" "whatif:p$p:sink" "whatif:p$p:effects")
    ids+=("0-1")
  done
  cli CONFIG RESETSTAT >/dev/null
  redis-benchmark -p "$port" -c 1 -P 16 -n $((steps_total / k)) -q \
    EVALSHA "$sha" $((4 * k)) "${keys[@]}" o:1 effect-of-the-step "${ids[@]}" >/dev/null
  stats=$(cli INFO commandstats | tr -d '\r' | grep '^cmdstat_evalsha:')
  calls=$(sed -E 's/^cmdstat_evalsha:calls=([0-9]+),.*/\1/' <<<"$stats")
  per_call=$(sed -E 's/.*usec_per_call=([0-9.]+).*/\1/' <<<"$stats")
  per_step=$(awk -v c="$per_call" -v k="$k" 'BEGIN {printf "%.2f", c / k}')
  [[ -n "$base" ]] || base=$per_step
  printf "%4d %9d %15s %13s %13s\n" "$k" "$calls" "$per_call" "$per_step" \
    "$(awk -v s="$per_step" -v b="$base" 'BEGIN {printf "%.2fx", s / b}')"
done
