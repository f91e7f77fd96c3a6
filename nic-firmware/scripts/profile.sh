#!/usr/bin/env bash
# Where one event kind's instructions go, per function, on the emulated core.
#   scripts/profile.sh KIND [TARGET]
#   PROFILE_DETAIL=ack_into scripts/profile.sh ldcp-ack   (and each counted instruction
#                                                      of functions matching on_ack)
# KIND: ldcp-ack, ldcp-timer, hpcc-ack-1, hpcc-ack-2, hpcc-ack-5, hpcc-ack-5-one-queue, rx-hpcc-5, probe-response,
#       and each registered algorithm's CNP, ACK, NACK and timeout rows (dcqcn-cnp, dctcp-ack, timely-ack,
#       swift-ack, theta-powertcp-ack, powertcp-ack-5, hpcc-pint-ack, nscc-ack, nscc-nack, nscc-timeout); hpcc-ack-5-wide (on the C API's controller, eight hops
#       of history: what hpcc-ack-5-c is held to); through the C API (cc-ffi): ldcp-ack-c, hpcc-ack-5-c
# TARGET: riscv32imac-unknown-none-elf (default) or riscv64imac-unknown-none-elf,
#         either with "+zbb" after it for an image built with Zbb (clz in one instruction)
#
# Builds the `profile` image, runs it under QEMU with one instruction per
# translation block and the exec trace on (every executed instruction is
# logged with its address), and hands the trace to tools/profile.py, which
# counts the instructions between the image's brackets and attributes them
# to functions through the debug info's inline chains. Needs llvm-addr2line
# (Debian's `llvm`) or gimli's `addr2line` (`cargo install addr2line`).
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:?usage: scripts/profile.sh KIND [TARGET]}
target=${2:-riscv32imac-unknown-none-elf}
ext=
case $target in
  *+zbb) target=${target%+zbb}; ext=zbb ;;
esac
case $target in
  riscv32*) qemu=qemu-system-riscv32; cpu=rv32 ;;
  riscv64*) qemu=qemu-system-riscv64; cpu=rv64 ;;
  *) echo "profile.sh: unknown target $target" >&2; exit 2 ;;
esac
a2l=$(command -v llvm-addr2line || command -v addr2line || true)
[ -n "$a2l" ] || { echo "profile.sh: needs llvm-addr2line (Debian llvm) or cargo install addr2line" >&2; exit 127; }
nm="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/llvm-nm"
[ -x "$nm" ] || nm=$(command -v llvm-nm || command -v nm)
# Its own target folder: the log level differs from the other images', and
# sharing one folder would rebuild both every time.
# The C API's kinds come from an image with the c-api feature (its own
# folder too: a second caller of the algorithms changes the other kinds').
features=reference
suffix=
case $kind in
  *-c) features=reference,c-api; suffix=-c ;;
esac
export CARGO_TARGET_DIR=target/profile$suffix
if [ -n "$ext" ]; then
  export CARGO_TARGET_DIR=target/profile-$ext$suffix RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+$ext"
  cpu="$cpu,$ext=true"
fi
DEFMT_LOG=off cargo build --release --features "$features" --bin profile --target "$target" >&2
elf=$CARGO_TARGET_DIR/$target/release/profile
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
set +e
echo "$kind" | timeout 300 "$qemu" -machine virt -cpu "$cpu" -bios none -m 64M -display none -monitor none \
  -icount shift=0 -singlestep -d exec,nochain -D "$work/trace" -serial stdio \
  -semihosting-config enable=on,target=native -kernel "$elf" >/dev/null
rc=$?
set -e
[ "$rc" -eq 0 ] || { echo "profile.sh: the image exited with $rc (unknown kind? see scripts/profile.sh)" >&2; exit "$rc"; }
echo "profile of $kind on ${target%%-*}${ext:++$ext}:"
python3 tools/profile.py "$a2l" "$nm" "$elf" "$work/trace" 64 ${PROFILE_DETAIL:+"$PROFILE_DETAIL"}
