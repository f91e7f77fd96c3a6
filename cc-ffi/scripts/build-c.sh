#!/usr/bin/env bash
# Builds the C API's static library and the C examples against it, for the
# host and for the two soft cores:
#
#   cc-ffi/scripts/build-c.sh OUT
#
# OUT/host/{replay,pcc_shape}            the host's C compiler (cc), run directly
# OUT/riscv32imac/{replay,pcc_shape}.elf riscv64-unknown-elf-gcc with picolibc,
# OUT/riscv64imac/{replay,pcc_shape}.elf for the QEMU virt machine (M-mode,
#                                        -bios none; semihosting for files and exit)
#
# The soft cores' images are linked against the library built with the
# `panic-never` feature, whose panic handler names a symbol that exists
# nowhere: the link succeeds only if no panic path is left in what the C
# programs call (the firmware's no-panic proof, for the C ABI), and an
# image that links never reaches the handler, so it is the program as
# `cargo staticlib --target T` would give it, built once instead of twice
# (each build of the library is a fat-LTO build of the engine).
# Needs Debian's gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf.
set -euo pipefail
out=$(realpath -m "${1:?usage: build-c.sh OUT}")
cd "$(dirname "$0")/.."
mkdir -p "$out/host" "$out/riscv32imac" "$out/riscv64imac"

cflags=(-std=c11 -O2 -Wall -Wextra -Werror -Iinclude)
examples=(replay pcc_shape)

cargo staticlib --quiet
for ex in "${examples[@]}"; do
  cc "${cflags[@]}" "examples/c/$ex.c" target/release/libcc_ffi.a -o "$out/host/$ex"
done

# The QEMU virt machine's RAM starts at 0x8000_0000: code and constants in
# its first 4 MiB, data and stack in the next 60 MiB (QEMU runs with -m 64M).
layout=(-Wl,--defsym=__flash=0x80000000 -Wl,--defsym=__flash_size=0x400000
        -Wl,--defsym=__ram=0x80400000 -Wl,--defsym=__ram_size=0x3c00000)
for t in "riscv32imac ilp32" "riscv64imac lp64"; do
  set -- $t
  arch=$1 abi=$2
  target="$arch-unknown-none-elf"
  gcc=(riscv64-unknown-elf-gcc --specs=picolibc.specs --oslib=semihost --crt0=semihost
       -march="${arch/riscv/rv}" -mabi="$abi" -mcmodel=medany "${layout[@]}" -Wl,--gc-sections)
  cargo staticlib --quiet --target "$target" --features panic-never --target-dir target/panic-never
  for ex in "${examples[@]}"; do
    if ! "${gcc[@]}" "${cflags[@]}" "examples/c/$ex.c" \
        "target/panic-never/$target/release/libcc_ffi.a" -o "$out/$arch/$ex.elf"; then
      echo "build-c.sh: $ex for $arch does not link against the panic-never library: a panic path is left" >&2
      exit 1
    fi
  done
done
