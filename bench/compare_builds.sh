#!/usr/bin/env bash
# bench/compare_builds.sh [--rounds N] [--seeds A..B] sim|throughput BUILD...: runs the same
# measurement on several builds in turn, round after round, so that each build meets the same
# moments of a shared machine (this host's CPU time moves by 1.5x between runs of one binary: only
# builds alternated within one sitting compare).
#
# BUILD is a build directory holding the program (`build`), or a git revision of this repository
# (`d204cb7`, `main~3`): a revision's programs are built once in a worktree of their own under
# SEQBY_COMPARE_DIR (default ${TMPDIR:-/tmp}/seqby-compare), kept for the next call
# (`git worktree remove --force DIR` removes one). The first BUILD is the baseline.
#
#   sim         `seqby sim --seeds A..B --jobs 1` (default seeds 0..99, 7 rounds), in a scratch
#               directory. Per build: CPU seconds (user + sys of the process) min / median, the
#               simulated seconds of its last line, the simulated time per CPU second (min and
#               median CPU), and that speed against the baseline's. This is issue 14's figure
#               "simulator speed per CPU second on the default campaign".
#   throughput  `bench_redis_throughput --repetitions 1 --events-per-partition 1000` (3 rounds),
#               every build against one private redis-server (run it under scripts/with-redis).
#               Prints each run's own table; its ratios are taken within that run.
#
#   bench/compare_builds.sh sim d204cb7 build
#   scripts/with-redis bench/compare_builds.sh throughput d204cb7 build
set -euo pipefail

usage() {
  echo "usage: bench/compare_builds.sh [--rounds N] [--seeds A..B] sim|throughput BUILD..."
  echo "       (BUILD: a build directory, or a git revision built in a worktree of its own)"
}
fail_usage() {
  echo "compare_builds: $1" >&2
  usage >&2
  exit 2
}

rounds=""
seeds="0..99"
while (($# > 0)); do
  case "$1" in
    -h | --help)
      usage
      exit 0
      ;;
    --rounds)
      (($# >= 2)) || fail_usage "--rounds needs a value"
      [[ "$2" =~ ^[1-9][0-9]*$ ]] || fail_usage "--rounds must be a whole number >= 1, not '$2'"
      rounds=$2
      shift 2
      ;;
    --seeds)
      (($# >= 2)) || fail_usage "--seeds needs a value"
      [[ "$2" =~ ^[0-9]+\.\.[0-9]+$ ]] || fail_usage "--seeds must be A..B, not '$2'"
      seeds=$2
      shift 2
      ;;
    -*) fail_usage "unknown option '$1'" ;;
    *) break ;;
  esac
done
(($# >= 2)) || fail_usage "a measurement (sim or throughput) and at least one BUILD are needed"
mode=$1
shift
case "$mode" in
  sim)
    program=seqby
    rounds=${rounds:-7}
    ;;
  throughput)
    program=bench_redis_throughput
    rounds=${rounds:-3}
    [[ -n "${SEQBY_TEST_REDIS_URL:-}" ]] ||
      fail_usage "throughput needs a private redis-server: run it under scripts/with-redis"
    ;;
  *) fail_usage "the measurement is sim or throughput, not '$mode'" ;;
esac

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
compare_dir=${SEQBY_COMPARE_DIR:-${TMPDIR:-/tmp}/seqby-compare}

# program_of BUILD: the path of $program for BUILD, building a revision's first if need be.
program_of() {
  local build=$1
  if [[ -d "$build" ]]; then
    [[ -x "$build/$program" ]] || {
      echo "compare_builds: '$build/$program' is not built (cmake --build $build --target $program)" >&2
      exit 2
    }
    echo "$(cd "$build" && pwd)/$program"
    return
  fi
  local rev
  rev=$(git -C "$repo" rev-parse --verify --quiet "$build^{commit}") ||
    fail_usage "'$build' is neither a build directory nor a git revision"
  local tree="$compare_dir/${rev:0:12}"
  if [[ ! -x "$tree/build/$program" ]]; then
    mkdir -p "$compare_dir"
    [[ -d "$tree" ]] || git -C "$repo" worktree add --detach "$tree" "$rev" >/dev/null
    echo "compare_builds: building $program of ${rev:0:12} in $tree (once)" >&2
    cmake -S "$tree" -B "$tree/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$tree/cmake.log" 2>&1 || {
      echo "compare_builds: configuring ${rev:0:12} failed: see $tree/cmake.log" >&2
      exit 1
    }
    cmake --build "$tree/build" -j "$(nproc)" --target "$program" >"$tree/build.log" 2>&1 || {
      echo "compare_builds: building ${rev:0:12} failed: see $tree/build.log" >&2
      exit 1
    }
  fi
  echo "$tree/build/$program"
}

names=("$@")
programs=()
for build in "${names[@]}"; do
  programs+=("$(program_of "$build")")
done

if [[ "$mode" == throughput ]]; then
  for ((round = 1; round <= rounds; ++round)); do
    for i in "${!programs[@]}"; do
      echo "=== round $round of $rounds: ${names[$i]} ($(cut -d' ' -f1-3 /proc/loadavg))"
      "${programs[$i]}" --repetitions 1 --events-per-partition 1000
    done
  done
  exit 0
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/seqby-compare-sim.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# cpu[i] holds build i's CPU seconds, one per round; simulated[i] its simulated seconds.
declare -a cpu simulated
TIMEFORMAT='%U %S'  # bash's `time` below: user and system CPU seconds of the run
for ((round = 1; round <= rounds; ++round)); do
  for i in "${!programs[@]}"; do
    {
      time (cd "$scratch" && "${programs[$i]}" sim --seeds "$seeds" --jobs 1 >"$scratch/out" 2>&1)
    } 2>"$scratch/time" || {
      echo "compare_builds: ${names[$i]}: seqby sim --seeds $seeds failed:" >&2
      tail -5 "$scratch/out" >&2
      exit 1
    }
    read -r user sys <"$scratch/time"
    seconds=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    sim_s=$(sed -n 's/.*simulated \([0-9.]*\) s.*/\1/p' "$scratch/out" | tail -1)
    [[ -n "$sim_s" ]] || {
      echo "compare_builds: ${names[$i]}: no 'simulated ... s' in its output" >&2
      exit 1
    }
    cpu[i]="${cpu[i]:-} $seconds"
    simulated[i]=$sim_s
    echo "round $round of $rounds: ${names[$i]} ${seconds} s CPU (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  done
done

printf '\nseqby sim --seeds %s --jobs 1, %d rounds alternated\n' "$seeds" "$rounds"
printf '%-24s %-18s %-12s %-26s %s\n' build "CPU s min/median" "simulated s" \
  "simulated per CPU s" "against ${names[0]} (min / median)"
base_min="" base_median=""
for i in "${!programs[@]}"; do
  read -r min median < <(tr ' ' '\n' <<<"${cpu[i]}" | grep . | sort -n |
    awk '{ v[NR] = $1 } END { print v[1], v[int((NR + 1) / 2)] }')
  speed_min=$(awk -v s="${simulated[i]}" -v c="$min" 'BEGIN { printf "%.0f", s / c }')
  speed_median=$(awk -v s="${simulated[i]}" -v c="$median" 'BEGIN { printf "%.0f", s / c }')
  if [[ -z "$base_min" ]]; then
    base_min=$speed_min
    base_median=$speed_median
  fi
  against=$(awk -v a="$speed_min" -v b="$base_min" -v c="$speed_median" -v d="$base_median" \
    'BEGIN { printf "%.2fx / %.2fx", a / b, c / d }')
  printf '%-24s %-18s %-12s %-26s %s\n' "${names[$i]}" "$min / $median" "${simulated[i]}" \
    "${speed_min}x / ${speed_median}x" "$against"
done
