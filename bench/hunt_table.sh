#!/usr/bin/env bash
# The hunt table (issue 4): per engine variant, `seqby hunt` from 10 different starting seeds,
# and per variant the property that caught it, the median seeds to first failure, the median
# wall time and the median shrunk size (events, faults, instances) and the largest shrunk
# events and faults.
#
#   bench/hunt_table.sh [SEQBY_BINARY] [VARIANT...]
#
# SEQBY_BINARY defaults to build/seqby. The variants default to every variant the binary knows
# (read from its own "unknown variant" message), `correct` included: it must find nothing.
# Each start S searches seeds S..S+HUNT_SEEDS-1 (HUNT_SEEDS defaults to 200); starts are
# 1, 1001, ..., 9001. HUNT_ARGS is passed on to every hunt (e.g. "--property exclusion"). Needs jq. The saved cases go to a temporary directory, removed at the end.
set -euo pipefail

seqby=${1:-build/seqby}
shift || true
seeds_per_start=${HUNT_SEEDS:-200}
starts=(1 1001 2001 3001 4001 5001 6001 7001 8001 9001)

if [[ ! -x "$seqby" ]]; then
  echo "hunt_table: $seqby is not an executable seqby binary" >&2
  exit 2
fi
command -v jq >/dev/null || { echo "hunt_table: needs jq" >&2; exit 2; }

variants=("$@")
if [[ ${#variants[@]} -eq 0 ]]; then
  known=$("$seqby" hunt --variant '?' 2>&1 >/dev/null | sed -n 's/.*(known: \(.*\)).*/\1/p' || true)
  IFS=', ' read -r -a variants <<<"$known"
fi

save_dir=$(mktemp -d)
trap 'rm -rf "$save_dir"' EXIT

# The median of the numbers on stdin (the lower middle one for an even count); "-" for none.
median() { sort -n | awk '{v[NR]=$1} END {if (NR == 0) print "-"; else print v[int((NR+1)/2)]}'; }

printf '%-16s %-22s %7s %9s %11s %7s %7s %10s %10s %10s\n' variant property caught seeds_med \
  wall_ms_med events faults instances events_max faults_max
for variant in "${variants[@]}"; do
  results="$save_dir/$variant.jsonl"
  : >"$results"
  for start in "${starts[@]}"; do
    last=$((start + seeds_per_start - 1))
    # shellcheck disable=SC2086 # HUNT_ARGS is a list of words
    "$seqby" hunt --variant "$variant" --seeds "$start..$last" --json --save "$save_dir" ${HUNT_ARGS:-} \
      2>/dev/null >>"$results" || true
  done
  found=$(jq -s '[.[] | select(.found)] | length' "$results")
  property=$(jq -r 'select(.found) | .property' "$results" | sort | uniq -c | sort -rn |
    awk '{printf "%s%s", (NR > 1 ? "," : ""), $2}')
  seeds=$(jq 'select(.found) | .seeds_tried' "$results" | median)
  wall=$(jq 'select(.found) | .wall_ms' "$results" | median)
  events=$(jq 'select(.found) | .shrunk.events' "$results" | median)
  faults=$(jq 'select(.found) | .shrunk.faults' "$results" | median)
  instances=$(jq 'select(.found) | .shrunk.instances' "$results" | median)
  events_max=$(jq 'select(.found) | .shrunk.events' "$results" | sort -n | tail -1)
  faults_max=$(jq 'select(.found) | .shrunk.faults' "$results" | sort -n | tail -1)
  printf '%-16s %-22s %4s/%-2s %9s %11s %7s %7s %10s %10s %10s\n' "$variant" "${property:--}" "$found" \
    "${#starts[@]}" "$seeds" "$wall" "$events" "$faults" "$instances" "${events_max:--}" \
    "${faults_max:--}"
done
