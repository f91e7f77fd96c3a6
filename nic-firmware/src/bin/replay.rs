//! The firmware's event loop: codec frames in over the UART, the engine's
//! answers out, one answer per event, in order.
//!
//! ```text
//! host ──UART──▶ [config] event event … halt
//! host ◀──UART── [config echo] answer answer …
//! ```
//!
//! This is the same `cc-core` engine and flow table the simulator runs
//! (`Engine<AnyController<8>, FLOWS>`), with the NIC side behind the HAL
//! traits: `UartRx` is the event source (frames decoded from the UART),
//! `UartTx` the scheduler port (answers encoded back), and `cc_core::hal::pump`
//! the loop, as in the simulator.
//!
//! A configuration frame resets the engine in place (new parameters, no
//! flows); a refused one
//! is answered by a refusal for flow 0xFFFF_FFFF. A frame with a bad CRC,
//! length or tag is skipped (the reader resyncs on the next magic) and
//! counted. At the halt frame the image exits through semihosting with 0
//! if every frame was read cleanly, 1 otherwise.
//!
//! The image logs (defmt, on stderr under `scripts/qemu.sh`) its start, each
//! configuration, each skipped frame and a summary at the halt.
#![no_std]
#![no_main]

use cc_core::codec::{self, FrameKind, MAX_FRAME};
use cc_core::prelude::*;
use cc_core::wire::WireError;
use nic_firmware::{exit, uart::Uart};

/// Flows the table holds: 1024 × ~150 bytes stays well inside the image's
/// 4 MiB (see memory-rv32.x).
const FLOWS: usize = 1024;

type NicEngine = Engine<AnyController<8>, FLOWS>;

/// The virtual NIC's receive side: event frames from the UART.
struct UartRx {
    uart: Uart,
    buf: [u8; MAX_FRAME],
    len: usize,
    bad_frames: u32,
    /// The event `next_event` lent out last.
    current: Option<codec::EventBuf>,
    /// A control frame that ended the current run of events.
    control: Option<Control>,
}

/// Frames that are not events.
enum Control {
    /// A new configuration and the frame's length (still in the buffer,
    /// to be echoed).
    Config(AnyConfig, usize),
    Halt,
}

/// The virtual NIC's transmit side: answers to the UART.
struct UartTx {
    uart: Uart,
}

impl UartRx {
    /// Reads until a valid event or control frame is at the front of the
    /// buffer.
    fn next_frame(&mut self) -> Result<codec::EventBuf, Control> {
        loop {
            match codec::read_frame(self.filled()) {
                Ok(f) => {
                    let (used, kind) = (f.len, f.kind);
                    let next = match kind {
                        FrameKind::Event => codec::decode_event(&f).map(Ok),
                        FrameKind::Config => codec::decode_config(&f).map(|c| Err(Control::Config(c, used))),
                        FrameKind::Halt => Ok(Err(Control::Halt)),
                        FrameKind::Decision | FrameKind::Refusal => Err(WireError::UnknownType),
                    };
                    match next {
                        // A config echo needs the bytes still in the buffer.
                        Ok(c @ Err(Control::Config(..))) => return c,
                        Ok(n) => {
                            self.consume(used);
                            return n;
                        }
                        Err(e) => {
                            self.bad_frames += 1;
                            defmt::warn!("{} frame skipped: {} ({} bad so far)", kind, e, self.bad_frames);
                            self.consume(used);
                        }
                    }
                }
                Err(WireError::Truncated) => {
                    let b = self.uart.read_byte();
                    match self.buf.get_mut(self.len) {
                        Some(slot) => {
                            *slot = b;
                            self.len += 1;
                        }
                        // Unreachable: read_frame refuses a length above
                        // MAX_FRAME before the buffer fills. Start over.
                        None => {
                            self.bad_frames += 1;
                            self.len = 0;
                        }
                    }
                }
                Err(e) => {
                    self.bad_frames += 1;
                    defmt::warn!("bad frame: {}, resyncing ({} bad so far)", e, self.bad_frames);
                    let skip = codec::resync(self.filled());
                    self.consume(skip);
                }
            }
        }
    }

    /// The bytes received and not yet consumed.
    fn filled(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or(&[])
    }

    /// Drops the first `n` bytes. Written with `get` so that no index can
    /// panic (the image is checked for panic paths).
    fn consume(&mut self, n: usize) {
        let len = self.len.min(self.buf.len());
        let n = n.min(len);
        for i in n..len {
            if let Some(&b) = self.buf.get(i) {
                if let Some(d) = self.buf.get_mut(i - n) {
                    *d = b;
                }
            }
        }
        self.len = len - n;
    }
}

impl EventSource for UartRx {
    fn next_event(&mut self) -> Option<(Instant, Event<'_>)> {
        match self.next_frame() {
            Ok(ev) => {
                let ev = self.current.insert(ev);
                Some((ev.now, ev.event()))
            }
            Err(c) => {
                self.control = Some(c);
                None
            }
        }
    }
}

impl UartTx {
    fn send(&mut self, flow: FlowId, answer: &Result<Decision, Error>) {
        let mut out = [0u8; MAX_FRAME];
        if let Some(frame) = codec::encode_answer(flow, answer, &mut out)
            .ok()
            .and_then(|n| out.get(..n))
        {
            self.uart.write_all(frame);
        }
    }
}

impl SchedulerPort for UartTx {
    fn apply(&mut self, _now: Instant, flow: FlowId, decision: &Decision) {
        self.send(flow, &Ok(*decision));
    }

    fn refused(&mut self, _now: Instant, flow: FlowId, error: Error) {
        self.send(flow, &Err(error));
    }
}

#[riscv_rt::entry]
fn main() -> ! {
    let mut rx = UartRx {
        uart: Uart::take(),
        buf: [0; MAX_FRAME],
        len: 0,
        bad_frames: 0,
        current: None,
        control: None,
    };
    let mut tx = UartTx { uart: Uart::take() };
    let default = AnyConfig {
        hpcc: HpccConfig::draft_default(),
        ldcp: LdcpConfig::draft_default(),
    };
    let mut engine: NicEngine = match Engine::new(default) {
        Ok(e) => e,
        Err(e) => {
            defmt::error!("the default configuration was refused: {}", e);
            exit(3)
        }
    };
    defmt::info!(
        "replay: {=usize}-flow table, {=usize} bytes per flow state, waiting on the UART",
        FLOWS,
        core::mem::size_of::<AnyController<8>>()
    );
    let mut events: u64 = 0;
    loop {
        events += pump(&mut engine, &mut rx, &mut tx) as u64;
        match rx.control.take() {
            Some(Control::Config(cfg, used)) => {
                match engine.reset(cfg) {
                    Ok(()) => {
                        defmt::info!("configuration accepted after {=u64} events; flow table cleared", events);
                        tx.uart.write_all(rx.buf.get(..used).unwrap_or(&[]))
                    }
                    Err(e) => {
                        defmt::warn!("configuration refused: {}", e);
                        tx.send(codec::CONFIG_FLOW, &Err(e))
                    }
                }
                rx.consume(used);
            }
            Some(Control::Halt) => {
                defmt::info!(
                    "halt: {=u64} events answered, {=u32} bad frames, refusals {}",
                    events,
                    rx.bad_frames,
                    engine.stats()
                );
                exit(if rx.bad_frames == 0 { 0 } else { 1 })
            }
            None => {}
        }
    }
}
