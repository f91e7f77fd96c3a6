#!/usr/bin/env bash
# Runs a nic-firmware ELF on the QEMU `virt` machine in M-mode, no OpenSBI.
#   scripts/qemu.sh ELF            (cargo uses it as the runner)
#
# Streams:
#   stdin/stdout  the event channel (codec frames in, answers out): the UART,
#                 or, for an image built with the semihosting channel (it
#                 carries the text "nic-firmware:host-channel:stdio"),
#                 QEMU's own stdin and fd 3, which the image reads and writes
#                 through semihosting, a frame per call
#   stderr        the image's defmt log, decoded by defmt-print
# The image writes its defmt frames to the semihosting console, which QEMU
# puts on its own stdout; that stdout is piped through defmt-print. The UART
# is therefore a pipe chardev (two FIFOs in a temporary folder) bridged to
# the script's stdin and stdout. Semihosting also gives the exit code, which
# is the verdict. -icount shift=0 makes minstret exact and repeatable.
# QEMU_TIMEOUT (seconds, default 300) bounds a hung image.
set -uo pipefail
elf=${1:?usage: qemu.sh ELF}
# ELF class byte: 1 = 32-bit, 2 = 64-bit.
case "$(od -An -tx1 -j4 -N1 "$elf" | tr -d ' ')" in
  01) qemu=qemu-system-riscv32; cpu=rv32 ;;
  02) qemu=qemu-system-riscv64; cpu=rv64 ;;
  *) echo "qemu.sh: $elf is not an ELF file" >&2; exit 2 ;;
esac
# An image built with Zbb (`-C target-feature=+zbb`) carries the text
# below (nic_firmware::ZBB_MARKER); QEMU's core gets the extension too.
if grep -q -a "nic-firmware:isa-ext:zbb" "$elf"; then
  cpu="$cpu,zbb=true"
fi
command -v "$qemu" >/dev/null || { echo "qemu.sh: $qemu not found; install Debian's qemu-system-misc" >&2; exit 127; }
command -v defmt-print >/dev/null || { echo "qemu.sh: defmt-print not found; cargo install defmt-print --locked" >&2; exit 127; }
if grep -q -a "nic-firmware:host-channel:stdio" "$elf"; then
  # The semihosting channel: QEMU reads our stdin itself and writes the
  # answers to fd 3, our stdout. The UART is left unconnected.
  exec 3>&1
  serial=(-serial null)
  drain=
else
  fifo=$(mktemp -d)
  mkfifo "$fifo/uart.in" "$fifo/uart.out"
  # Background jobs get /dev/null as stdin unless told otherwise.
  exec 6<&0
  cat <&6 >"$fifo/uart.in" &
  feeder=$!
  cat "$fifo/uart.out" &
  drain=$!
  trap 'kill "$feeder" "$drain" 2>/dev/null; rm -rf "$fifo"' EXIT
  serial=(-chardev pipe,id=uart,path="$fifo/uart" -serial chardev:uart)
fi
timeout --foreground "${QEMU_TIMEOUT:-300}" "$qemu" -machine virt -cpu "$cpu" -bios none -m 64M \
  -display none -monitor none -icount shift=0 "${serial[@]}" \
  -semihosting-config enable=on,target=native -kernel "$elf" \
  | defmt-print --log-format '{t:>10} {L:<5} {s}' -e "$elf" stdin >&2
status=("${PIPESTATUS[@]}")
# Everything the UART sent is out once the drain sees QEMU's end close.
[ -n "$drain" ] && wait "$drain" 2>/dev/null
# QEMU's verdict first; a decoder failure alone is still a failure.
[ "${status[0]}" -ne 0 ] && exit "${status[0]}"
exit "${status[1]}"
