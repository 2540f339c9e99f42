#!/usr/bin/env bash
# bench/worker_idle_cost.sh SEQBY [N] [WORKER FLAGS...]: the idle cost of a real `seqby worker`
# process (not the in-process engine of bench_redis_idle_cost): N partitions (default 10,000),
# each an empty stream with its group at 0 and a member of the index, one worker that takes them
# all, and nothing published. After SETTLE_S seconds (default 15) it prints redis-server's CPU
# (user + sys, % of a core) and every command's calls and execution time per second over
# WINDOW_S seconds (default 20, INFO commandstats; inside scripts too: a blocked wake read is
# counted when it returns, and it blocks up to 10 s, kWakeBlockMsMax, so a window shorter than
# that may count none of them), the length of every stream
# named seqby:history*, then stops the worker by its pid (SIGTERM) and prints its exit status.
# WORKERS=M (default 1) starts M workers (owner ids w1..wM) that share the partitions fairly, each
# with its own discovery: what the index's reads cost grows with them.
# Run it under scripts/with-redis (a private server):
#   scripts/with-redis bench/worker_idle_cost.sh build/seqby 10000
#   scripts/with-redis bench/worker_idle_cost.sh build/seqby 10000 --history-stream seqby:history
#   WORKERS=4 scripts/with-redis bench/worker_idle_cost.sh build/seqby 10000
set -euo pipefail

seqby=${1:?usage: worker_idle_cost.sh SEQBY [N] [WORKER FLAGS...]}
partitions=${2:-10000}
shift $(($# >= 2 ? 2 : 1))
settle_s=${SETTLE_S:-15}
window_s=${WINDOW_S:-20}
workers=${WORKERS:-1}
[[ -x "$seqby" ]] || { echo "worker_idle_cost: '$seqby' is not an executable" >&2; exit 2; }
for value in "$settle_s" "$window_s"; do
  [[ "$value" =~ ^[1-9][0-9]*$ ]] || {
    echo "worker_idle_cost: SETTLE_S and WINDOW_S must be whole numbers of seconds >= 1, not '$value'" >&2
    exit 2
  }
done
[[ "$workers" =~ ^[1-9][0-9]*$ ]] || {
  echo "worker_idle_cost: WORKERS must be a whole number >= 1, not '$workers'" >&2
  exit 2
}
[[ "$partitions" =~ ^[1-9][0-9]*$ ]] || {
  echo "worker_idle_cost: N must be a whole number >= 1, not '$partitions'" >&2
  exit 2
}
url=${SEQBY_TEST_REDIS_URL:?worker_idle_cost: run it under scripts/with-redis}
port=${url##*:}
cli() { redis-cli -p "$port" "$@"; }
server_cpu_s() { cli INFO cpu | tr -d '\r' | awk -F: '/^used_cpu_(user|sys):/ {s += $2} END {print s}'; }

for ((i = 1; i <= partitions; ++i)); do
  echo "XGROUP CREATE idle:p$i g 0 MKSTREAM"
  echo "SADD idle:__partitions__ p$i"
done | cli >/dev/null

logs=()
worker_pids=()
stop_workers() {
  for pid in "${worker_pids[@]}"; do
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  rm -f "${logs[@]}"
}
trap stop_workers EXIT
for ((w = 1; w <= workers; ++w)); do
  logs+=("$(mktemp "${TMPDIR:-/tmp}/seqby-worker-idle.XXXXXX")")
  "$seqby" worker --redis "$url" --category idle --group g --sequential-by id --owner-id "w$w" "$@" \
    2>"${logs[-1]}" &
  worker_pids+=($!)
done

sleep "$settle_s"
for ((w = 0; w < workers; ++w)); do
  kill -0 "${worker_pids[w]}" 2>/dev/null || {
    echo "worker_idle_cost: worker w$((w + 1)) exited:" >&2
    cat "${logs[w]}" >&2
    exit 1
  }
done
cli CONFIG RESETSTAT >/dev/null
cpu_before=$(server_cpu_s)
sleep "$window_s"
cpu_after=$(server_cpu_s)
echo "# $partitions idle partitions, $workers seqby worker(s) ($*), ${window_s} s window after ${settle_s} s"
awk -v a="$cpu_before" -v b="$cpu_after" -v w="$window_s" \
  'BEGIN {printf "redis-server CPU: %.1f%% of a core\n", (b - a) / w * 100}'
cli INFO commandstats | tr -d '\r' |
  awk -F'[:,=]' -v w="$window_s" '/^cmdstat_/ && $1 !~ /info|config/ {
    sub("cmdstat_", "", $1); printf "  %-16s %9.1f calls/s %9.1f us/s\n", $1, $3 / w, $5 / w }'
for stream in $(cli --scan --pattern 'seqby:history*'); do
  echo "stream $stream: $(cli XLEN "$stream") entries"
done
grep -o 'event=start .*' "${logs[0]}" | head -n 1
for ((w = 0; w < workers; ++w)); do
  kill -TERM "${worker_pids[w]}"
  status=0
  wait "${worker_pids[w]}" || status=$?
  echo "worker w$((w + 1)) exit status: $status"
done
