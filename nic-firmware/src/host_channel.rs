//! The event channel over semihosting file I/O, for the QEMU images: each
//! `read` or `write` is one semihosting call that QEMU turns into one
//! `read(2)` or `write(2)` on a host file, a whole frame (or as much as the
//! host has sent) at a time.
//!
//! Why not the UART: QEMU's 16550 without its FIFO hands the guest one byte
//! per turn of QEMU's main loop, which held co-simulation at about 500
//! events a second; this channel is not paced by the main loop at all. The
//! channel's files are QEMU's own standard input (`/dev/stdin`: the
//! frames the host sends) and file descriptor 3 (`/dev/fd/3`: the
//! answers), which `scripts/qemu.sh` connects to its own standard input
//! and output when the image carries [`MARKER`]. Semihosting needs a
//! debugger or an emulator; an image for a board uses the UART (or the
//! board HAL's serial port) through the same `embedded-io` traits.

use embedded_io::ErrorKind;
use semihosting::fs::File;
use semihosting::io::{Read as _, Write as _};

/// Text `scripts/qemu.sh` looks for in an image to connect this channel
/// instead of the UART.
#[used]
pub static MARKER: [u8; 32] = *b"nic-firmware:host-channel:stdio\0";

/// Where the events come in: QEMU's standard input.
pub struct HostRx(File);

/// Where the answers go out: QEMU's file descriptor 3.
pub struct HostTx(File);

/// Opens both ends; `None` if the host refused either file.
pub fn open() -> Option<(HostRx, HostTx)> {
    // Keep the marker in the image even if nothing else reads it.
    core::hint::black_box(&MARKER);
    let rx = File::open(c"/dev/stdin").ok()?;
    // Mode "wb": O_WRONLY | O_CREAT | O_TRUNC, harmless on a pipe.
    let tx = File::create(c"/dev/fd/3").ok()?;
    Some((HostRx(rx), HostTx(tx)))
}

impl embedded_io::ErrorType for HostRx {
    type Error = ErrorKind;
}

impl embedded_io::ErrorType for HostTx {
    type Error = ErrorKind;
}

impl embedded_io::Read for HostRx {
    /// Blocks in the host's `read(2)` until the host sends something; 0 at
    /// the end of the input.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, ErrorKind> {
        self.0.read(buf).map_err(|_| ErrorKind::Other)
    }
}

impl embedded_io::Write for HostTx {
    fn write(&mut self, buf: &[u8]) -> Result<usize, ErrorKind> {
        self.0.write(buf).map_err(|_| ErrorKind::Other)
    }

    fn flush(&mut self) -> Result<(), ErrorKind> {
        Ok(())
    }
}
