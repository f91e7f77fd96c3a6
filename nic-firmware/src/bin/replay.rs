//! The firmware's event loop: codec frames in over the event channel, the
//! engine's answers out, one answer per event, in order.
//!
//! ```text
//! host ──channel──▶ [config] event event … halt
//! host ◀──channel── [config echo] answer answer …
//! ```
//!
//! The channel is any `embedded_io::Read` and `embedded_io::Write`: under
//! QEMU, semihosting file I/O (`nic_firmware::host_channel`, feature
//! `channel-semihosting`, on by default); without that feature the UART
//! (`nic_firmware::uart`), as on a board, where the board HAL's serial port
//! takes its place.
//!
//! This is the same `cc-core` engine and flow table the simulator runs
//! (`Engine<AnyController<8>, FLOWS, Sprayer>`: any algorithm, and path
//! choice for the flows a trace sprays), with the NIC side behind the HAL
//! traits: `ChannelRx` is the event source (frames decoded from the
//! channel), `ChannelTx` the scheduler port (answers encoded back), and
//! `cc_core::hal::pump` the loop, as in the simulator.
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
use cc_core::path::Sprayer;
use cc_core::prelude::*;
use cc_core::wire::WireError;
use embedded_io::{Read, Write};
use nic_firmware::exit;
use static_cell::ConstStaticCell;

/// Flows the table holds: 1024 × ~330 bytes (a flow's state and its
/// path chooser) stays well inside the image's 4 MiB (see memory-rv32.x).
const FLOWS: usize = 1024;

type NicEngine = Engine<AnyController<8>, FLOWS, Sprayer>;

/// The drafts' defaults: what the engine runs until the host configures it.
const DEFAULT_CONFIG: AnyConfig = AnyConfig::DEFAULT;

/// The flow table, in `.bss`/`.data` rather than on the stack (about
/// 340 KiB: built on the stack it was copied, and the stack bound counted
/// it twice).
static ENGINE: ConstStaticCell<NicEngine> = ConstStaticCell::new(Engine::new_const(DEFAULT_CONFIG));

/// The virtual NIC's receive side: event frames from the channel.
struct ChannelRx<R> {
    io: R,
    buf: [u8; MAX_FRAME],
    len: usize,
    bad_frames: u32,
    /// The event `next_event` lent out last.
    current: Option<codec::EventBuf>,
    /// A control frame that ended the current run of events.
    control: Option<Control>,
}

/// Frames that are not events. A configuration (with its reciprocal
/// tables, about 200 bytes) is far larger than a halt; there is one
/// `Control` at a time, on the loop's stack, whose bound the stack check
/// covers.
#[allow(clippy::large_enum_variant)]
enum Control {
    /// A new configuration and the frame's length (still in the buffer,
    /// to be echoed).
    Config(AnyConfig, usize),
    Halt,
}

/// The virtual NIC's transmit side: answers to the channel.
struct ChannelTx<W> {
    io: W,
}

impl<R: Read> ChannelRx<R> {
    /// Reads until a valid event or control frame is at the front of the
    /// buffer.
    #[allow(clippy::result_large_err)]
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
                    // As much as the channel has, up to a frame's room.
                    match self.buf.get_mut(self.len..) {
                        Some(room) if !room.is_empty() => match self.io.read(room) {
                            Ok(n) if n > 0 => self.len += n.min(room.len()),
                            _ => {
                                defmt::error!("the event channel closed before the halt frame");
                                exit(1)
                            }
                        },
                        // Unreachable: read_frame refuses a length above
                        // MAX_FRAME before the buffer fills. Start over.
                        _ => {
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

impl<R: Read> EventSource for ChannelRx<R> {
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

impl<W: Write> ChannelTx<W> {
    fn send(&mut self, flow: FlowId, answer: &Result<Decision, Error>) {
        let mut out = [0u8; MAX_FRAME];
        if let Some(frame) = codec::encode_answer(flow, answer, &mut out)
            .ok()
            .and_then(|n| out.get(..n))
        {
            self.write(frame);
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.io.write_all(bytes).and_then(|_| self.io.flush()).is_err() {
            defmt::error!("the event channel refused an answer");
            exit(1)
        }
    }
}

impl<W: Write> SchedulerPort for ChannelTx<W> {
    fn apply(&mut self, _now: Instant, flow: FlowId, decision: &Decision) {
        self.send(flow, &Ok(*decision));
    }

    fn refused(&mut self, _now: Instant, flow: FlowId, error: Error) {
        self.send(flow, &Err(error));
    }
}

/// The event channel: semihosting file I/O under QEMU.
#[cfg(feature = "channel-semihosting")]
fn channel() -> (impl Read, impl Write, &'static str) {
    match nic_firmware::host_channel::open() {
        Some((rx, tx)) => (rx, tx, "semihosting"),
        None => {
            defmt::error!("the host refused the semihosting channel's files");
            exit(2)
        }
    }
}

/// The event channel: the UART.
#[cfg(not(feature = "channel-semihosting"))]
fn channel() -> (impl Read, impl Write, &'static str) {
    (
        nic_firmware::uart::Uart::take(),
        nic_firmware::uart::Uart::take(),
        "the UART",
    )
}

#[riscv_rt::entry]
fn main() -> ! {
    let (rx_io, tx_io, via) = channel();
    run(rx_io, tx_io, via)
}

fn run(rx_io: impl Read, tx_io: impl Write, via: &str) -> ! {
    let mut rx = ChannelRx {
        io: rx_io,
        buf: [0; MAX_FRAME],
        len: 0,
        bad_frames: 0,
        current: None,
        control: None,
    };
    let mut tx = ChannelTx { io: tx_io };
    let Some(engine) = ENGINE.try_take() else {
        defmt::error!("the flow table was taken twice");
        exit(3)
    };
    // The constant table's configuration is checked here, as `new` would.
    if let Err(e) = engine.reset(DEFAULT_CONFIG) {
        defmt::error!("the default configuration was refused: {}", e);
        exit(3)
    }
    defmt::info!(
        "replay: {=usize}-flow table, {=usize} bytes per flow state, waiting on {=str}",
        FLOWS,
        core::mem::size_of::<AnyController<8>>(),
        via
    );
    let mut events: u64 = 0;
    loop {
        events += pump(engine, &mut rx, &mut tx) as u64;
        match rx.control.take() {
            Some(Control::Config(cfg, used)) => {
                match engine.reset(cfg) {
                    Ok(()) => {
                        defmt::info!("configuration accepted after {=u64} events; flow table cleared", events);
                        tx.write(rx.buf.get(..used).unwrap_or(&[]))
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
