#!/usr/bin/env bash
# Runs a nic-firmware ELF on the QEMU `virt` machine in M-mode, no OpenSBI.
#   scripts/qemu.sh ELF            (cargo uses it as the runner)
# stdin/stdout are the UART (the event channel); semihosting carries text
# output and the exit code, which is the verdict. -icount shift=0 makes
# minstret exact and repeatable. QEMU_TIMEOUT (seconds, default 300) bounds
# a hung image.
set -euo pipefail
elf=${1:?usage: qemu.sh ELF}
# ELF class byte: 1 = 32-bit, 2 = 64-bit.
case "$(od -An -tx1 -j4 -N1 "$elf" | tr -d ' ')" in
  01) qemu=qemu-system-riscv32; cpu=rv32 ;;
  02) qemu=qemu-system-riscv64; cpu=rv64 ;;
  *) echo "qemu.sh: $elf is not an ELF file" >&2; exit 2 ;;
esac
command -v "$qemu" >/dev/null || { echo "qemu.sh: $qemu not found; install Debian's qemu-system-misc" >&2; exit 127; }
exec timeout --foreground "${QEMU_TIMEOUT:-300}" "$qemu" -machine virt -cpu "$cpu" -bios none -m 64M \
  -display none -monitor none -serial stdio -icount shift=0 \
  -semihosting-config enable=on,target=native -kernel "$elf"
