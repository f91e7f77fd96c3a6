//! The byte format that carries events to the firmware and decisions back
//! (over the QEMU UART or a shared-memory ring).
//!
//! ```text
//! frame:   'C' 'C' | version 1 | kind 1 | payload length 2 | payload | CRC-32C 4
//!          (big-endian; the CRC covers magic through payload)
//! kind 1   event:     now 8 | flow 4 | event tag 1 | fields (an optional RTT is a
//!                     flag byte and 4 bytes)
//! kind 2   decision:  flow 4 | window 4 | pacing bytes 4 | pacing per (ns) 4 | ecn 1 | timer tag 1 [at 8] | request tag 1 [fields]
//! kind 3   refusal:   flow 4 | error code 1
//! kind 4   config:    HPCC++: eta 4 | maxStage 1 | W_ai tag 1 (0: N 2, 1: bit/s 8) | W_min 4 |
//!                     queue signal 1 | telemetry tag 1 [probe timeout 1] |
//!                     speeds n 1 | n × Mb/s 4 | base RTTs m 1 | m × ns 4 (the reciprocals' keys)
//!                     LDCP: mtu 4 | alpha 4 | beta 4 | gamma 4 | fast start 1 | probe timeout 1
//!                     then every other algorithm's block, in the registry's order
//!                     (crate::algorithms; each block's layout is on its encode)
//!                     (replaces the engine's configuration; answered by the same frame
//!                     or a refusal of flow 0xFFFF_FFFF)
//! kind 5   halt:      empty: the sender of events has no more; the firmware stops
//! hop (34 bytes): ts 4 | tx 4 | qlen 4 | sojourn 4 | Mb/s 4 | id 4 | ts bits 1 | tx bits 1 |
//!                 tx unit 2 | util flag 1 | util 4 | reserved 1
//! ```
//!
//! Every length is checked against the frame before a field is read and
//! every tag against its list; a frame with a wrong magic, version, length
//! or CRC is refused whole, so a corrupted stream is detected, not misread.
//! A reader that lost sync skips to the next `CC` and tries again.

use crc::{Crc, CRC_32_ISCSI};

use crate::error::Error;
use crate::event::{
    Ack, Algorithm, Decision, Ecn, EcnEcho, Event, EventKind, FlowId, FlowParams, MessageEnd, Nack, NicSample, Pacing,
    PintSample, ProbeId, Request, TimerRequest,
};
use crate::path::{Balancer, Ev, Paths, Spray};
use crate::telemetry::{CounterWidths, HopSample};
use crate::units::{BaseRtt, Fraction, Instant, LinkSpeed, Seq, Window};
use crate::wire::pint::PintWidth;
use crate::wire::{be, Hops, Result, WireError, MAX_HOPS};

/// Frame magic.
pub const MAGIC: [u8; 2] = *b"CC";
/// Codec version.
pub const VERSION: u8 = 8;
/// Header bytes (magic, version, kind, length).
pub const HEADER_LEN: usize = 6;
/// Trailer bytes (CRC-32C).
pub const CRC_LEN: usize = 4;
/// Bytes per encoded hop.
pub const HOP_LEN: usize = 34;
/// Largest payload: an event with a full stack.
pub const MAX_PAYLOAD: usize = 8 + 4 + 1 + 4 + 4 + 1 + 5 + NIC_LEN + PINT_LEN + 1 + HOP_LEN * MAX_HOPS;
/// Bytes of an ACK's NIC sample: a presence byte, t1..t4, hops, level.
pub const NIC_LEN: usize = 1 + 16 + 2;
/// Bytes of an ACK's PINT code: its width (0: none, 1 or 2 bytes) and,
/// present, the code.
pub const PINT_LEN: usize = 1 + 2;
/// Largest frame.
pub const MAX_FRAME: usize = HEADER_LEN + MAX_PAYLOAD + CRC_LEN;

const CASTAGNOLI: Crc<u32> = Crc::<u32>::new(&CRC_32_ISCSI);

/// A one-byte tag of the codec: each code is written once, here, and both
/// the encoder (`as u8`) and the decoder (`from_code`) use it.
macro_rules! tags {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $code:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        #[repr(u8)]
        $vis enum $name {
            $($(#[$vmeta])* $variant = $code,)*
        }

        impl $name {
            /// The tag of a code; `UnknownType` for a code no tag has.
            fn from_code(c: u8) -> Result<Self> {
                match c {
                    $($code => Ok($name::$variant),)*
                    _ => Err(WireError::UnknownType),
                }
            }
        }
    };
}

tags! {
    /// What a frame carries.
    pub enum FrameKind {
        /// An event for the engine.
        Event = 1,
        /// The engine's decision.
        Decision = 2,
        /// The engine's refusal.
        Refusal = 3,
        /// A new engine configuration.
        Config = 4,
        /// End of the event stream (empty payload).
        Halt = 5,
    }
}

tags! {
    /// The event variant an event frame carries.
    enum EventTag {
        Start = 0,
        End = 1,
        Sent = 2,
        Ack = 3,
        Loss = 4,
        Cnp = 5,
        RttResponse = 6,
        ProbeResponse = 7,
        RxTelemetry = 8,
        ProbeRequest = 9,
        Feedback = 10,
        FlowCount = 11,
        Timer = 12,
        Nack = 13,
        Spray = 14,
    }
}

tags! {
    /// The request a decision frame carries.
    enum RequestTag {
        None = 0,
        Probe = 1,
        Feedback = 2,
        ProbeReply = 3,
        ReleaseOne = 4,
        GoBackN = 5,
    }
}

tags! {
    /// The timer request a decision frame carries.
    enum TimerTag {
        Keep = 0,
        Arm = 1,
        Cancel = 2,
    }
}

/// A checked frame: kind and payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// What it carries.
    pub kind: FrameKind,
    /// The payload.
    pub payload: &'a [u8],
    /// Bytes the frame took in the input.
    pub len: usize,
}

/// Reads one frame from the start of `buf`. `Truncated` means more bytes
/// are needed; any other error means the bytes at the start are not a
/// frame (see [`resync`]).
pub fn read_frame(buf: &[u8]) -> Result<Frame<'_>> {
    if buf.len() < HEADER_LEN {
        return Err(WireError::Truncated);
    }
    if buf[..2] != MAGIC {
        return Err(WireError::BadMagic);
    }
    if buf[2] != VERSION {
        return Err(WireError::UnknownVersion);
    }
    let kind = FrameKind::from_code(buf[3])?;
    let n = be::u16_at(buf, 4) as usize;
    if n > MAX_PAYLOAD {
        return Err(WireError::BadLength);
    }
    let total = HEADER_LEN + n + CRC_LEN;
    let frame = buf.get(..total).ok_or(WireError::Truncated)?;
    if CASTAGNOLI.checksum(&frame[..HEADER_LEN + n]) != be::u32_at(frame, HEADER_LEN + n) {
        return Err(WireError::BadChecksum);
    }
    Ok(Frame {
        kind,
        payload: &frame[HEADER_LEN..HEADER_LEN + n],
        len: total,
    })
}

/// Bytes to skip to the next possible frame start after a bad one.
pub fn resync(buf: &[u8]) -> usize {
    buf.windows(2)
        .skip(1)
        .position(|w| w == MAGIC)
        .map_or(buf.len().saturating_sub(1).max(1), |p| p + 1)
}

/// A frame builder over an output buffer.
struct Writer<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl<'a> Writer<'a> {
    fn new(out: &'a mut [u8], kind: FrameKind) -> Result<Self> {
        if out.len() < HEADER_LEN + CRC_LEN {
            return Err(WireError::BufferTooSmall);
        }
        out[..2].copy_from_slice(&MAGIC);
        out[2] = VERSION;
        out[3] = kind as u8;
        Ok(Writer { out, at: HEADER_LEN })
    }
    fn bytes(&mut self, b: &[u8]) -> Result<()> {
        let end = self.at + b.len();
        if end + CRC_LEN > self.out.len() {
            return Err(WireError::BufferTooSmall);
        }
        self.out
            .get_mut(self.at..end)
            .ok_or(WireError::BufferTooSmall)?
            .copy_from_slice(b);
        self.at = end;
        Ok(())
    }
    fn u8(&mut self, v: u8) -> Result<()> {
        self.bytes(&[v])
    }
    fn u16(&mut self, v: u16) -> Result<()> {
        self.bytes(&v.to_be_bytes())
    }
    fn u32(&mut self, v: u32) -> Result<()> {
        self.bytes(&v.to_be_bytes())
    }
    fn u64(&mut self, v: u64) -> Result<()> {
        self.bytes(&v.to_be_bytes())
    }
    fn hop(&mut self, h: &HopSample) -> Result<()> {
        for v in [h.ts, h.tx, h.qlen_bytes, h.sojourn_ns, h.bandwidth.as_mbps(), h.id] {
            self.u32(v)?;
        }
        self.u8(h.widths.ts_bits())?;
        self.u8(h.widths.tx_bits())?;
        self.u16(h.widths.tx_unit_bytes())?;
        let util = h.tx_utilization.get();
        self.u8(util.is_some() as u8)?;
        self.u32(util.map_or(0, |f| f.to_bits()))?;
        self.u8(0)
    }
    fn opt_ev(&mut self, v: Option<Ev>) -> Result<()> {
        match v {
            None => self.u8(0),
            Some(x) => {
                self.u8(1)?;
                self.u16(x.get())
            }
        }
    }

    fn opt_u32(&mut self, v: Option<u32>) -> Result<()> {
        self.u8(v.is_some() as u8)?;
        self.u32(v.unwrap_or(0))
    }
    fn hops(&mut self, hops: &[HopSample]) -> Result<()> {
        if hops.len() > MAX_HOPS {
            return Err(WireError::TooManyHops);
        }
        self.u8(hops.len() as u8)?;
        hops.iter().try_for_each(|h| self.hop(h))
    }
    fn finish(self) -> Result<usize> {
        let n = self.at - HEADER_LEN;
        self.out
            .get_mut(4..6)
            .ok_or(WireError::BufferTooSmall)?
            .copy_from_slice(&(n as u16).to_be_bytes());
        let crc = CASTAGNOLI.checksum(self.out.get(..self.at).ok_or(WireError::BufferTooSmall)?);
        let end = self.at + CRC_LEN;
        self.out
            .get_mut(self.at..end)
            .ok_or(WireError::BufferTooSmall)?
            .copy_from_slice(&crc.to_be_bytes());
        Ok(end)
    }
}

/// A bounds-checked payload reader.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let s = self.b.get(self.at..self.at + n).ok_or(WireError::Truncated)?;
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(be::u16_at(self.take(2)?, 0))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(be::u32_at(self.take(4)?, 0))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(be::u64_at(self.take(8)?, 0))
    }
    fn hop(&mut self) -> Result<HopSample> {
        let mut v = [0u32; 6];
        for x in v.iter_mut() {
            *x = self.u32()?;
        }
        let (ts_bits, tx_bits, unit) = (self.u8()?, self.u8()?, self.u16()?);
        let widths = CounterWidths::new(ts_bits, tx_bits, unit).map_err(|_| WireError::OutOfRange)?;
        let flag = self.u8()?;
        let util = self.u32()?;
        let _reserved = self.u8()?;
        let tx_utilization = match flag {
            0 => None,
            1 => Some(Fraction::from_bits(util).ok_or(WireError::BadLength)?),
            _ => return Err(WireError::UnknownType),
        };
        Ok(HopSample {
            ts: v[0],
            tx: v[1],
            qlen_bytes: v[2],
            sojourn_ns: v[3],
            bandwidth: LinkSpeed::from_mbps(v[4]),
            id: v[5],
            widths,
            tx_utilization: tx_utilization.into(),
        })
    }
    fn opt_ev(&mut self) -> Result<Option<Ev>> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(Ev::new(self.u16()?))),
            _ => Err(WireError::UnknownType),
        }
    }

    fn opt_u32(&mut self) -> Result<Option<u32>> {
        let flag = self.u8()?;
        let v = self.u32()?;
        match flag {
            0 => Ok(None),
            1 => Ok(Some(v)),
            _ => Err(WireError::UnknownType),
        }
    }
    fn hops(&mut self) -> Result<Hops> {
        let n = self.u8()? as usize;
        if n > MAX_HOPS {
            return Err(WireError::TooManyHops);
        }
        let mut hops = Hops::new();
        for _ in 0..n {
            hops.push(self.hop()?).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(hops)
    }
    fn end(&self) -> Result<()> {
        if self.at == self.b.len() {
            Ok(())
        } else {
            Err(WireError::BadLength)
        }
    }
}

fn algorithm_code(a: Algorithm) -> u8 {
    a.code()
}

fn algorithm(c: u8) -> Result<Algorithm> {
    Algorithm::from_code(c).ok_or(WireError::UnknownType)
}

/// Encodes `event` at `now` as one frame; returns its length.
pub fn encode_event(now: Instant, event: &Event<'_>, out: &mut [u8]) -> Result<usize> {
    let mut w = Writer::new(out, FrameKind::Event)?;
    w.u64(now.as_nanos())?;
    w.u32(event.flow.0)?;
    match event.kind {
        EventKind::Start(p) => {
            w.u8(EventTag::Start as u8)?;
            w.u8(algorithm_code(p.algorithm))?;
            w.u32(p.base_rtt.as_nanos())?;
            w.u32(p.line_rate.as_mbps())?;
            w.u32(p.start_seq.0)?;
        }
        EventKind::End => w.u8(EventTag::End as u8)?,
        EventKind::Sent { seq, len, end } => {
            w.u8(EventTag::Sent as u8)?;
            w.u32(seq.0)?;
            w.u32(len)?;
            w.u8((end == MessageEnd::Last) as u8)?;
        }
        EventKind::Ack(a) => {
            w.u8(EventTag::Ack as u8)?;
            w.u32(a.cum_ack.0)?;
            w.u32(a.snd_nxt.0)?;
            w.u8((a.ece == EcnEcho::Marked) as u8)?;
            w.opt_u32(a.rtt_ns)?;
            match a.nic {
                None => w.u8(0)?,
                Some(n) => {
                    w.u8(1)?;
                    for t in [n.t1, n.t2, n.t3, n.t4] {
                        w.u32(t)?;
                    }
                    w.u8(n.forward_hops)?;
                    w.u8(n.rx_buffer_level)?;
                }
            }
            match a.pint {
                None => w.u8(0)?,
                Some(p) => {
                    w.u8(match p.width {
                        PintWidth::One => 1,
                        PintWidth::Two => 2,
                    })?;
                    w.u16(p.code)?;
                }
            }
            w.hops(a.telemetry)?;
            w.opt_ev(a.ev)?;
        }
        EventKind::Loss { first_lost, ev } => {
            w.u8(EventTag::Loss as u8)?;
            w.u32(first_lost.0)?;
            w.opt_ev(ev)?;
        }
        EventKind::Nack(n) => {
            w.u8(EventTag::Nack as u8)?;
            w.u32(n.seq.0)?;
            w.u32(n.len)?;
            w.u32(n.cum_ack.0)?;
            w.u32(n.snd_nxt.0)?;
            w.opt_u32(n.rtt_ns)?;
            w.u8(n.last_hop as u8)?;
            w.u8((n.ece == EcnEcho::Marked) as u8)?;
            w.opt_ev(n.ev)?;
        }
        EventKind::Cnp => w.u8(EventTag::Cnp as u8)?,
        EventKind::RttResponse { probe, rtt_ns } => {
            w.u8(EventTag::RttResponse as u8)?;
            w.u8(probe.0)?;
            w.opt_u32(rtt_ns)?;
        }
        EventKind::ProbeResponse { probe, hop_index, hop } => {
            w.u8(EventTag::ProbeResponse as u8)?;
            w.u8(probe.0)?;
            w.u8(hop_index)?;
            w.hop(&hop)?;
        }
        EventKind::RxTelemetry { telemetry } => {
            w.u8(EventTag::RxTelemetry as u8)?;
            w.hops(telemetry)?;
        }
        EventKind::ProbeRequest { telemetry } => {
            w.u8(EventTag::ProbeRequest as u8)?;
            w.hops(telemetry)?;
        }
        EventKind::Feedback { window } => {
            w.u8(EventTag::Feedback as u8)?;
            w.u32(window.to_bits())?;
        }
        EventKind::FlowCount { flows } => {
            w.u8(EventTag::FlowCount as u8)?;
            w.u16(flows)?;
        }
        EventKind::Timer => w.u8(EventTag::Timer as u8)?,
        EventKind::Spray(s) => {
            w.u8(EventTag::Spray as u8)?;
            w.u16(s.paths.get())?;
            w.u8(s.balancer as u8)?;
            w.u32(s.seed)?;
        }
    }
    w.finish()
}

/// A decoded event that owns its telemetry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventBuf {
    /// When it happened.
    pub now: Instant,
    flow: FlowId,
    kind: EventKind<'static>,
    hops: Hops,
}

impl EventBuf {
    /// The event, borrowing the telemetry.
    pub fn event(&self) -> Event<'_> {
        let t: &[HopSample] = &self.hops;
        let kind = match self.kind {
            EventKind::Ack(a) => EventKind::Ack(Ack { telemetry: t, ..a }),
            EventKind::RxTelemetry { .. } => EventKind::RxTelemetry { telemetry: t },
            EventKind::ProbeRequest { .. } => EventKind::ProbeRequest { telemetry: t },
            other => other,
        };
        Event { flow: self.flow, kind }
    }
}

/// Decodes an event frame's payload.
pub fn decode_event(frame: &Frame<'_>) -> Result<EventBuf> {
    if frame.kind != FrameKind::Event {
        return Err(WireError::UnknownType);
    }
    let mut r = Reader {
        b: frame.payload,
        at: 0,
    };
    let now = Instant::from_nanos(r.u64()?);
    let flow = FlowId(r.u32()?);
    let mut hops = Hops::new();
    let kind = match EventTag::from_code(r.u8()?)? {
        EventTag::Start => {
            let algorithm = algorithm(r.u8()?)?;
            let base_rtt = BaseRtt::from_nanos(r.u32()?).ok_or(WireError::BadLength)?;
            let line_rate = LinkSpeed::from_mbps(r.u32()?);
            EventKind::Start(FlowParams {
                algorithm,
                base_rtt,
                line_rate,
                start_seq: Seq(r.u32()?),
            })
        }
        EventTag::End => EventKind::End,
        EventTag::Sent => {
            let seq = Seq(r.u32()?);
            let len = r.u32()?;
            let end = match r.u8()? {
                0 => MessageEnd::More,
                1 => MessageEnd::Last,
                _ => return Err(WireError::UnknownType),
            };
            EventKind::Sent { seq, len, end }
        }
        EventTag::Ack => {
            let cum_ack = Seq(r.u32()?);
            let snd_nxt = Seq(r.u32()?);
            let ece = match r.u8()? {
                0 => EcnEcho::NotMarked,
                1 => EcnEcho::Marked,
                _ => return Err(WireError::UnknownType),
            };
            let rtt_ns = r.opt_u32()?;
            let nic = match r.u8()? {
                0 => None,
                1 => Some(NicSample {
                    t1: r.u32()?,
                    t2: r.u32()?,
                    t3: r.u32()?,
                    t4: r.u32()?,
                    forward_hops: r.u8()?,
                    rx_buffer_level: r.u8()?,
                }),
                _ => return Err(WireError::UnknownType),
            };
            let width = match r.u8()? {
                0 => None,
                1 => Some(PintWidth::One),
                2 => Some(PintWidth::Two),
                _ => return Err(WireError::UnknownType),
            };
            let pint = match width {
                None => None,
                Some(width) => Some(PintSample { width, code: r.u16()? }),
            };
            hops = r.hops()?;
            EventKind::Ack(Ack {
                ece,
                rtt_ns,
                nic,
                pint,
                ev: r.opt_ev()?,
                ..Ack::new(cum_ack, snd_nxt)
            })
        }
        EventTag::Loss => EventKind::Loss {
            first_lost: Seq(r.u32()?),
            ev: r.opt_ev()?,
        },
        EventTag::Nack => {
            let seq = Seq(r.u32()?);
            let len = r.u32()?;
            let cum_ack = Seq(r.u32()?);
            let snd_nxt = Seq(r.u32()?);
            let rtt_ns = r.opt_u32()?;
            let flag = |v: u8| match v {
                0 => Ok(false),
                1 => Ok(true),
                _ => Err(WireError::UnknownType),
            };
            let last_hop = flag(r.u8()?)?;
            let ece = if flag(r.u8()?)? {
                EcnEcho::Marked
            } else {
                EcnEcho::NotMarked
            };
            EventKind::Nack(Nack {
                rtt_ns,
                last_hop,
                ece,
                ev: r.opt_ev()?,
                ..Nack::new(seq, len, cum_ack, snd_nxt)
            })
        }
        EventTag::Cnp => EventKind::Cnp,
        EventTag::RttResponse => {
            let probe = ProbeId(r.u8()?);
            EventKind::RttResponse {
                probe,
                rtt_ns: r.opt_u32()?,
            }
        }
        EventTag::ProbeResponse => {
            let probe = ProbeId(r.u8()?);
            let hop_index = r.u8()?;
            EventKind::ProbeResponse {
                probe,
                hop_index,
                hop: r.hop()?,
            }
        }
        EventTag::RxTelemetry => {
            hops = r.hops()?;
            EventKind::RxTelemetry { telemetry: &[] }
        }
        EventTag::ProbeRequest => {
            hops = r.hops()?;
            EventKind::ProbeRequest { telemetry: &[] }
        }
        EventTag::Feedback => EventKind::Feedback {
            window: Window::from_bits(r.u32()?),
        },
        EventTag::FlowCount => EventKind::FlowCount { flows: r.u16()? },
        EventTag::Timer => EventKind::Timer,
        EventTag::Spray => {
            let paths = Paths::new(r.u16()?).ok_or(WireError::BadLength)?;
            let balancer = Balancer::from_code(r.u8()?).ok_or(WireError::UnknownType)?;
            EventKind::Spray(Spray {
                paths,
                balancer,
                seed: r.u32()?,
            })
        }
    };
    r.end()?;
    Ok(EventBuf { now, flow, kind, hops })
}

/// Encodes the engine's answer for `flow`: a decision or a refusal.
pub fn encode_answer(flow: FlowId, answer: &core::result::Result<Decision, Error>, out: &mut [u8]) -> Result<usize> {
    let d = match answer {
        Err(e) => {
            let mut w = Writer::new(out, FrameKind::Refusal)?;
            w.u32(flow.0)?;
            w.u8(Error::ALL.iter().position(|x| x == e).unwrap_or(0) as u8)?;
            return w.finish();
        }
        Ok(d) => d,
    };
    let mut w = Writer::new(out, FrameKind::Decision)?;
    w.u32(flow.0)?;
    w.u32(d.window.to_bits())?;
    w.u32(d.pacing.bytes.to_bits())?;
    w.u32(d.pacing.per.as_nanos())?;
    w.u8((d.ecn == Ecn::Ect) as u8)?;
    match d.timer {
        TimerRequest::Keep => w.u8(TimerTag::Keep as u8)?,
        TimerRequest::Arm(t) => {
            w.u8(TimerTag::Arm as u8)?;
            w.u64(t.as_nanos())?;
        }
        TimerRequest::Cancel => w.u8(TimerTag::Cancel as u8)?,
    }
    match d.request {
        Request::None => w.u8(RequestTag::None as u8)?,
        Request::Probe { id } => {
            w.u8(RequestTag::Probe as u8)?;
            w.u8(id.0)?;
        }
        Request::Feedback { window } => {
            w.u8(RequestTag::Feedback as u8)?;
            w.u32(window.to_bits())?;
        }
        Request::ProbeReply { hop_index } => {
            w.u8(RequestTag::ProbeReply as u8)?;
            w.u8(hop_index)?;
        }
        Request::ReleaseOne => w.u8(RequestTag::ReleaseOne as u8)?,
        Request::GoBackN { from } => {
            w.u8(RequestTag::GoBackN as u8)?;
            w.u32(from.0)?;
        }
    }
    w.opt_ev(d.ev)?;
    w.finish()
}

/// Decodes a decision or refusal frame.
pub fn decode_answer(frame: &Frame<'_>) -> Result<(FlowId, core::result::Result<Decision, Error>)> {
    let mut r = Reader {
        b: frame.payload,
        at: 0,
    };
    let flow = FlowId(r.u32()?);
    let answer = match frame.kind {
        FrameKind::Refusal => Err(*Error::ALL.get(r.u8()? as usize).ok_or(WireError::UnknownType)?),
        FrameKind::Decision => {
            let window = Window::from_bits(r.u32()?);
            let pacing = Pacing {
                bytes: Window::from_bits(r.u32()?),
                per: BaseRtt::from_nanos(r.u32()?).ok_or(WireError::BadLength)?,
            };
            let ecn = match r.u8()? {
                0 => Ecn::NotEct,
                1 => Ecn::Ect,
                _ => return Err(WireError::UnknownType),
            };
            let timer = match TimerTag::from_code(r.u8()?)? {
                TimerTag::Keep => TimerRequest::Keep,
                TimerTag::Arm => TimerRequest::Arm(Instant::from_nanos(r.u64()?)),
                TimerTag::Cancel => TimerRequest::Cancel,
            };
            let request = match RequestTag::from_code(r.u8()?)? {
                RequestTag::None => Request::None,
                RequestTag::Probe => Request::Probe { id: ProbeId(r.u8()?) },
                RequestTag::Feedback => Request::Feedback {
                    window: Window::from_bits(r.u32()?),
                },
                RequestTag::ProbeReply => Request::ProbeReply { hop_index: r.u8()? },
                RequestTag::ReleaseOne => Request::ReleaseOne,
                RequestTag::GoBackN => Request::GoBackN { from: Seq(r.u32()?) },
            };
            Ok(Decision {
                window,
                pacing,
                ecn,
                timer,
                request,
                ev: r.opt_ev()?,
            })
        }
        FrameKind::Event | FrameKind::Config | FrameKind::Halt => return Err(WireError::UnknownType),
    };
    r.end()?;
    Ok((flow, answer))
}

/// The flow a refused configuration frame is answered for.
pub const CONFIG_FLOW: FlowId = FlowId(u32::MAX);

/// What a configuration frame carries, block after block: the engine's
/// [`crate::algorithms::AnyConfig`] (each algorithm's block in the
/// registry's order, [`crate::controller::AlgorithmConfig::encode`]).
pub trait FrameConfig: Sized {
    /// Writes every block.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> Result<()>;
    /// Reads what [`FrameConfig::encode`] wrote.
    fn decode(r: &mut ConfigReader<'_, '_>) -> Result<Self>;
}

/// Encodes an engine configuration as one frame; returns its length.
pub fn encode_config<C: FrameConfig>(cfg: &C, out: &mut [u8]) -> Result<usize> {
    let mut w = Writer::new(out, FrameKind::Config)?;
    cfg.encode(&mut ConfigWriter(&mut w))?;
    w.finish()
}

/// Encodes the end-of-stream frame; returns its length.
pub fn encode_halt(out: &mut [u8]) -> Result<usize> {
    Writer::new(out, FrameKind::Halt)?.finish()
}

/// Decodes a configuration frame. The values are only decoded, not
/// validated: the engine's constructor checks their ranges.
pub fn decode_config<C: FrameConfig>(frame: &Frame<'_>) -> Result<C> {
    if frame.kind != FrameKind::Config {
        return Err(WireError::UnknownType);
    }
    let mut r = Reader {
        b: frame.payload,
        at: 0,
    };
    let cfg = C::decode(&mut ConfigReader(&mut r))?;
    r.end()?;
    Ok(cfg)
}

/// Where an algorithm writes its block of a configuration frame
/// ([`crate::controller::AlgorithmConfig::encode`]): big-endian integers.
pub struct ConfigWriter<'w, 'b>(&'w mut Writer<'b>);

impl ConfigWriter<'_, '_> {
    /// One byte.
    pub fn u8(&mut self, v: u8) -> Result<()> {
        self.0.u8(v)
    }
    /// Two bytes.
    pub fn u16(&mut self, v: u16) -> Result<()> {
        self.0.u16(v)
    }
    /// A 32-bit value as 1 to 5 bytes, seven bits each, low first, the
    /// top bit set on every byte but the last (LEB128, the shortest form):
    /// the small values most parameters hold take fewer than four, so the
    /// configuration frame of every algorithm fits the largest frame.
    pub fn u32(&mut self, v: u32) -> Result<()> {
        let mut v = v;
        while v >= 0x80 {
            self.0.u8(v as u8 | 0x80)?;
            v >>= 7;
        }
        self.0.u8(v as u8)
    }
    /// Eight bytes.
    pub fn u64(&mut self, v: u64) -> Result<()> {
        self.0.u64(v)
    }
    /// A flag byte, 0 or 1.
    pub fn bool(&mut self, v: bool) -> Result<()> {
        self.0.u8(v as u8)
    }
}

/// Where an algorithm reads its block of a configuration frame back
/// ([`crate::controller::AlgorithmConfig::decode`]); every read is
/// bounds-checked (`Truncated` past the payload's end).
pub struct ConfigReader<'r, 'b>(&'r mut Reader<'b>);

impl ConfigReader<'_, '_> {
    /// One byte.
    pub fn u8(&mut self) -> Result<u8> {
        self.0.u8()
    }
    /// Two bytes.
    pub fn u16(&mut self) -> Result<u16> {
        self.0.u16()
    }
    /// A 32-bit value as [`ConfigWriter::u32`] writes it. A form longer
    /// than the shortest (a last byte of 0 after the first) or a value
    /// past 32 bits is `BadLength`: each value has one encoding.
    pub fn u32(&mut self) -> Result<u32> {
        let mut v = 0u32;
        for i in 0..5u32 {
            let b = self.0.u8()?;
            let bits = (b & 0x7F) as u32;
            if i == 4 && bits > 0x0F {
                return Err(WireError::BadLength);
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                if b == 0 && i > 0 {
                    return Err(WireError::BadLength);
                }
                return Ok(v);
            }
        }
        Err(WireError::BadLength)
    }
    /// Eight bytes.
    pub fn u64(&mut self) -> Result<u64> {
        self.0.u64()
    }
    /// A flag byte: 0 or 1, anything else `UnknownType`.
    pub fn bool(&mut self) -> Result<bool> {
        match self.0.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(WireError::UnknownType),
        }
    }
    /// A [`Fraction`]'s bits; above one is `BadLength`, as every
    /// fraction of the codec.
    pub fn fraction(&mut self) -> Result<Fraction> {
        Fraction::from_bits(self.u32()?).ok_or(WireError::BadLength)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithms::AnyConfig;
    use crate::dcqcn::DcqcnConfig;
    use crate::hpcc::{HpccConfig, QueueSignal, Reciprocals, TelemetrySource};
    use crate::ldcp::FastStart;

    fn hop(k: u32) -> HopSample {
        HopSample {
            ts: k,
            tx: 2 * k,
            qlen_bytes: 3 * k,
            sojourn_ns: 4 * k,
            bandwidth: LinkSpeed::from_gbps(100),
            id: 5 * k,
            widths: CounterWidths::new(24, 20, 64).unwrap(),
            tx_utilization: if k.is_multiple_of(2) {
                None
            } else {
                Fraction::ratio(k, 10)
            }
            .into(),
        }
    }

    fn events(hops: &[HopSample]) -> [EventKind<'_>; 19] {
        let params = FlowParams {
            algorithm: Algorithm::LdcpRate,
            base_rtt: BaseRtt::from_nanos(12_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(400),
            start_seq: Seq(77),
        };
        [
            EventKind::Start(params),
            EventKind::End,
            EventKind::Sent {
                seq: Seq(1),
                len: 1000,
                end: MessageEnd::Last,
            },
            EventKind::Ack(Ack {
                ece: EcnEcho::Marked,
                telemetry: hops,
                rtt_ns: Some(4321),
                pint: Some(PintSample {
                    width: PintWidth::One,
                    code: 200,
                }),
                ..Ack::new(Seq(5), Seq(9))
            }),
            // The NICs' sample, t1 and t4 across the sender counter's wrap.
            EventKind::Ack(Ack {
                pint: Some(PintSample {
                    width: PintWidth::Two,
                    code: 1254,
                }),
                nic: Some(NicSample {
                    t1: u32::MAX - 10,
                    t2: 5,
                    t3: 7,
                    t4: 3_000,
                    forward_hops: 3,
                    rx_buffer_level: 31,
                }),
                ev: Some(Ev::new(0xFFFF)),
                ..Ack::new(Seq(6), Seq(9))
            }),
            EventKind::Loss {
                first_lost: Seq(3),
                ev: None,
            },
            EventKind::Loss {
                first_lost: Seq(4),
                ev: Some(Ev::new(0)),
            },
            EventKind::Spray(Spray {
                paths: Paths::new(256).unwrap(),
                balancer: Balancer::Mixed,
                seed: u32::MAX,
            }),
            EventKind::Spray(Spray {
                paths: Paths::new(2).unwrap(),
                balancer: Balancer::Oblivious,
                seed: 0,
            }),
            EventKind::Nack(Nack::new(Seq(4_150), 4_150, Seq(2_000), Seq(9_000))),
            EventKind::Nack(Nack {
                rtt_ns: Some(12_345),
                last_hop: true,
                ece: EcnEcho::Marked,
                ev: Some(Ev::new(77)),
                ..Nack::new(Seq(u32::MAX), 64, Seq(1), Seq(u32::MAX))
            }),
            EventKind::Cnp,
            EventKind::RttResponse {
                probe: ProbeId(7),
                rtt_ns: Some(8_000),
            },
            EventKind::ProbeResponse {
                probe: ProbeId(200),
                hop_index: 2,
                hop: hops[1],
            },
            EventKind::RxTelemetry { telemetry: hops },
            EventKind::ProbeRequest { telemetry: &hops[..1] },
            EventKind::Feedback {
                window: Window::from_bits(12345),
            },
            EventKind::FlowCount { flows: 17 },
            EventKind::Timer,
        ]
    }

    /// A configuration's 32-bit values go as their shortest LEB128 form:
    /// every boundary value comes back; a longer form of a value, or one
    /// past 32 bits, is `BadLength`.
    #[test]
    fn config_values_have_one_short_encoding() {
        let read = |bytes: &[u8]| {
            let mut r = Reader { b: bytes, at: 0 };
            let v = ConfigReader(&mut r).u32();
            v.and_then(|v| r.end().map(|_| v))
        };
        for v in [
            0u32,
            1,
            0x7F,
            0x80,
            0x3FFF,
            0x4000,
            1 << 21,
            (1 << 28) - 1,
            1 << 28,
            u32::MAX,
        ] {
            let mut buf = [0u8; 32];
            let mut w = Writer::new(&mut buf, FrameKind::Config).unwrap();
            ConfigWriter(&mut w).u32(v).unwrap();
            let n = w.finish().unwrap();
            let f = read_frame(&buf[..n]).unwrap();
            let want = 1 + (32 - v.leading_zeros()).saturating_sub(1) as usize / 7;
            assert_eq!(f.payload.len(), want, "{v}");
            assert_eq!(read(f.payload), Ok(v));
        }
        assert_eq!(read(&[0x80, 0x00]), Err(WireError::BadLength));
        assert_eq!(read(&[0xFF, 0xFF, 0xFF, 0xFF, 0x1F]), Err(WireError::BadLength));
        assert_eq!(read(&[0xFF, 0xFF, 0xFF, 0xFF, 0x8F, 0x01]), Err(WireError::BadLength));
        assert_eq!(read(&[0x80]), Err(WireError::Truncated));
        // Every algorithm's defaults fit one frame.
        let mut buf = [0u8; MAX_FRAME];
        assert!(encode_config(&AnyConfig::DEFAULT, &mut buf).is_ok());
    }

    #[test]
    fn config_round_trips() {
        let mut buf = [0u8; MAX_FRAME];
        let mut a = AnyConfig::DEFAULT;
        let mut b = AnyConfig {
            hpcc: HpccConfig::sigcomm19(),
            ..AnyConfig::DEFAULT
        };
        a.hpcc.telemetry = TelemetrySource::Probe { timeout_rtts: 3 };
        a.hpcc.queue_signal = QueueSignal::Sojourn;
        b.ldcp.fast_start = FastStart::Disabled;
        b.ldcp.gamma = Fraction::ratio(1, 16).unwrap();
        b.dctcp.g = Fraction::ratio(1, 8).unwrap();
        b.dctcp.w_min = Window::from_bytes(64);
        b.dcqcn = DcqcnConfig::paper();
        b.dcqcn.clamp_target = true;
        for cfg in [a, b] {
            let n = encode_config(&cfg, &mut buf).unwrap();
            let f = read_frame(&buf[..n]).unwrap();
            assert_eq!(f.kind, FrameKind::Config);
            assert_eq!(decode_config::<AnyConfig>(&f).unwrap(), cfg);
            // Every truncation of the payload is refused, none misread.
            for cut in 0..f.payload.len() {
                let short = Frame {
                    kind: FrameKind::Config,
                    payload: &f.payload[..cut],
                    len: 0,
                };
                assert_eq!(decode_config::<AnyConfig>(&short), Err(WireError::Truncated));
            }
        }
        // An answer decoder refuses a config frame and vice versa.
        let n = encode_config(&a, &mut buf).unwrap();
        assert!(decode_answer(&read_frame(&buf[..n]).unwrap()).is_err());
        let n = encode_answer(FlowId(1), &Err(Error::UnknownFlow), &mut buf).unwrap();
        assert_eq!(
            decode_config::<AnyConfig>(&read_frame(&buf[..n]).unwrap()),
            Err(WireError::UnknownType)
        );
    }

    /// HPCC++'s reciprocal table holds its keys in slots whose order hangs
    /// on the order they were added; the frame lists them ascending, so one
    /// table has one encoding, and a frame listing them in another order
    /// decodes to the same table, which re-encodes ascending.
    #[test]
    fn a_reciprocal_table_has_one_encoding() {
        let speeds = [800_000u32, 1_600_000, 200_000, 100_000, 400_000, 25_000, 50_000];
        let table = |order: &mut dyn Iterator<Item = u32>| {
            let mut r = Reciprocals::new(&[], &[]).unwrap();
            for s in order {
                r.add_speed(LinkSpeed::from_mbps(s)).unwrap();
            }
            AnyConfig {
                hpcc: HpccConfig {
                    reciprocals: r,
                    ..HpccConfig::draft_default()
                },
                ..AnyConfig::DEFAULT
            }
        };
        let (mut a, mut b) = ([0u8; MAX_FRAME], [0u8; MAX_FRAME]);
        let forward = table(&mut speeds.iter().copied());
        let backward = table(&mut speeds.iter().rev().copied());
        let n = encode_config(&forward, &mut a).unwrap();
        let m = encode_config(&backward, &mut b).unwrap();
        assert_eq!(&a[..n], &b[..m]);
        let decoded: AnyConfig = decode_config(&read_frame(&a[..n]).unwrap()).unwrap();
        let mut listed = [0u32; 7];
        assert_eq!(decoded.hpcc.reciprocals.speeds().count(), 7);
        for (slot, s) in listed.iter_mut().zip(decoded.hpcc.reciprocals.speeds()) {
            *slot = s.as_mbps();
        }
        listed.sort_unstable();
        let mut want = speeds;
        want.sort_unstable();
        assert_eq!(listed, want);
        let k = encode_config(&decoded, &mut b).unwrap();
        assert_eq!(&a[..n], &b[..k]);
    }

    #[test]
    fn every_event_round_trips() {
        let hops: [HopSample; 3] = [hop(1), hop(2), hop(3)];
        for kind in events(&hops) {
            let ev = Event { flow: FlowId(42), kind };
            let mut buf = [0u8; MAX_FRAME];
            let n = encode_event(Instant::from_nanos(99), &ev, &mut buf).unwrap();
            let f = read_frame(&buf[..n]).unwrap();
            assert_eq!(f.len, n);
            let d = decode_event(&f).unwrap();
            assert_eq!(d.now, Instant::from_nanos(99));
            assert_eq!(d.event(), ev);
        }
    }

    #[test]
    fn every_answer_round_trips() {
        let mut answers = heapless::Vec::<core::result::Result<Decision, Error>, 16>::new();
        for (timer, request) in [
            (TimerRequest::Keep, Request::None),
            (
                TimerRequest::Arm(Instant::from_nanos(5)),
                Request::Probe { id: ProbeId(9) },
            ),
            (
                TimerRequest::Cancel,
                Request::Feedback {
                    window: Window::from_bytes(3),
                },
            ),
            (TimerRequest::Keep, Request::ProbeReply { hop_index: 4 }),
            (TimerRequest::Keep, Request::ReleaseOne),
            (TimerRequest::Keep, Request::GoBackN { from: Seq(8) }),
        ] {
            let ev = match request {
                Request::None => Some(Ev::new(0x1234)),
                _ => None,
            };
            let d = Decision {
                window: Window::from_bytes(1500),
                pacing: Pacing {
                    bytes: Window::from_bytes(1 << 20),
                    per: BaseRtt::from_nanos(BaseRtt::MAX_NS).unwrap(),
                },
                ecn: Ecn::NotEct,
                timer,
                request,
                ev,
            };
            answers.push(Ok(d)).unwrap();
        }
        for e in Error::ALL {
            answers.push(Err(e)).unwrap();
        }
        for a in answers {
            let mut buf = [0u8; 64];
            let n = encode_answer(FlowId(3), &a, &mut buf).unwrap();
            let f = read_frame(&buf[..n]).unwrap();
            assert_eq!(decode_answer(&f).unwrap(), (FlowId(3), a));
        }
    }

    /// A frame whose hop carries a counter width the engine cannot use (0 or
    /// above 32 bits) is refused by name, as `CounterWidths::new` refuses it.
    #[test]
    fn unusable_counter_widths_are_out_of_range() {
        let hops = [hop(2)];
        let ev = Event {
            flow: FlowId(1),
            kind: EventKind::RxTelemetry { telemetry: &hops },
        };
        let mut buf = [0u8; MAX_FRAME];
        let n = encode_event(Instant::ZERO, &ev, &mut buf).unwrap();
        // The hop's widths: ts_bits 24, tx_bits 20, unit 64 (big-endian).
        let at = buf[..n].windows(4).position(|w| w == [24, 20, 0, 64]).unwrap();
        for (offset, bad) in [(0, 0u8), (0, 33), (1, 0), (1, 40)] {
            let mut t = buf;
            t[at + offset] = bad;
            // Seal the altered payload again: a fresh checksum over it.
            let crc = CASTAGNOLI.checksum(&t[..n - CRC_LEN]);
            t[n - CRC_LEN..n].copy_from_slice(&crc.to_be_bytes());
            let f = read_frame(&t[..n]).unwrap();
            assert_eq!(
                decode_event(&f).map(|_| ()),
                Err(WireError::OutOfRange),
                "byte {offset} = {bad}"
            );
        }
    }

    /// Every single-bit flip in a frame is caught (CRC-32C catches all).
    #[test]
    fn corruption_is_detected_not_misread() {
        let hops = [hop(1), hop(2)];
        let ev = Event {
            flow: FlowId(1),
            kind: EventKind::RxTelemetry { telemetry: &hops },
        };
        let mut buf = [0u8; MAX_FRAME];
        let n = encode_event(Instant::ZERO, &ev, &mut buf).unwrap();
        for bit in 0..n * 8 {
            let mut t = buf;
            t[bit / 8] ^= 1 << (bit % 8);
            assert!(read_frame(&t[..n]).is_err(), "bit {bit} flipped unnoticed");
        }
        assert_eq!(read_frame(&buf[..n - 1]), Err(WireError::Truncated));
    }

    #[test]
    fn a_reader_resyncs_after_garbage() {
        let mut stream = [0u8; 2 * MAX_FRAME];
        stream[..5].copy_from_slice(b"xxCxC");
        let n = encode_event(
            Instant::ZERO,
            &Event {
                flow: FlowId(9),
                kind: EventKind::Timer,
            },
            &mut stream[5..],
        )
        .unwrap();
        let mut at = 0;
        let mut seen = 0;
        while at < 5 + n {
            match read_frame(&stream[at..5 + n]) {
                Ok(f) => {
                    assert_eq!(decode_event(&f).unwrap().event().flow, FlowId(9));
                    at += f.len;
                    seen += 1;
                }
                Err(_) => at += resync(&stream[at..5 + n]),
            }
        }
        assert_eq!(seen, 1);
    }

    #[test]
    fn oversized_and_undersized_inputs_are_errors() {
        let mut buf = [0u8; 8];
        assert_eq!(
            encode_event(
                Instant::ZERO,
                &Event {
                    flow: FlowId(1),
                    kind: EventKind::Timer
                },
                &mut buf
            ),
            Err(WireError::BufferTooSmall)
        );
        let nine = [hop(1); 9];
        let mut big = [0u8; 2 * MAX_FRAME];
        let ev = Event {
            flow: FlowId(1),
            kind: EventKind::RxTelemetry { telemetry: &nine },
        };
        assert_eq!(encode_event(Instant::ZERO, &ev, &mut big), Err(WireError::TooManyHops));
        let mut hdr = [b'C', b'C', VERSION, 1, 0xFF, 0xFF, 0, 0, 0, 0];
        assert_eq!(read_frame(&hdr), Err(WireError::BadLength));
        hdr[2] = 9;
        assert_eq!(read_frame(&hdr), Err(WireError::UnknownVersion));
        // Bytes that are not a frame at all say so, apart from a bad length.
        hdr[..2].copy_from_slice(b"XY");
        assert_eq!(read_frame(&hdr), Err(WireError::BadMagic));
        // Every code of every tag decodes to itself; the next code is unknown.
        for k in [
            FrameKind::Event,
            FrameKind::Decision,
            FrameKind::Refusal,
            FrameKind::Config,
            FrameKind::Halt,
        ] {
            assert_eq!(FrameKind::from_code(k as u8), Ok(k));
        }
        assert_eq!(FrameKind::from_code(6), Err(WireError::UnknownType));
        assert_eq!(
            EventTag::from_code(EventTag::Spray as u8 + 1),
            Err(WireError::UnknownType)
        );
        assert_eq!(
            RequestTag::from_code(RequestTag::GoBackN as u8 + 1),
            Err(WireError::UnknownType)
        );
    }
}
