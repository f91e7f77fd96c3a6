#!/usr/bin/env bash
# A profile-guided build of the simulator: about a quarter more data packets
# per CPU-second than the plain release build, with the same results to the
# bit (docs/simulator.md, "Speed").
#
#   ./scripts/pgo.sh           # builds target/pgo/release/hal-sim
#   ./scripts/pgo.sh bench     # and then runs the speed benchmark with it
#
# Three steps: an instrumented build (target/pgo-gen), which runs the shipped
# scenarios that the benchmark does not (so the profile is not trained on
# what is measured) and writes its counts; llvm-profdata (rustup's
# llvm-tools component, the one that matches rustc's LLVM) merges them into
# target/pgo/hal-sim.profdata; rustc builds again with that profile. The
# profile follows the code: run the script again after a change.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

mode="${1:-build}"
case "$mode" in
  build | bench) ;;
  *)
    echo "usage: $0 [build|bench]" >&2
    exit 2
    ;;
esac

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  echo "llvm-profdata is missing: rustup component add llvm-tools" >&2
  exit 1
fi

# Training set: every shipped scenario but the three the benchmark measures
# (hpcc-2to1, websearch-leafspine320, fattree320-fbhadoop) and the other
# 320-host runs, which take minutes; about 2 s instrumented.
training=(
  hpcc-incast60 hpcc-onoff hpcc-probe-loss
  ldcp-2to1 ldcp-incast60 ldcp-incast1000
  dctcp-2to1 dctcp-incast60 dcqcn-2to1 dcqcn-incast60
  pfc-victim websearch-leafspine fattree16-fbhadoop
)

pgo="$root/target/pgo"
rm -rf "$pgo/raw" "$pgo/build-raw"
mkdir -p "$pgo/raw"

echo "==> instrumented build (target/pgo-gen)"
# Build scripts and proc macros are instrumented too and write their counts
# while cargo runs them; those go to build-raw and are not used.
CARGO_TARGET_DIR="$root/target/pgo-gen" \
  RUSTFLAGS="-Cprofile-generate=$pgo/build-raw" \
  cargo build --release -p hal-sim --bin hal-sim

echo "==> training runs"
for s in "${training[@]}"; do
  echo "  $s"
  LLVM_PROFILE_FILE="$pgo/raw/$s-%p.profraw" \
    "$root/target/pgo-gen/release/hal-sim" run --quiet "scenarios/$s.toml" >/dev/null
done
"$profdata" merge -o "$pgo/hal-sim.profdata" "$pgo"/raw/*.profraw

export CARGO_TARGET_DIR="$pgo"
export RUSTFLAGS="-Cprofile-use=$pgo/hal-sim.profdata"
echo "==> profile-guided build (target/pgo/release/hal-sim)"
cargo build --release -p hal-sim --bin hal-sim
if [ "$mode" = bench ]; then
  echo "==> benchmark, profile-guided"
  cargo bench -p hal-sim --bench sim
fi
