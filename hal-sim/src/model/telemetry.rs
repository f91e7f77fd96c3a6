//! Telemetry in real bytes, through cc-core's wire layer: the sender's Tx
//! pipeline writes an empty header, each switch appends its hop at dequeue
//! (HPCC++ pan-02 §6.1: one snapshot of txBytes, qlen, ts at the egress
//! port), and the sender's Rx pipeline parses the echoed bytes into the
//! engine's hop samples.

use cc_core::event::PintSample;
use cc_core::units::LinkSpeed;
use cc_core::wire::compact::{self, CompactHop, CompactRepr, CompactStack, CompactUnits, SpeedCode};
use cc_core::wire::ifa::{self, HopLayout, IfaHop, IfaPacket, IfaRepr, NamespaceProfiles};
use cc_core::wire::int_md::{instr, IntHop, IntMdPacket, IntMdRepr};
use cc_core::wire::ioam::{bits, IoamNode, IoamOption, IoamRepr, TraceFlags, TraceKind};
use cc_core::wire::pint::{PintCode, PintRepr, PintWidth};
use cc_core::wire::{Hops, PortSpeedStack, TimestampFraction, TxCounter, UnitsProfile, WireError, MAX_HOPS};

use crate::model::packet::{TelBuf, TEL_CAP};

/// Which telemetry the Tx pipeline requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TelFormat {
    /// No telemetry (LDCP).
    None,
    /// The compact HPCC hop stack, 8 bytes a hop.
    Compact,
    /// P4.org INT-MD v2.0.
    IntMd,
    /// IOAM pre-allocated trace in an IPv6 hop-by-hop option.
    Ioam,
    /// IFA 2.0.
    Ifa,
    /// HPCC-PINT's utilization code, one or two bytes
    /// ([`Telemetry::pint`]): each switch port writes its code if larger.
    Pint,
}

/// Counter units of the compact format in this simulator (the SIGCOMM'19
/// prototype's: tx in 128-byte units, queue in 80-byte units).
pub const COMPACT_UNITS: CompactUnits = CompactUnits {
    tx_unit_bytes: 128,
    qlen_unit_bytes: 80,
};

/// IOAM trace type written by the switches: node id, interfaces, timestamp
/// seconds and fraction, transit delay, namespace data (the tx counter),
/// queue depth: 7 words a node.
pub const IOAM_TRACE_TYPE: u32 = bits::ID_SHORT
    | bits::IF_SHORT
    | bits::TS_SEC
    | bits::TS_FRAC
    | bits::TRANSIT_DELAY
    | bits::NS_SHORT
    | bits::QUEUE_DEPTH;
const IOAM_NODE_WORDS: u8 = 7;

/// INT-MD instructions the switches honour.
pub const INT_INSTRUCTIONS: u16 =
    instr::NODE_ID | instr::L1_PORTS | instr::HOP_LATENCY | instr::QUEUE | instr::EGRESS_TS | instr::TX_UTIL;

/// IFA namespace used by the switches (TxBytes layout).
pub const IFA_LNS: u8 = 1;

/// The data packets' UDP header (RoCEv2, destination port 4791), which IFA
/// keeps between its header and its metadata. The simulator counts L4
/// headers in the packet's header overhead, so [`Telemetry::wire_bytes`]
/// leaves it out.
const IFA_UDP_HEADER: [u8; 8] = [0xC0, 0x00, 0x12, 0xB7, 0x00, 0x00, 0x00, 0x00];

/// What a switch port knows at the instant a packet leaves it.
#[derive(Clone, Copy, Debug)]
pub struct HopState {
    /// Egress timestamp, ns.
    pub ts_ns: u64,
    /// Ingress timestamp, ns.
    pub ingress_ns: u64,
    /// Bytes the port has transmitted before this packet.
    pub tx_bytes: u64,
    /// Bytes queued behind this packet.
    pub qlen_bytes: u64,
    /// Link bandwidth, bit/s.
    pub bps: u64,
    /// Switch id.
    pub node: u32,
    /// Ingress port.
    pub ingress_port: u16,
    /// Egress port.
    pub egress_port: u16,
    /// Egress utilization estimate in [0, 1].
    pub util: f64,
    /// The PINT code the port writes (its utilization's, rounded at
    /// random), for [`TelFormat::Pint`].
    pub pint_code: u16,
}

/// Link speed by (node id as the telemetry writes it, egress port): the
/// per-port table a NIC reading INT-MD or IOAM needs on a fabric whose
/// links differ in speed.
pub type PortSpeeds = std::collections::HashMap<(u64, u32), LinkSpeed>;

/// The speed of every switch port of `net`, by the node id INT-MD writes
/// (the node) and IOAM writes (its low 24 bits; equal below 2^24 nodes).
pub fn port_speeds(net: &crate::model::net::Network) -> PortSpeeds {
    let mut m = PortSpeeds::new();
    for (node, n) in net.nodes.iter().enumerate() {
        if n.kind != crate::model::net::NodeKind::Switch {
            continue;
        }
        for (port, link) in n.ports.iter().enumerate() {
            let speed = LinkSpeed::from_mbps((link.bps / 1_000_000) as u32);
            m.insert((node as u64, port as u32), speed);
            m.insert(((node & 0xFF_FFFF) as u64, port as u32), speed);
        }
    }
    m
}

/// The telemetry configuration of a run.
#[derive(Clone, Copy, Debug)]
pub struct Telemetry {
    /// The format.
    pub format: TelFormat,
    /// Link speed for formats that carry none (INT-MD, IOAM).
    pub profile: UnitsProfile,
    /// IOAM nodes pre-allocated by the sender.
    pub ioam_prealloc: u8,
    /// The PINT code's width.
    pub pint: PintWidth,
    /// The base RTT the switches' PINT utilization averages over, ns (the
    /// reference's `m_maxRtt`: the fabric's largest base RTT).
    pub pint_t_ns: u64,
    /// The probability that an ACK's code reaches the engine.
    pub pint_sampling: f64,
}

impl Telemetry {
    /// A configuration; `uniform_speed` is the link speed INT-MD and IOAM
    /// report for every hop (their profile carries one speed).
    pub fn new(format: TelFormat, uniform_speed: LinkSpeed, ioam_prealloc: u8) -> Self {
        let profile = UnitsProfile {
            link_speed: uniform_speed,
            queue_unit_bytes: 1,
            tx_util_full_scale: 10_000,
            ioam_fraction: TimestampFraction::Nanoseconds,
            tx_counter: TxCounter::Present { unit_bytes: 1 },
        };
        Telemetry {
            format,
            profile,
            ioam_prealloc: ioam_prealloc.clamp(1, MAX_HOPS as u8),
            pint: PintWidth::Two,
            pint_t_ns: 10_000,
            pint_sampling: 1.0,
        }
    }

    fn ifa_profiles() -> NamespaceProfiles {
        let mut p = NamespaceProfiles { layouts: [None; 16] };
        p.layouts[IFA_LNS as usize] = Some(HopLayout::TxBytes);
        p
    }

    /// Writes the empty header the Tx pipeline puts on a packet.
    #[inline(always)]
    pub fn init(&self, t: &mut TelBuf<'_>) {
        let written = match self.format {
            TelFormat::None => Ok(0),
            TelFormat::Compact => {
                let r = CompactRepr {
                    hops: heapless::Vec::new(),
                };
                r.emit(&mut CompactStack::new_unchecked(t.room()))
                    .map(|_| r.buffer_len())
            }
            TelFormat::IntMd => {
                let r = IntMdRepr {
                    npt: 1,
                    npt_field: 17,
                    flags: 0,
                    hop_ml: IntMdRepr::hop_ml_for(INT_INSTRUCTIONS),
                    remaining_hops: MAX_HOPS as u8,
                    instructions: INT_INSTRUCTIONS,
                    domain_id: 0,
                    ds_instructions: 0,
                    ds_flags: 0,
                    hops: heapless::Vec::new(),
                };
                r.emit(&mut IntMdPacket::new_unchecked(t.room()))
                    .map(|_| r.buffer_len())
            }
            TelFormat::Ioam => {
                let r = IoamRepr {
                    kind: TraceKind::PreAllocated,
                    namespace: 1,
                    flags: TraceFlags::default(),
                    remaining_len: IOAM_NODE_WORDS * self.ioam_prealloc,
                    trace_type: IOAM_TRACE_TYPE,
                    nodes: heapless::Vec::new(),
                };
                r.emit(&mut IoamOption::new_unchecked(t.room())).map(|_| r.buffer_len())
            }
            TelFormat::Pint => {
                // Code 0 (U = 1/512): every port's code is at least it.
                let r = PintRepr {
                    width: self.pint,
                    code: 0,
                };
                r.emit(&mut PintCode::new_unchecked(t.room(), self.pint))
                    .map(|_| self.pint.bytes())
            }
            TelFormat::Ifa => {
                let r = IfaRepr {
                    gns: 0,
                    next_header: ifa::UDP,
                    flags: 0,
                    max_length: (MAX_HOPS * 8) as u8,
                    l4: IFA_UDP_HEADER.iter().copied().collect(),
                    request_vector: 0xFF,
                    action_vector: 0,
                    hop_limit: MAX_HOPS as u8,
                    hops: heapless::Vec::new(),
                };
                r.emit(&mut IfaPacket::new_unchecked(t.room())).map(|_| r.buffer_len())
            }
        };
        t.set_len(written.unwrap_or(0) as u16);
    }

    /// Bytes the telemetry adds on the wire once `hops` switches wrote.
    pub fn wire_bytes(&self, hops: usize) -> u32 {
        let h = hops.min(MAX_HOPS) as u32;
        match self.format {
            TelFormat::None => 0,
            TelFormat::Compact => (compact::HEADER_LEN + compact::HOP_LEN * h as usize) as u32,
            TelFormat::IntMd => 16 + 28 * h,
            TelFormat::Ioam => 12 + 4 * IOAM_NODE_WORDS as u32 * self.ioam_prealloc as u32 + 4,
            TelFormat::Ifa => (ifa::HEADER_LEN + ifa::MD_HEADER_LEN) as u32 + 32 * h,
            TelFormat::Pint => self.pint.bytes() as u32,
        }
    }

    /// Bytes of room a packet's telemetry buffer needs in this format:
    /// the header and a full stack (8 hops of 8 bytes for the compact
    /// stack; [`TEL_CAP`], the largest of the others, otherwise).
    pub fn room(&self) -> usize {
        match self.format {
            TelFormat::None => 0,
            TelFormat::Compact => self.wire_bytes(MAX_HOPS) as usize,
            TelFormat::Pint => self.pint.bytes(),
            TelFormat::IntMd | TelFormat::Ioam | TelFormat::Ifa => TEL_CAP,
        }
    }

    /// A switch appends its hop (newest first for INT, IOAM and IFA; the
    /// compact stack lists hops in path order). A full stack is left as it
    /// is (IOAM sets its overflow flag).
    pub fn push_hop(&self, t: &mut TelBuf<'_>, h: &HopState) -> Result<(), WireError> {
        let len = t.len() as usize;
        let new_len = match self.format {
            TelFormat::None => return Ok(()),
            TelFormat::Pint => {
                // The path's largest code stays (PINT §4.2: max over hops).
                let mut c = PintCode::new_checked(t.room().get_mut(..len).ok_or(WireError::Truncated)?, self.pint)?;
                let carried = PintRepr::parse(&c)?;
                if h.pint_code > carried.code {
                    PintRepr {
                        width: self.pint,
                        code: h.pint_code,
                    }
                    .emit(&mut c)?;
                }
                len
            }
            TelFormat::Compact => {
                let speed = SpeedCode::from_speed(LinkSpeed::from_mbps((h.bps / 1_000_000) as u32))
                    .ok_or(WireError::UnknownType)?;
                let u = COMPACT_UNITS;
                let hop = CompactHop {
                    speed,
                    ts: (h.ts_ns & 0xFF_FFFF) as u32,
                    tx: ((h.tx_bytes / u.tx_unit_bytes as u64) & 0xF_FFFF) as u32,
                    qlen: (h.qlen_bytes / u.qlen_unit_bytes as u64).min((1 << 17) - 1) as u32,
                };
                // In place, as a switch appends its record: the stack is
                // neither parsed nor written again.
                let mut stack = CompactStack::new_checked(t.room())?;
                if !stack.push_hop(&hop)? {
                    return Ok(());
                }
                stack.total_len()
            }
            TelFormat::IntMd => {
                let mut r = IntMdRepr::parse(&IntMdPacket::new_checked(
                    t.room().get(..len).ok_or(WireError::Truncated)?,
                )?)?;
                if r.hops.is_full() || r.remaining_hops == 0 {
                    return Ok(());
                }
                let hop = IntHop {
                    node_id: h.node,
                    l1_ingress: h.ingress_port,
                    l1_egress: h.egress_port,
                    hop_latency: (h.ts_ns - h.ingress_ns).min(u32::MAX as u64) as u32,
                    queue_id: 0,
                    queue_occupancy: h.qlen_bytes.min(0xFF_FFFF) as u32,
                    egress_ts: h.ts_ns,
                    tx_util: (h.util.clamp(0.0, 1.0) * 10_000.0).round() as u32,
                    ..Default::default()
                };
                r.hops.insert(0, hop).map_err(|_| WireError::TooManyHops)?;
                r.remaining_hops -= 1;
                r.emit(&mut IntMdPacket::new_unchecked(t.room()))?;
                r.buffer_len()
            }
            TelFormat::Ioam => {
                // Parsed from a copy (the parsed option borrows its bytes):
                // it is written back in place.
                let mut bytes = [0u8; TEL_CAP];
                let n = len.min(TEL_CAP);
                bytes[..n].copy_from_slice(t.room().get(..n).ok_or(WireError::Truncated)?);
                let opt = IoamOption::new_checked(&bytes[..n])?;
                let mut r = IoamRepr::parse(&opt)?;
                if r.remaining_len < IOAM_NODE_WORDS || r.nodes.is_full() {
                    r.flags.overflow = true;
                } else {
                    let node = IoamNode {
                        hop_limit: 64,
                        node_id: h.node & 0xFF_FFFF,
                        ingress_if: h.ingress_port,
                        egress_if: h.egress_port,
                        ts_seconds: (h.ts_ns / 1_000_000_000) as u32,
                        ts_fraction: (h.ts_ns % 1_000_000_000) as u32,
                        transit_delay: (h.ts_ns - h.ingress_ns).min(0x7FFF_FFFF) as u32,
                        ns_data: h.tx_bytes as u32,
                        queue_depth: h.qlen_bytes.min(u32::MAX as u64) as u32,
                        ..Default::default()
                    };
                    r.nodes.insert(0, node).map_err(|_| WireError::TooManyHops)?;
                    r.remaining_len -= IOAM_NODE_WORDS;
                }
                r.emit(&mut IoamOption::new_unchecked(t.room()))?;
                r.buffer_len()
            }
            TelFormat::Ifa => {
                let profiles = Self::ifa_profiles();
                let mut r = IfaRepr::parse(
                    &IfaPacket::new_checked(t.room().get(..len).ok_or(WireError::Truncated)?, &profiles)?,
                    &profiles,
                )?;
                if r.hops.is_full() {
                    return Ok(());
                }
                let speed = [10u64, 25, 40, 50, 100, 200, 400]
                    .iter()
                    .position(|g| g * 1_000_000_000 == h.bps)
                    .ok_or(WireError::UnknownType)?;
                let hop = IfaHop {
                    lns: IFA_LNS,
                    device_id: h.node & 0xF_FFFF,
                    ttl: 64,
                    speed: speed as u8,
                    ecn: 0,
                    queue_id: 0,
                    rx_seconds: ((h.ingress_ns / 1_000_000_000) & 0xF_FFFF) as u32,
                    egress_port: h.egress_port,
                    ingress_port: h.ingress_port,
                    rx_nanoseconds: (h.ingress_ns % 1_000_000_000) as u32,
                    residence_ns: (h.ts_ns - h.ingress_ns).min(u32::MAX as u64) as u32,
                    queue_bytes: h.qlen_bytes.min(u32::MAX as u64) as u32,
                    queue_cells: 0,
                    tail: h.tx_bytes as u32,
                };
                r.hops.insert(0, hop).map_err(|_| WireError::TooManyHops)?;
                r.emit(&mut IfaPacket::new_unchecked(t.room()))?;
                r.buffer_len()
            }
        };
        t.set_len(new_len as u16);
        Ok(())
    }

    /// The PINT code of echoed telemetry in [`TelFormat::Pint`] (`None` in
    /// the other formats); an error for a short or out-of-range field.
    pub fn pint_sample(&self, bytes: &[u8]) -> Result<Option<PintSample>, WireError> {
        if self.format != TelFormat::Pint {
            return Ok(None);
        }
        let r = PintRepr::parse(&PintCode::new_checked(bytes, self.pint)?)?;
        Ok(Some(PintSample {
            width: r.width,
            code: r.code,
        }))
    }

    /// The engine's hop samples from echoed telemetry, first hop first.
    /// INT-MD and IOAM carry no link speed: `speeds` gives each (node,
    /// egress port) its own, as a NIC's configuration would.
    pub fn samples(&self, bytes: &[u8], speeds: &PortSpeeds) -> Result<Hops, WireError> {
        let mut out = Hops::new();
        self.samples_into(bytes, speeds, &mut out)?;
        Ok(out)
    }

    /// [`Telemetry::samples`] written into `out`, replacing what it held
    /// (on an error, what it holds is not the samples): the compact
    /// stack's records are read straight into it, sparing the copy a
    /// return by value makes, on every ACK.
    #[inline(always)]
    pub fn samples_into(&self, bytes: &[u8], speeds: &PortSpeeds, out: &mut Hops) -> Result<(), WireError> {
        let by_port = |node: u64, port: u32| speeds.get(&(node, port)).copied();
        *out = match self.format {
            TelFormat::None | TelFormat::Pint => Hops::new(),
            TelFormat::Compact => return CompactStack::new_unchecked(bytes).hop_samples_into(&COMPACT_UNITS, out),
            TelFormat::IntMd => {
                IntMdRepr::parse(&IntMdPacket::new_checked(bytes)?)?.hop_samples_by_port(&self.profile, by_port)?
            }
            TelFormat::Ioam => {
                let opt = IoamOption::new_checked(bytes)?;
                IoamRepr::parse(&opt)?.hop_samples_by_port(&self.profile, by_port)?
            }
            TelFormat::Ifa => {
                let p = Self::ifa_profiles();
                IfaRepr::parse(&IfaPacket::new_checked(bytes, &p)?, &p)?.hop_samples(&p, &self.profile)?
            }
        };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(k: u64) -> HopState {
        HopState {
            ts_ns: 1_000_000 + 1000 * k,
            ingress_ns: 999_000 + 1000 * k,
            tx_bytes: 150_000 * k,
            qlen_bytes: 8_000 * k,
            bps: 100_000_000_000,
            node: 40 + k as u32,
            ingress_port: 1,
            egress_port: 2,
            util: 0.5,
            pint_code: 0,
        }
    }

    /// A buffer of the format's room takes a full stack: eight switches
    /// write, the sender reads eight samples, and a ninth leaves the
    /// buffer as it was (IOAM marks its overflow instead).
    #[test]
    fn the_pint_code_keeps_the_paths_largest() {
        for (width, codes, bytes) in [
            (PintWidth::Two, [300u16, 1254, 627], [0x04u8, 0xE6]),
            (PintWidth::One, [30, 255, 128], [0xFF, 0]),
        ] {
            let mut t = Telemetry::new(TelFormat::Pint, LinkSpeed::from_gbps(100), 1);
            t.pint = width;
            let mut room = vec![0u8; 2 + t.room()];
            let mut buf = TelBuf::new(&mut room);
            t.init(&mut buf);
            assert_eq!(buf.bytes(), &[0u8; 2][..width.bytes()]);
            for code in codes {
                t.push_hop(
                    &mut buf,
                    &HopState {
                        pint_code: code,
                        ..hop(1)
                    },
                )
                .unwrap();
            }
            // 1254 = 0x04E6 big-endian in two bytes; 255 in one.
            assert_eq!(buf.bytes(), &bytes[..width.bytes()]);
            assert_eq!(t.wire_bytes(5), width.bytes() as u32);
            let s = t.pint_sample(buf.bytes()).unwrap().unwrap();
            assert_eq!((s.width, s.code), (width, codes[1]));
            assert!(t.samples(buf.bytes(), &PortSpeeds::new()).unwrap().is_empty());
        }
        // A two-byte code past 1254 names no utilization: refused.
        let mut t = Telemetry::new(TelFormat::Pint, LinkSpeed::from_gbps(100), 1);
        t.pint = PintWidth::Two;
        assert_eq!(t.pint_sample(&[0x04, 0xE7]), Err(WireError::OutOfRange));
        assert_eq!(t.pint_sample(&[0x04]), Err(WireError::Truncated));
    }

    #[test]
    fn a_full_stack_fits_the_formats_room() {
        for f in [TelFormat::Compact, TelFormat::IntMd, TelFormat::Ioam, TelFormat::Ifa] {
            let t = Telemetry::new(f, LinkSpeed::from_gbps(100), MAX_HOPS as u8);
            let mut room = vec![0u8; 2 + t.room()];
            let mut buf = TelBuf::new(&mut room);
            t.init(&mut buf);
            for i in 1..=MAX_HOPS as u64 {
                t.push_hop(&mut buf, &hop(i))
                    .unwrap_or_else(|e| panic!("{f:?}, hop {i}: {e}"));
            }
            let full = buf.bytes().to_vec();
            let s = t
                .samples(&full, &PortSpeeds::new())
                .unwrap_or_else(|e| panic!("{f:?}: {e}"));
            assert_eq!(s.len(), MAX_HOPS, "{f:?}");
            t.push_hop(&mut buf, &hop(9))
                .unwrap_or_else(|e| panic!("{f:?}, hop 9: {e}"));
            if f != TelFormat::Ioam {
                assert_eq!(buf.bytes(), &full[..], "{f:?}");
            }
        }
    }

    /// Two switches write; the sender reads two samples, first hop first,
    /// in every format.
    #[test]
    fn every_format_carries_two_hops() {
        for f in [TelFormat::Compact, TelFormat::IntMd, TelFormat::Ioam, TelFormat::Ifa] {
            let t = Telemetry::new(f, LinkSpeed::from_gbps(100), 5);
            let mut room = [0u8; 2 + TEL_CAP];
            let mut buf = TelBuf::new(&mut room);
            t.init(&mut buf);
            t.push_hop(&mut buf, &hop(1)).unwrap();
            t.push_hop(&mut buf, &hop(2)).unwrap();
            let s = t
                .samples(buf.bytes(), &PortSpeeds::new())
                .unwrap_or_else(|e| panic!("{f:?}: {e}"));
            assert_eq!(s.len(), 2, "{f:?}");
            assert_eq!(s[0].bandwidth, LinkSpeed::from_gbps(100), "{f:?}");
            assert!(s[0].ts < s[1].ts, "{f:?}: first hop first");
            if f != TelFormat::Compact && f != TelFormat::IntMd {
                assert_eq!((s[0].tx, s[1].tx), (150_000, 300_000), "{f:?}");
            }
            let l4 = if f == TelFormat::Ifa {
                IFA_UDP_HEADER.len() as u32
            } else {
                0
            };
            assert!(
                buf.len() as u32 <= t.wire_bytes(2) + l4 + 4,
                "{f:?}: {} bytes",
                buf.len()
            );
        }
    }
}
