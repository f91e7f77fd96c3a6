//! The NS16550A UART of the QEMU `virt` machine (at 0x1000_0000), polled,
//! behind the `embedded-io` traits: the one module that touches its
//! registers. On a board, this is the module to replace with the board
//! HAL's serial port (any `embedded_io::Read + Write`).
//!
//! QEMU connects it to a host pipe (`scripts/qemu.sh`), and only delivers a
//! host byte when the receive buffer has room, so nothing is lost however
//! fast the host writes; without the FIFO that is one byte per turn of
//! QEMU's main loop, about 500 events a second (see `host_channel` for the
//! fast channel the QEMU images use).

use core::convert::Infallible;
use core::ptr::{read_volatile, write_volatile};

/// Base address of UART0 on the `virt` machine (hw/riscv/virt.c).
const BASE: usize = 0x1000_0000;
/// Receive buffer (read) / transmit holding (write).
const RBR_THR: usize = 0;
/// Line status register.
const LSR: usize = 5;
/// LSR: a received byte is waiting.
const LSR_DATA_READY: u8 = 1 << 0;
/// LSR: the transmit holding register can take a byte.
const LSR_THR_EMPTY: u8 = 1 << 5;
/// LSR: transmitter empty (holding and shift registers).
const LSR_TX_IDLE: u8 = 1 << 6;

/// A handle on the UART. The images take one for the receive side and one
/// for the transmit side; each uses only its own direction.
pub struct Uart {
    _private: (),
}

impl Uart {
    /// A handle on the UART.
    pub fn take() -> Self {
        Uart { _private: () }
    }

    fn reg(off: usize) -> *mut u8 {
        (BASE + off) as *mut u8
    }

    /// Waits for and returns one received byte.
    pub fn read_byte(&mut self) -> u8 {
        // SAFETY: BASE is the virt machine's UART0 MMIO block; LSR and RBR
        // are byte registers inside it; volatile keeps every access.
        unsafe {
            while read_volatile(Self::reg(LSR)) & LSR_DATA_READY == 0 {}
            read_volatile(Self::reg(RBR_THR))
        }
    }

    /// Sends one byte, waiting for room.
    pub fn write_byte(&mut self, b: u8) {
        // SAFETY: as in `read_byte`; THR shares RBR's address.
        unsafe {
            while read_volatile(Self::reg(LSR)) & LSR_THR_EMPTY == 0 {}
            write_volatile(Self::reg(RBR_THR), b);
        }
    }

    /// Whether a received byte is waiting.
    fn data_ready(&self) -> bool {
        // SAFETY: as in `read_byte`.
        unsafe { read_volatile(Self::reg(LSR)) & LSR_DATA_READY != 0 }
    }
}

impl embedded_io::ErrorType for Uart {
    type Error = Infallible;
}

impl embedded_io::Read for Uart {
    /// Waits for one byte, then takes what else is already there.
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, Infallible> {
        let mut n = 0;
        for slot in buf.iter_mut() {
            if n > 0 && !self.data_ready() {
                break;
            }
            *slot = self.read_byte();
            n += 1;
        }
        Ok(n)
    }
}

impl embedded_io::ReadReady for Uart {
    fn read_ready(&mut self) -> Result<bool, Infallible> {
        Ok(self.data_ready())
    }
}

impl embedded_io::Write for Uart {
    fn write(&mut self, buf: &[u8]) -> Result<usize, Infallible> {
        for &b in buf {
            self.write_byte(b);
        }
        Ok(buf.len())
    }

    /// Waits until the last byte has left the shift register.
    fn flush(&mut self) -> Result<(), Infallible> {
        // SAFETY: as in `read_byte`.
        unsafe { while read_volatile(Self::reg(LSR)) & LSR_TX_IDLE == 0 {} }
        Ok(())
    }
}
