//! The NS16550A UART of the QEMU `virt` machine (at 0x1000_0000), polled.
//!
//! QEMU connects it to its stdin/stdout with `-serial stdio`, and only
//! delivers a host byte when the receive buffer has room, so nothing is lost
//! however fast the host writes.

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

    /// Sends all of `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_byte(b);
        }
    }
}
