#!/usr/bin/env bash
# Runs the on-target tests (tests/on_target.rs, defmt-test) on both soft
# cores under QEMU and ends with one line:
#   on-target: N passed, N failed
# defmt-test runs the tests in order and stops at the first failure (a
# panic on bare metal ends the run); the tests after it are reported as not
# run. The exit status is non-zero if anything failed or did not build.
#   scripts/on-target-tests.sh [TARGET...]   (default: riscv32imac and riscv64imac)
set -uo pipefail
cd "$(dirname "$0")/.."
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(riscv32imac-unknown-none-elf riscv64imac-unknown-none-elf)
passed=0 failed=0 notrun=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for target in "${targets[@]}"; do
  echo "--- on-target tests on $target (QEMU)"
  cargo test --release --features reference --target "$target" --test on_target 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  # defmt-test announces each test as "(i/N) running `name`...".
  total=$(sed -n 's/^(\([0-9]*\)\/\([0-9]*\)) running.*/\2/p' "$log" | tail -n 1)
  ran=$(grep -c '^([0-9]*/[0-9]*) running' "$log")
  if [ "$rc" -eq 0 ] && grep -q '^all tests passed!' "$log"; then
    passed=$((passed + ran))
    echo "--- $target: $ran passed"
  elif [ -z "$total" ]; then
    failed=$((failed + 1))
    echo "--- $target: the test image did not build or start (exit $rc)"
  else
    passed=$((passed + ran - 1))
    failed=$((failed + 1))
    notrun=$((notrun + total - ran))
    echo "--- $target: test $ran of $total failed (exit $rc); $((total - ran)) not run"
  fi
done
summary="on-target: $passed passed, $failed failed"
[ "$notrun" -gt 0 ] && summary="$summary, $notrun not run"
echo "$summary"
[ "$failed" -eq 0 ]
