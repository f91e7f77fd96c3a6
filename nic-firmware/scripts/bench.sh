#!/usr/bin/env bash
# The engine's cost per event on the three soft cores, in one table:
# instructions (mean / max over 512 events, QEMU -icount shift=0, exact) and
# divisions executed per event, for rv32imac (the strict row), rv64imac and
# rv64imac with Zbb (the DPA class of core), beside DESIGN §8's targets.
#
#   scripts/bench.sh                 the table (about 8 minutes: 27 profiles)
#   scripts/bench.sh --json FILE     and the same figures as JSON
#   scripts/bench.sh --no-divisions  instructions only (about 2 minutes)
#
# Instructions come from the `bench` image of each core (the C API's rows
# from the same image built with the c-api feature); divisions from
# scripts/profile.sh, which traces 64 events of each kind and counts its
# div/divu/rem/remu instructions (QEMU counts a divide as one instruction;
# a serial divider takes 32-64 cycles). Needs what scripts/profile.sh needs.
set -euo pipefail
cd "$(dirname "$0")/.."
json=
divisions=1
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=${2:?"--json needs a file"}; shift 2 ;;
    --no-divisions) divisions=0; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# core name, cargo target, extension ("" or zbb)
cores=(
  "rv32imac riscv32imac-unknown-none-elf"
  "rv64imac riscv64imac-unknown-none-elf"
  "rv64imac_zbb riscv64imac-unknown-none-elf zbb"
)
for c in "${cores[@]}"; do
  read -r name target ext <<<"$c"
  echo "bench.sh: $name" >&2
  # Each core's images in one folder (the Zbb ones apart: their RUSTFLAGS
  # differ), so the C API's image below rebuilds only what its feature
  # changes, not every dependency.
  if [ -n "${ext:-}" ]; then
    run() { env RUSTFLAGS="-C target-feature=+$ext" CARGO_TARGET_DIR="target/$ext" cargo run "$@"; }
  else
    run() { env -u RUSTFLAGS cargo run "$@"; }
  fi
  run --release --features reference --bin bench --target "$target" >/dev/null 2>"$work/$name.bench" \
    || { cat "$work/$name.bench" >&2; exit 1; }
  # The C API's rows from an image with the c-api feature; the Rust rows
  # above come from an image without it (a second caller of the
  # algorithms changes what is inlined into them).
  run --release --features reference,c-api --bin bench --target "$target" >/dev/null 2>"$work/$name.c.bench" \
    || { cat "$work/$name.c.bench" >&2; exit 1; }
  if [ "$divisions" -eq 1 ]; then
    # Every row the images measured, by the names the profiler knows them by.
    kinds=$(sed -n 's/^profile kind: \([^\t]*\)\t.*/\1/p' "$work/$name.bench" "$work/$name.c.bench" | awk '!seen[$0]++')
    [ -n "$kinds" ] || { echo "bench.sh: the $name images named no profile kind" >&2; exit 1; }
    for kind in $kinds; do
      scripts/profile.sh "$kind" "$target${ext:++$ext}" 2>/dev/null \
        | sed -n "s/^\([0-9.]*\) divisions per event.*/$kind \1/p" >>"$work/$name.div"
    done
  fi
done
python3 tools/bench_table.py "$work" ${json:+"$json"}
