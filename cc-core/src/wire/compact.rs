//! The compact HPCC hop stack: what a switch appends per hop when telemetry
//! must be small (the SIGCOMM'19 HPCC prototype's 8-byte hop record).
//!
//! ```text
//!  0       1       2                                     2+8n
//! +-------+-------+----------- hop 0 (8 bytes) --- ... ---+
//! | ver|0 | nhops |  hop record, first hop first           |
//! +-------+-------+----------------------------------------+
//!
//! hop record, one big-endian 64-bit word:
//!  63   61 60                 37 36              17 16             0
//! +-------+---------------------+------------------+---------------+
//! | speed |  ts (24 bits, ns)   | tx (20 bits)     | qlen (17 bits)|
//! +-------+---------------------+------------------+---------------+
//! ```
//!
//! `ver` (high nibble of byte 0) is 1; the low nibble is reserved: written
//! as 0, ignored on receipt. Speed codes 0..=6 are 25, 50, 100, 200, 400,
//! 800 Gb/s and 1.6 Tb/s; 7 is reserved (a stack that uses it has no link
//! speed and is refused, `UnknownType`). `tx` and `qlen` count units the
//! profile gives ([`CompactUnits`]). Bytes after the last hop belong to
//! whatever follows.

use core::num::NonZeroU16;

use bitfield_struct::bitfield;

use super::{be, Hops, Result, WireError, MAX_HOPS};
use crate::telemetry::{CounterWidths, HopSample};
use crate::units::LinkSpeed;

/// The compact stack's counters: 24-bit ns timestamps, 20-bit transmitted
/// bytes (in units the deployment sets, [`CompactUnits`]).
const COMPACT_WIDTHS: CounterWidths = match CounterWidths::new(24, 20, 1) {
    Ok(w) => w,
    Err(_) => panic!("24- and 20-bit counters are valid widths"),
};

/// Header bytes before the first hop.
pub const HEADER_LEN: usize = 2;
/// Bytes per hop.
pub const HOP_LEN: usize = 8;
/// The version this code speaks.
pub const VERSION: u8 = 1;

/// A hop record's bit fields, least significant first.
#[bitfield(u64)]
struct Record {
    #[bits(17)]
    qlen: u32,
    #[bits(20)]
    tx: u32,
    #[bits(24)]
    ts: u32,
    #[bits(3)]
    speed: u8,
}

/// A link-speed code of the compact record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum SpeedCode {
    /// 25 Gb/s.
    G25,
    /// 50 Gb/s.
    G50,
    /// 100 Gb/s.
    G100,
    /// 200 Gb/s.
    G200,
    /// 400 Gb/s.
    G400,
    /// 800 Gb/s.
    G800,
    /// 1.6 Tb/s.
    T1_6,
}

impl SpeedCode {
    const ALL: [SpeedCode; 7] = [
        SpeedCode::G25,
        SpeedCode::G50,
        SpeedCode::G100,
        SpeedCode::G200,
        SpeedCode::G400,
        SpeedCode::G800,
        SpeedCode::T1_6,
    ];

    /// The code for a 3-bit value; 7 is reserved.
    pub fn from_bits(v: u8) -> Result<Self> {
        Self::ALL.get(v as usize).copied().ok_or(WireError::UnknownType)
    }

    /// The 3-bit value.
    pub fn into_bits(self) -> u8 {
        self as u8
    }

    /// The link speed.
    pub fn speed(self) -> LinkSpeed {
        LinkSpeed::from_gbps(25 << self.into_bits())
    }

    /// The code for an exact speed.
    pub fn from_speed(s: LinkSpeed) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.speed() == s)
    }
}

/// Units of the two counters, set per deployment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CompactUnits {
    /// Bytes per `tx` unit (the SIGCOMM'19 prototype used 128).
    pub tx_unit_bytes: u16,
    /// Bytes per `qlen` unit (the SIGCOMM'19 prototype used 80).
    pub qlen_unit_bytes: u32,
}

/// A view over a compact hop stack.
#[derive(Debug, Clone)]
pub struct CompactStack<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CompactStack<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        CompactStack { buffer }
    }

    /// Wraps a buffer after [`Self::check_len`].
    pub fn new_checked(buffer: T) -> Result<Self> {
        let s = Self::new_unchecked(buffer);
        s.check_len()?;
        Ok(s)
    }

    /// Checks the header, the version, the hop count and that every hop is
    /// in the buffer, in that order.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != VERSION {
            return Err(WireError::UnknownVersion);
        }
        if self.hop_count() as usize > MAX_HOPS {
            return Err(WireError::TooManyHops);
        }
        if b.len() < self.total_len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// The version nibble.
    pub fn version(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 0) >> 4
    }

    /// The hop count.
    pub fn hop_count(&self) -> u8 {
        be::u8_at(self.buffer.as_ref(), 1)
    }

    /// Header plus hops, in bytes.
    pub fn total_len(&self) -> usize {
        HEADER_LEN + HOP_LEN * self.hop_count() as usize
    }

    fn record(&self, i: usize) -> Record {
        Record::from_bits(be::u64_at(self.buffer.as_ref(), HEADER_LEN + HOP_LEN * i))
    }

    /// The hops as the engine's samples, read straight from the records:
    /// what [`CompactRepr::parse`] then [`CompactRepr::hop_samples`] give,
    /// errors included, without the parsed copy in between (a NIC reads
    /// every ACK's stack this way).
    pub fn hop_samples(&self, units: &CompactUnits) -> Result<Hops> {
        let mut out = Hops::new();
        self.hop_samples_into(units, &mut out)?;
        Ok(out)
    }

    /// [`CompactStack::hop_samples`] written into `out`, which is cleared
    /// first: a caller that keeps its buffer saves the copy of the samples
    /// (300-odd bytes) that a return by value makes. On an error `out`
    /// holds the hops before the bad one.
    pub fn hop_samples_into(&self, units: &CompactUnits, out: &mut Hops) -> Result<()> {
        out.clear();
        self.check_len()?;
        let widths = compact_widths(units);
        for i in 0..self.hop_count() as usize {
            out.push(self.hop(i)?.sample(units, widths))
                .map_err(|_| WireError::TooManyHops)?;
        }
        Ok(())
    }

    /// Hop `i`'s record; `UnknownType` for the reserved speed code.
    fn hop(&self, i: usize) -> Result<CompactHop> {
        let r = self.record(i);
        Ok(CompactHop {
            speed: SpeedCode::from_bits(r.speed())?,
            ts: r.ts(),
            tx: r.tx(),
            qlen: r.qlen(),
        })
    }
}

/// The counter widths of a compact record, with the transmit counter in
/// the stack's units.
fn compact_widths(units: &CompactUnits) -> CounterWidths {
    COMPACT_WIDTHS.with_unit(NonZeroU16::new(units.tx_unit_bytes).unwrap_or(NonZeroU16::MIN))
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> CompactStack<T> {
    fn set_header(&mut self, hops: u8) {
        let b = self.buffer.as_mut();
        be::put_u8(b, 0, VERSION << 4);
        be::put_u8(b, 1, hops);
    }

    fn set_record(&mut self, i: usize, r: Record) {
        be::put_u64(self.buffer.as_mut(), HEADER_LEN + HOP_LEN * i, r.into_bits());
    }

    /// Appends `hop` in place, as a switch does at egress: the record after
    /// the last one and the hop count raised, nothing else read or
    /// rewritten (upstream records are the upstream switches' business; a
    /// reserved code in one is the receiver's to refuse). The stack's
    /// length is then [`Self::total_len`]. `Ok(false)`, unchanged, when the
    /// stack already holds [`MAX_HOPS`]; `BufferTooSmall` when the buffer
    /// has no room for one more record; the header's errors as
    /// [`Self::check_len`] gives them. On a stack `CompactRepr::parse`
    /// accepts, the bytes are those of parsing, pushing and emitting.
    pub fn push_hop(&mut self, hop: &CompactHop) -> Result<bool> {
        self.check_len()?;
        let n = self.hop_count() as usize;
        if n >= MAX_HOPS {
            return Ok(false);
        }
        if self.buffer.as_ref().len() < HEADER_LEN + HOP_LEN * (n + 1) {
            return Err(WireError::BufferTooSmall);
        }
        self.set_record(n, Record::of(hop));
        // n < MAX_HOPS = 8: fits the count byte.
        self.set_header(n as u8 + 1);
        Ok(true)
    }
}

impl Record {
    /// A hop's record; counters wider than their fields are truncated to
    /// their width (they are modular), the queue saturates.
    fn of(h: &CompactHop) -> Record {
        Record::new()
            .with_speed(h.speed.into_bits() & 0x7)
            .with_ts(h.ts & 0xFF_FFFF)
            .with_tx(h.tx & 0xF_FFFF)
            .with_qlen(h.qlen.min((1 << 17) - 1))
    }
}

/// One hop of a compact stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct CompactHop {
    /// Link speed of the egress port.
    pub speed: SpeedCode,
    /// Egress timestamp, ns modulo 2^24.
    pub ts: u32,
    /// Transmitted units modulo 2^20.
    pub tx: u32,
    /// Queue length in units, saturated at 2^17 − 1 by the switch.
    pub qlen: u32,
}

impl CompactHop {
    /// The hop as the engine's sample: queue in bytes, the link speed its
    /// code names.
    fn sample(&self, units: &CompactUnits, widths: CounterWidths) -> HopSample {
        HopSample {
            ts: self.ts,
            tx: self.tx,
            qlen_bytes: self.qlen.saturating_mul(units.qlen_unit_bytes),
            sojourn_ns: 0,
            bandwidth: self.speed.speed(),
            id: 0,
            widths,
            tx_utilization: crate::telemetry::TxUtilization::NONE,
        }
    }
}

/// A parsed compact stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompactRepr {
    /// The hops, first hop first.
    pub hops: heapless::Vec<CompactHop, MAX_HOPS>,
}

impl CompactRepr {
    /// Parses a checked stack.
    pub fn parse<T: AsRef<[u8]>>(s: &CompactStack<T>) -> Result<Self> {
        s.check_len()?;
        let mut hops = heapless::Vec::new();
        for i in 0..s.hop_count() as usize {
            hops.push(s.hop(i)?).map_err(|_| WireError::TooManyHops)?;
        }
        Ok(CompactRepr { hops })
    }

    /// Bytes [`Self::emit`] writes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + HOP_LEN * self.hops.len()
    }

    /// Writes the stack; counters wider than their fields are truncated to
    /// their width (they are modular).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, s: &mut CompactStack<T>) -> Result<()> {
        if s.buffer.as_ref().len() < self.buffer_len() {
            return Err(WireError::BufferTooSmall);
        }
        s.set_header(self.hops.len() as u8);
        for (i, h) in self.hops.iter().enumerate() {
            s.set_record(i, Record::of(h));
        }
        Ok(())
    }

    /// The engine's samples: 24-bit ns timestamps, 20-bit tx counters of
    /// `units.tx_unit_bytes`, queue in bytes; no switch identity (the path
    /// signature then rests on hop count and speeds).
    pub fn hop_samples(&self, units: &CompactUnits) -> Hops {
        let widths = compact_widths(units);
        self.hops.iter().map(|h| h.sample(units, widths)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repr() -> CompactRepr {
        let mut hops = heapless::Vec::new();
        hops.push(CompactHop {
            speed: SpeedCode::G100,
            ts: 0xABCDEF,
            tx: 0xFFFFF,
            qlen: 0x1FFFF,
        })
        .unwrap();
        hops.push(CompactHop {
            speed: SpeedCode::T1_6,
            ts: 1,
            tx: 2,
            qlen: 3,
        })
        .unwrap();
        CompactRepr { hops }
    }

    #[test]
    fn layout_is_as_documented() {
        let mut buf = [0u8; 18];
        repr().emit(&mut CompactStack::new_unchecked(&mut buf[..])).unwrap();
        assert_eq!(buf[0], 0x10);
        assert_eq!(buf[1], 2);
        // speed 2 (100G) | ts 0xABCDEF | tx 0xFFFFF | qlen 0x1FFFF
        let word = (2u64 << 61) | (0xABCDEFu64 << 37) | (0xFFFFFu64 << 17) | 0x1FFFF;
        assert_eq!(&buf[2..10], &word.to_be_bytes());
    }

    /// A switch's in-place push, against the layout in the module docs:
    /// the record after the last, the count raised, earlier bytes and what
    /// follows the stack untouched.
    #[test]
    fn a_hop_is_pushed_in_place() {
        let mut buf = [0xEEu8; 20];
        buf[..2].copy_from_slice(&[0x10, 0]);
        let mut s = CompactStack::new_checked(&mut buf[..]).unwrap();
        let first = CompactHop {
            speed: SpeedCode::G400,
            ts: 0x1_000005, // 25 bits: the top one is cut (24-bit field)
            tx: 0x12345,
            qlen: 1 << 20, // past 17 bits: saturates at 0x1FFFF
        };
        assert_eq!(s.push_hop(&first), Ok(true));
        assert_eq!(s.push_hop(&repr().hops[1]), Ok(true));
        assert_eq!(s.push_hop(&first), Err(WireError::BufferTooSmall));
        // speed 4 (400G) | ts 5 | tx 0x12345 | qlen 0x1FFFF
        let word = (4u64 << 61) | (5u64 << 37) | (0x12345u64 << 17) | 0x1FFFF;
        assert_eq!(&buf[..2], &[0x10, 2]);
        assert_eq!(&buf[2..10], &word.to_be_bytes());
        // speed 6 (1.6T) | ts 1 | tx 2 | qlen 3
        let word = (6u64 << 61) | (1u64 << 37) | (2u64 << 17) | 3;
        assert_eq!(&buf[10..18], &word.to_be_bytes());
        assert_eq!(&buf[18..], &[0xEE, 0xEE]);
    }

    proptest::proptest! {
        /// Samples read straight from any bytes are those of parsing and
        /// then converting: the same samples, or the same error.
        #[test]
        fn samples_from_the_stack_are_parse_then_samples(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..80),
            version_1 in proptest::bool::ANY,
            hops in 0u8..10,
            tx_unit in 0u16..300,
            qlen_unit in 0u32..300,
        ) {
            let mut b = bytes;
            if b.len() >= HEADER_LEN {
                // Mostly well-formed headers, so the records get read.
                if version_1 {
                    b[0] = VERSION << 4;
                }
                b[1] = hops;
            }
            let units = CompactUnits { tx_unit_bytes: tx_unit, qlen_unit_bytes: qlen_unit };
            let s = CompactStack::new_unchecked(&b[..]);
            let two_steps = CompactRepr::parse(&s).map(|r| r.hop_samples(&units));
            proptest::prop_assert_eq!(s.hop_samples(&units), two_steps.clone());
            // Into a buffer that already holds samples: cleared first.
            let mut into = two_steps.clone().unwrap_or_default();
            let r = s.hop_samples_into(&units, &mut into);
            match two_steps {
                Ok(h) => proptest::prop_assert_eq!((r, into), (Ok(()), h)),
                Err(e) => proptest::prop_assert_eq!(r, Err(e)),
            }
        }

        /// On any stack the parser accepts, pushing in place writes the
        /// bytes of parse, push and emit; a full stack is left as it is.
        #[test]
        fn pushing_in_place_is_parse_push_emit(
            hops in proptest::collection::vec((0u8..7, proptest::num::u32::ANY, proptest::num::u32::ANY, 0u32..1 << 18), 0..=MAX_HOPS),
            new in (0u8..7, proptest::num::u32::ANY, proptest::num::u32::ANY, 0u32..1 << 18),
        ) {
            let hop = |(c, ts, tx, qlen): (u8, u32, u32, u32)| CompactHop {
                speed: SpeedCode::from_bits(c).unwrap(),
                ts,
                tx,
                qlen,
            };
            let mut r = CompactRepr { hops: hops.into_iter().map(hop).collect() };
            let mut buf = [0u8; HEADER_LEN + HOP_LEN * MAX_HOPS];
            r.emit(&mut CompactStack::new_unchecked(&mut buf[..])).unwrap();
            let mut in_place = buf;
            let pushed = CompactStack::new_checked(&mut in_place[..]).unwrap().push_hop(&hop(new)).unwrap();
            let mut parsed = CompactRepr::parse(&CompactStack::new_checked(&buf[..]).unwrap()).unwrap();
            proptest::prop_assert_eq!(&parsed, &{
                // parse gives back what emit wrote: the fields at their widths
                r.hops.iter_mut().for_each(|h| { h.ts &= 0xFF_FFFF; h.tx &= 0xF_FFFF; h.qlen = h.qlen.min((1 << 17) - 1); });
                r
            });
            proptest::prop_assert_eq!(pushed, parsed.hops.push(hop(new)).is_ok());
            parsed.emit(&mut CompactStack::new_unchecked(&mut buf[..])).unwrap();
            proptest::prop_assert_eq!(in_place, buf);
        }
    }

    #[test]
    fn round_trip() {
        let mut buf = [0u8; 18];
        repr().emit(&mut CompactStack::new_unchecked(&mut buf[..])).unwrap();
        let parsed = CompactRepr::parse(&CompactStack::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(parsed, repr());
    }

    #[test]
    fn malformed_inputs_are_errors() {
        let mut buf = [0u8; 18];
        repr().emit(&mut CompactStack::new_unchecked(&mut buf[..])).unwrap();
        assert_eq!(CompactStack::new_checked(&buf[..17]).unwrap_err(), WireError::Truncated);
        assert_eq!(CompactStack::new_checked(&buf[..1]).unwrap_err(), WireError::Truncated);
        let mut v = buf;
        v[0] = 0x20;
        assert_eq!(
            CompactStack::new_checked(&v[..]).unwrap_err(),
            WireError::UnknownVersion
        );
        let mut v = buf;
        v[1] = 9;
        assert_eq!(CompactStack::new_checked(&v[..]).unwrap_err(), WireError::TooManyHops);
        // The reserved low nibble is ignored on receipt and written as zero.
        let mut v = buf;
        v[0] |= 0x0A;
        let got = CompactRepr::parse(&CompactStack::new_checked(&v[..]).unwrap()).unwrap();
        assert_eq!(got, repr());
        let mut out = [0u8; 18];
        got.emit(&mut CompactStack::new_unchecked(&mut out[..])).unwrap();
        assert_eq!(out, buf);
        let mut v = buf;
        v[2] |= 0xE0; // speed code 7
        let s = CompactStack::new_checked(&v[..]).unwrap();
        assert_eq!(CompactRepr::parse(&s).unwrap_err(), WireError::UnknownType);
        assert_eq!(
            repr().emit(&mut CompactStack::new_unchecked(&mut [0u8; 10][..])),
            Err(WireError::BufferTooSmall)
        );
    }

    #[test]
    fn samples_carry_units_and_widths() {
        let units = CompactUnits {
            tx_unit_bytes: 128,
            qlen_unit_bytes: 80,
        };
        let s = repr().hop_samples(&units);
        assert_eq!(s[0].bandwidth, LinkSpeed::from_gbps(100));
        assert_eq!(s[1].bandwidth, LinkSpeed::from_gbps(1600));
        assert_eq!(s[0].qlen_bytes, 0x1FFFF * 80);
        assert_eq!(s[0].widths, CounterWidths::new(24, 20, 128).unwrap());
    }
}
