#!/usr/bin/env bash
# Runs every test of the project. On a fresh machine it first installs what
# it needs: the pinned Rust toolchain with rustfmt, clippy and the two RISC-V
# targets, and QEMU (Debian's qemu-system-misc, through apt-get; as root or
# with sudo). Safe to run again; installed pieces are skipped.
#
#   ./scripts/test.sh
#
# Property tests explore new random cases on every run; in CI (CI=true) the
# seed is pinned so a run can be repeated. Set PROPTEST_RNG_SEED to replay.
# FUZZ_SECONDS sets the fuzz smoke's time per target (default 10).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's heading says how long the run has taken so far (SECONDS is
# bash's clock since the script started): where the time goes, for keeping
# a whole run under 30 minutes on the 2-core CI machine.
step() { printf '\n==> [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

# A whole run builds about 7.5 GB under the project's target folders (the
# workspace, nic-firmware's and cc-ffi's images, the profile-guided build,
# the fuzz targets). Say so at once rather than fail half-way with a
# linker's "No space left on device". TEST_MIN_FREE_GB=0 skips the check.
need_gb=${TEST_MIN_FREE_GB:-8}
free_gb=$(df -Pk . | awk 'NR == 2 { printf "%d", $4 / 1048576 }')
if [ "${free_gb:-0}" -lt "$need_gb" ]; then
  echo "test.sh: $free_gb GB free on this file system; a whole run builds about 7.5 GB under target/ (TEST_MIN_FREE_GB=0 to try anyway)" >&2
  exit 1
fi

toolchain=$(sed -n 's/^channel *= *"\(.*\)"/\1/p' rust-toolchain.toml)
step "toolchain $toolchain with rustfmt, clippy, riscv32imac and riscv64imac"
if ! command -v rustup >/dev/null 2>&1; then
  echo "rustup is required (https://rustup.rs); the project pins its toolchain in rust-toolchain.toml" >&2
  exit 1
fi
rustup toolchain install "$toolchain" --profile minimal \
  --component rustfmt --component clippy --component llvm-tools \
  --target riscv32imac-unknown-none-elf --target riscv64imac-unknown-none-elf

step "QEMU for the RISC-V firmware (Debian's qemu-system-misc)"
if ! command -v qemu-system-riscv32 >/dev/null 2>&1 || ! command -v qemu-system-riscv64 >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-system-misc
fi
qemu-system-riscv32 --version | head -n 1
# llvm-addr2line reads the firmware's inline chains for the profiler.
if ! command -v llvm-addr2line >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends llvm
fi

step "defmt-print, which decodes the firmware's defmt logs (nic-firmware/scripts/qemu.sh)"
command -v defmt-print >/dev/null 2>&1 || cargo install defmt-print --locked --version 1.2.0
defmt-print --version

step "the C API's tools: a RISC-V C compiler with picolibc (Debian) and cbindgen"
if ! command -v riscv64-unknown-elf-gcc >/dev/null 2>&1 || [ ! -e /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
fi
riscv64-unknown-elf-gcc --version | head -n 1
command -v cbindgen >/dev/null 2>&1 || cargo install cbindgen --locked --version 0.29.2
cbindgen --version

if [ "${CI:-}" = "true" ]; then
  export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED:-20261122}"
fi
# A run builds the workspace's crates once: incremental compilation's
# bookkeeping costs more than it saves there (the workspace's tests built
# from scratch on two cores: 299 s with it, 254 s without).
# CARGO_INCREMENTAL=1 keeps it.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"

step "commit subjects: 72 characters or fewer (CONTRIBUTING.md)"
./scripts/commit-subjects.sh

step "format"
cargo fmt --all -- --check
(cd nic-firmware && cargo fmt -- --check)
(cd cc-ffi && cargo fmt -- --check)

# The rest runs in two lanes, one per core of the CI machine: much of a
# run is one thread at a time (linking with fat LTO, QEMU, the fuzzer), so
# two lanes finish in about two thirds of the time one takes. Each lane owns
# its build folders, so neither waits on the other's cargo lock for long and
# neither replaces an image the other is about to run:
#   lane A: the firmware images, on-target tests, benchmark (nic-firmware/
#           target, target/zbb), then the workspace's tests (target/) and docs;
#   lane B: the lints, the C API's unit tests, the no-panic proof and the
#           profiler (nic-firmware/target/profile), the fuzz smoke (fuzz/),
#           the profile-guided build (target/pgo*), a fresh crate's build.
# Lane B's output is kept in a file and printed when it ends. TEST_SERIAL=1
# runs lane B first and then lane A, one step at a time, output as it comes.
# Test tallies (each lane its own), and lane B's output.
log=$(mktemp)
log_b=$(mktemp)
out_b=$(mktemp)
lane_b_pid=
cleanup() {
  if [ -n "$lane_b_pid" ]; then
    # Lane A stopped early: stop lane B (its own process group) if it
    # still runs, and show where it was.
    if kill -0 "$lane_b_pid" 2>/dev/null; then
      kill -- "-$lane_b_pid" 2>/dev/null || true
      echo "test.sh: stopped lane B; its last lines:" >&2
    else
      echo "test.sh: lane B had ended; its last lines:" >&2
    fi
    tail -n 30 "$out_b" >&2
  fi
  rm -f "$log" "$log_b" "$out_b"
}
trap cleanup EXIT

lane_b() {
  step "B: lints (clippy, warnings are errors)"
  cargo clippy --workspace --all-targets --features cc-core/reference,integration-tests/qemu -- -D warnings
  for target in riscv32imac-unknown-none-elf riscv64imac-unknown-none-elf; do
    (cd nic-firmware && cargo clippy --release --target "$target" --features reference --bins --tests -- -D warnings)
  done
  (cd cc-ffi && cargo clippy --all-targets -- -D warnings)
  # This also compiles cc-core alone for both soft cores, no_std and without
  # defmt (cc-ffi takes none of its features); the panic-never images below
  # compile it with defmt alone.
  for target in riscv32imac-unknown-none-elf riscv64imac-unknown-none-elf; do
    (cd cc-ffi && cargo clippy --release --target "$target" -- -D warnings)
  done

  step "B: cc-ffi: the checked-in header is what the code makes; the C API's unit tests"
  cc-ffi/scripts/header.sh
  (cd cc-ffi && cargo test 2>&1) | tee -a "$log_b"

  step "B: nic-firmware: no reachable panic (panic-never link check) and worst-case stack bound"
  objdump="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-objdump"
  for target in riscv32imac-unknown-none-elf riscv64imac-unknown-none-elf; do
    # Logging is compiled out (DEFMT_LOG=off, no logger): every defmt logger
    # panics on reentrant use, so a logging image cannot pass this check.
    # Built in the profiler's folder, whose builds are all DEFMT_LOG=off: in
    # the images' folder the changed DEFMT_LOG would rebuild defmt and
    # everything above it twice (here, and back for the benchmark).
    (cd nic-firmware && DEFMT_LOG=off CARGO_TARGET_DIR=target/profile cargo build --release --bin replay --no-default-features --features panic-never --target "$target")
    # The stack bound must leave room in the 4 MiB RAM of the memory maps: limit 1 MiB.
    python3 nic-firmware/tools/stack_bound.py "$objdump" "nic-firmware/target/profile/$target/release/replay" 1048576
  done

  step "B: nic-firmware: the profiler attributes an event's instructions to engine functions"
  prof=$(nic-firmware/scripts/profile.sh ldcp-ack 2>/dev/null)
  echo "$prof" | head -n 8
  echo "$prof" | grep -q "instructions per event" && echo "$prof" | grep -q "cc_core::ldcp::" \
    || { echo "the profile of ldcp-ack names no LDCP function"; exit 1; }

  step "B: fuzz smoke: every cargo-fuzz target for ${FUZZ_SECONDS:=10} s (long runs: ./scripts/fuzz.sh 3600)"
  ./scripts/fuzz.sh "$FUZZ_SECONDS"

  step "B: hal-sim: the profile-guided build (scripts/pgo.sh) runs as the plain one does, to the bit"
  ./scripts/pgo.sh
  # The plain build compared is pgo.sh's instrumented one (target/pgo-gen):
  # the release build's code with counters added, optimised without the
  # profile. A third build of the simulator would add two minutes.
  plain=target/pgo-gen/release/hal-sim
  runs=$(mktemp -d)
  export LLVM_PROFILE_FILE="$runs/discarded-%p.profraw"
  for s in hpcc-2to1 websearch-leafspine ldcp-incast60; do
    "$plain" run "scenarios/$s.toml" --out "$runs/plain-$s" >"$runs/plain-$s.txt"
    target/pgo/release/hal-sim run "scenarios/$s.toml" --out "$runs/pgo-$s" >"$runs/pgo-$s.txt"
    grep -q "profile-guided build" "$runs/pgo-$s.txt" \
      || { echo "target/pgo/release/hal-sim does not say it is profile-guided" >&2; exit 1; }
    cmp "$runs/plain-$s/flows.csv" "$runs/pgo-$s/flows.csv"
    # Everything but the speed and the output directory.
    diff <(grep -v -e '^  speed' -e '^wrote' "$runs/plain-$s.txt") <(grep -v -e '^  speed' -e '^wrote' "$runs/pgo-$s.txt")
    echo "$s: the same flows and summary"
  done
  # The two builds in turn (scripts/in-turn.sh, the speed comparison a change
  # of a few per cent needs), one short round: the script runs and reports
  # both (the other lane runs beside it, so the figures here are not a
  # measurement).
  turn=$(./scripts/in-turn.sh -n 1 -s scenarios/ldcp-incast60.toml "$plain" target/pgo/release/hal-sim)
  rm -rf "$runs"
  unset LLVM_PROFILE_FILE
  echo "$turn"
  [ "$(echo "$turn" | grep -c 'lowest .* s, median .* s$')" -eq 2 ] \
    || { echo "scripts/in-turn.sh did not report both builds" >&2; exit 1; }

  step "B: cc-core: a new crate depending on it builds warning-free with the newest compatible dependencies"
  # A firmware team's crate resolves cc-core's dependencies anew, to the
  # latest semver-compatible releases, not to this workspace's Cargo.lock;
  # its CI often denies warnings (a deprecation there breaks its build).
  fresh=$(mktemp -d)
  mkdir "$fresh/src"
  cat >"$fresh/Cargo.toml" <<TOML
[package]
name = "cc-core-user"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
cc-core = { path = "$PWD/cc-core" }
[workspace]
TOML
  echo 'fn main() { let _ = cc_core::ldcp::LdcpConfig::draft_default(); }' >"$fresh/src/main.rs"
  (cd "$fresh" && RUSTUP_TOOLCHAIN="$toolchain" RUSTFLAGS="-D warnings" CARGO_TARGET_DIR="$fresh/target" cargo build)
  grep -A1 'name = "heapless"' "$fresh/Cargo.lock" | tail -n 1
  rm -rf "$fresh"
  step "B: done"
}

if [ "${TEST_SERIAL:-}" = "1" ]; then
  lane_b
else
  step "lane B starts beside lane A (its output follows lane A's)"
  set -m # lane B in a process group of its own, so that it can be stopped whole
  (lane_b) >"$out_b" 2>&1 &
  lane_b_pid=$!
  set +m
fi

step "A: nic-firmware: release images for both soft cores (replay, bench)"
for target in riscv32imac-unknown-none-elf riscv64imac-unknown-none-elf; do
  # The hardware build (defmt over RTT, for probe-rs) must link too; the
  # QEMU build after it is the one the tests run.
  (cd nic-firmware && cargo build --release --target "$target" --no-default-features --features log-rtt,reference --bins)
  (cd nic-firmware && cargo build --release --target "$target" --features reference --bins)
done

step "A: nic-firmware: on-target tests (defmt-test on both soft cores under QEMU)"
nic-firmware/scripts/on-target-tests.sh 2>&1 | tee -a "$log"

step "A: nic-firmware: the benchmark's three cores in one table, C API rows included (scripts/bench.sh, instructions only)"
bench_json=$(mktemp)
bench_out=$(mktemp)
nic-firmware/scripts/bench.sh --no-divisions --json "$bench_json" >"$bench_out"
head -n 20 "$bench_out"
python3 - "$bench_json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
# Seven rows of its own, then one per algorithm of the registry with a
# benchmark row (DCQCN's CNP row, then the ACK rows: DCTCP's and on),
# then the C API's two.
assert len(rows) >= 12, rows
for r in rows:
    for core in ("rv32imac", "rv64imac", "rv64imac_zbb"):
        assert isinstance(r[core]["mean"], int) and r[core]["max"] >= r[core]["mean"], (r["event"], core)
c_rows = [r for r in rows if "rust_row" in r]
assert len(c_rows) == 2 and all("over_rust_pct" in r["rv32imac"] for r in c_rows), c_rows
print("bench.sh: %d rows on three cores, %d through the C API" % (len(rows), len(c_rows)))
# The checked-in table (hal-sim's [nic.cc_processor] takes its costs from
# it) holds today's instruction counts, to the instruction.
kept = {r["event"]: r for r in json.load(open("nic-firmware/bench.json"))["rows"]}
stale = [(r["event"], core, kept.get(r["event"], {}).get(core, {}).get(k), r[core][k])
         for r in rows for core in ("rv32imac", "rv64imac", "rv64imac_zbb") for k in ("mean", "max")
         if kept.get(r["event"], {}).get(core, {}).get(k) != r[core][k]]
assert not stale and len(kept) == len(rows), \
    "nic-firmware/bench.json is stale (event, core, kept, now): %s; rewrite it with " \
    "nic-firmware/scripts/bench.sh --json nic-firmware/bench.json" % stale[:6]
print("nic-firmware/bench.json holds today's figures")
PY
rm -f "$bench_json" "$bench_out"

step "A: unit, property, interop, simulator, scenario, firmware- and C-API-equivalence tests (QEMU; overflow checks on)"
cargo test --workspace --features cc-core/reference,integration-tests/qemu 2>&1 | tee -a "$log"

step "A: documentation (missing docs and broken links are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc -p cc-core --no-deps --features reference
RUSTDOCFLAGS="-D warnings" cargo doc -p hal-sim --no-deps

lane_b_status=0
if [ -n "$lane_b_pid" ]; then
  step "A: done; waiting for lane B"
  wait "$lane_b_pid" || lane_b_status=$?
  lane_b_pid=
  echo
  echo "==================== lane B ===================="
  cat "$out_b"
  echo "================== lane B end =================="
  if [ "$lane_b_status" -ne 0 ]; then
    echo "test.sh: lane B failed (exit $lane_b_status); its output is above" >&2
    exit 1
  fi
fi

totals=$(cat "$log" "$log_b" | awk '/^(test result|on-target):/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } } END { printf "%d passed, %d failed", p, f }')
echo
echo "all: $totals in $((SECONDS / 60)) min $((SECONDS % 60)) s"
