#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 20), starting from
# the checked-in seeds; new corpus entries go to fuzz/corpus/<target>
# (ignored by git), crashes to fuzz/artifacts/<target>.
#
#   ./scripts/fuzz.sh            # smoke: 20 s per target
#   ./scripts/fuzz.sh 3600       # a long run
#   ./scripts/fuzz.sh 600 ioam   # one target
#
# Installs cargo-fuzz if it is missing. The pinned stable toolchain runs the
# sanitizer builds with RUSTC_BOOTSTRAP=1, so no nightly is needed.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-20}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(compact int_md ioam ifa pint codec auth engine hns c_hops sim_inputs)
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
export RUSTC_BOOTSTRAP=1
status=0
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  log=$(mktemp)
  if cargo fuzz run "$t" "corpus/$t" "seeds/$t" -- -max_total_time="$seconds" -print_final_stats=1 >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    echo "fuzz $t: ${runs:-?} executions in ${seconds} s, no crash"
  else
    echo "fuzz $t: FAILED"
    grep -E "panicked|ERROR|SUMMARY|Test unit written|^error" "$log" | head -20
    status=1
  fi
  rm -f "$log"
done
exit $status
