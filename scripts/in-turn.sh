#!/usr/bin/env bash
# Compares the speed of two or more simulator binaries, run in turn.
#
#   ./scripts/in-turn.sh [-n ROUNDS] [-s SCENARIO] BIN_A BIN_B [BIN ...]
#
# Each round runs every binary once on the scenario, one after the other,
# and the lowest and the median CPU time (user + system, the whole run) of
# each binary are printed at the end. Machines like the 2-core VMs this
# project is developed on drift by as much as half over an hour, so only
# runs taken in turn compare; and the benchmark's 2-to-1 (0.2 s of loop)
# is too short to tell 2-3 % apart. The default scenario is therefore
# hpcc-2to1 with 1 GB flows instead of 200 MB (about 1 s a run); -s takes
# any scenario file instead.
#
# Build the "before" binary from another commit with, for instance:
#   git worktree add /tmp/before HEAD~1
#   (cd /tmp/before && cargo build --release -p hal-sim)
#   ./scripts/in-turn.sh /tmp/before/target/release/hal-sim target/release/hal-sim
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=5
scenario=""
while getopts "n:s:" opt; do
  case "$opt" in
    n) rounds="$OPTARG" ;;
    s) scenario="$OPTARG" ;;
    *)
      echo "usage: $0 [-n ROUNDS] [-s SCENARIO] BIN_A BIN_B [BIN ...]" >&2
      exit 2
      ;;
  esac
done
shift $((OPTIND - 1))
if [ "$#" -lt 2 ] || ! [[ "$rounds" =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 [-n ROUNDS] [-s SCENARIO] BIN_A BIN_B [BIN ...]" >&2
  exit 2
fi
for b in "$@"; do
  [ -x "$b" ] || { echo "$b: not an executable" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$scenario" ]; then
  scenario="$tmp/hpcc-2to1-1GB.toml"
  sed -e 's/^bytes = 200000000$/bytes = 1000000000/' -e 's/^stop_ms = 60.0$/stop_ms = 300.0/' \
    scenarios/hpcc-2to1.toml >"$scenario"
  grep -q '^bytes = 1000000000$' "$scenario" || { echo "scenarios/hpcc-2to1.toml changed: set -s" >&2; exit 1; }
fi

# CPU seconds (user + system) of one run of binary $1; a failed run stops
# the comparison with its error.
cpu_s() {
  local TIMEFORMAT='%U %S' t
  if ! t=$({ time "$1" run --quiet "$scenario" >/dev/null 2>"$tmp/err"; } 2>&1); then
    echo "$1 run --quiet $scenario failed:" >&2
    cat "$tmp/err" >&2
    return 1
  fi
  echo "$t" | awk '{printf "%.3f", $1 + $2}'
}

echo "scenario: $scenario; $rounds rounds, each binary once per round"
for ((r = 1; r <= rounds; r++)); do
  line="round $r:"
  for i in $(seq 1 "$#"); do
    t=$(cpu_s "${!i}")
    echo "$t" >>"$tmp/times-$i"
    line="$line $t"
  done
  echo "$line s"
done
for i in $(seq 1 "$#"); do
  sort -n "$tmp/times-$i" | awk -v b="${!i}" '{t[NR] = $1} END {printf "%-50s lowest %.3f s, median %.3f s\n", b, t[1], t[int((NR + 1) / 2)]}'
done
