//! The event API shared by firmware and simulator (DESIGN §3).
//!
//! One [`Event`] in, one [`Decision`] out. The engine is sans-IO: `now`
//! arrives with every event; what the flow needs next (a timer, a probe,
//! feedback to the sender, a packet released by the timer) leaves in the
//! decision.
//!
//! ```text
//!  scheduler ──Sent──▶ ┐                         ┌──▶ window, rate, ECN codepoint
//!  Rx pipeline ─Ack/Nack/Loss/Cnp/Probe/Feedback─▶ engine ──▶ timer: keep / arm / cancel
//!  timer ──Timer──▶    ┘                         └──▶ request: probe, feedback, release, go-back-N
//! ```

use crate::path::{Ev, Spray};
use crate::telemetry::HopSample;
pub use crate::units::FlowId;
use crate::units::{BaseRtt, Instant, LinkSpeed, Rate, Seq, Window};
use crate::wire::pint::PintWidth;

/// Which probe a response answers. The engine numbers the probes it asks
/// for ([`Request::Probe`]); the NIC carries the number in the probe, the
/// responder's NIC echoes it, and the sender's NIC hands it back with the
/// response. A response to a probe that a timeout superseded is then told
/// apart from the response to the current one: one probe is outstanding
/// per flow, and a late response neither starts a second probe chain nor
/// counts twice. Numbers wrap after 256 probes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ProbeId(pub u8);

impl ProbeId {
    /// The number after this one.
    pub const fn next(self) -> Self {
        ProbeId(self.0.wrapping_add(1))
    }
}

pub use crate::algorithm::Algorithm;
pub use crate::error::Error;

/// What the engine needs to know when a flow starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct FlowParams {
    /// The controller and role.
    pub algorithm: Algorithm,
    /// Base RTT T of the flow's path.
    pub base_rtt: BaseRtt,
    /// The NIC's line rate for this flow; W_init = IW = line rate · T.
    pub line_rate: LinkSpeed,
    /// First byte sequence number the flow will send.
    pub start_seq: Seq,
}

/// Whether a packet is the last of its message (LDCP fast start makes the
/// last packet of a short message ECN-capable, draft-dai §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum MessageEnd {
    /// More packets of the message follow.
    More,
    /// This packet ends the message.
    Last,
}

/// The ECN-Echo flag of an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EcnEcho {
    /// ECE = 0: none of the acknowledged packets was CE-marked.
    NotMarked,
    /// ECE = 1: a CE-marked packet is acknowledged.
    Marked,
}

/// An acknowledgement as the Rx pipeline hands it to the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Ack<'a> {
    /// Cumulative acknowledgement: every byte before this is received.
    pub cum_ack: Seq,
    /// The sender's `snd_nxt` when the ACK arrived (HPCC++ Figure 6, line 24).
    pub snd_nxt: Seq,
    /// The ECN-Echo flag.
    pub ece: EcnEcho,
    /// Telemetry echoed by the receiver, first hop first; empty if none.
    pub telemetry: &'a [HopSample],
    /// Round-trip time measured for the acknowledged data (the NIC
    /// timestamps data and the receiver echoes it), ns; LDCP's RTT in
    /// RTT/cw and cw/RTT (draft-dai §2.2, §3.2). HPCC++ uses the base RTT T.
    pub rtt_ns: Option<u32>,
    /// The NICs' timestamps of the acknowledged packet and its ACK, with
    /// what the receiver saw of the path and of itself; `None` where the
    /// NICs give none. Swift's delays come from these.
    pub nic: Option<NicSample>,
    /// HPCC-PINT's utilization code echoed from the acknowledged packet;
    /// `None` where the ACK carries none (the receiver or the NIC samples
    /// which ACKs carry it).
    pub pint: Option<PintSample>,
    /// The entropy value of the packet that sent this ACK, echoed: its
    /// path's answer for a sprayed flow ([`EventKind::Spray`]; ECN-Echo
    /// says whether the path was marked). `None` where the ACK names no
    /// path.
    pub ev: Option<Ev>,
}

impl<'a> Ack<'a> {
    /// An ACK of `cum_ack` at `snd_nxt` that carries nothing else: not
    /// ECN-marked, no telemetry, RTT, NIC timestamps or PINT code. Fields
    /// an algorithm reads are set on it by struct update
    /// (`Ack { rtt_ns: Some(rtt), ..Ack::new(cum, nxt) }`), so that a
    /// field added for one algorithm changes no other algorithm's code.
    pub const fn new(cum_ack: Seq, snd_nxt: Seq) -> Self {
        Ack {
            cum_ack,
            snd_nxt,
            ece: EcnEcho::NotMarked,
            telemetry: &[],
            rtt_ns: None,
            nic: None,
            pint: None,
            ev: None,
        }
    }
}

/// A NACK of one trimmed packet, as the Rx pipeline hands it to the
/// engine ([`EventKind::Nack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Nack {
    /// First byte of the trimmed packet.
    pub seq: Seq,
    /// The packet's bytes, as the sender counts them in flight.
    pub len: u32,
    /// The flow's cumulative acknowledgement when the NACK arrived (a
    /// byte-counting transport's received bytes, as on its ACKs).
    pub cum_ack: Seq,
    /// The sender's `snd_nxt` when the NACK arrived, this packet still
    /// counted: `snd_nxt − cum_ack` bytes are in flight.
    pub snd_nxt: Seq,
    /// The time from the packet's sending to this NACK, ns; `None` where
    /// the sender cannot tell (the packet was sent more than once).
    pub rtt_ns: Option<u32>,
    /// Whether the packet was trimmed at its last hop, the receiver's
    /// link (the path itself was not the bottleneck).
    pub last_hop: bool,
    /// The ECN-Echo of the trimmed header.
    pub ece: EcnEcho,
    /// The trimmed packet's entropy value, echoed: for a sprayed flow, a
    /// cut before the last hop penalises its path; at the last hop, the
    /// path answered as its ECN-Echo says. `None` where it names no path.
    pub ev: Option<Ev>,
}

impl Nack {
    /// A NACK of the `len` bytes at `seq`, with `cum_ack` and `snd_nxt`
    /// as [`Ack::new`] takes them; no RTT, not at the last hop, not
    /// marked, no EV.
    pub const fn new(seq: Seq, len: u32, cum_ack: Seq, snd_nxt: Seq) -> Self {
        Nack {
            seq,
            len,
            cum_ack,
            snd_nxt,
            rtt_ns: None,
            last_hop: false,
            ece: EcnEcho::NotMarked,
            ev: None,
        }
    }
}

/// HPCC-PINT's utilization code as an ACK echoes it: the largest code
/// the data packet's switches wrote, in the width the fabric uses
/// ([`crate::wire::pint`]). The engine decodes it by a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PintSample {
    /// The field's width (and with it the logarithm's base).
    pub width: PintWidth,
    /// The code p: the path's utilization is about b^p/512.
    pub code: u16,
}

/// What the NICs measured of one data packet and its ACK (Swift,
/// SIGCOMM 2020, §3.1 and Figure 4): four timestamps, each read from the
/// free-running nanosecond counter of the NIC that took it (so only
/// differences on one NIC's counter mean anything, modulo 2^32), the
/// forward path's hop count and the receiver's Rx buffer level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct NicSample {
    /// t1: the sender's NIC sent the data packet (sender's counter, ns).
    pub t1: u32,
    /// t2: the receiver's NIC received it (receiver's counter, ns).
    pub t2: u32,
    /// t3: the receiver's NIC sent the ACK (receiver's counter, ns).
    pub t3: u32,
    /// t4: the sender's NIC received the ACK (sender's counter, ns).
    pub t4: u32,
    /// Switches the data packet crossed (from its IP TTL: 64 − TTL at the
    /// receiver for a sender that sets 64).
    pub forward_hops: u8,
    /// The receiver's Rx buffer occupancy when it sent the ACK, in
    /// 1/[`NicSample::RX_LEVELS`] steps of its size (Falcon's 5-bit level:
    /// 0 empty ..= 31 full).
    pub rx_buffer_level: u8,
}

impl NicSample {
    /// The Rx buffer levels' count: a level is below this.
    pub const RX_LEVELS: u8 = 32;
    /// The largest round trip a sample may span, exclusive: 2^24 ns (16.8
    /// ms). A longer one is a wrapped or stale counter, not a measurement.
    pub const MAX_RTT_NS: u32 = 1 << 24;

    /// The round trip t4 − t1 and the fabric's part of it, (t4 − t1) −
    /// (t3 − t2), in ns: Swift's RTT and fabric delay (§3.1). Each
    /// difference is taken on one NIC's counter, modulo 2^32, so a counter
    /// that wrapped between two stamps still gives its true difference.
    /// `Err(BadSample)` for what no network produces: a round trip of 0 or
    /// of 2^24 ns or more, a receiver's time longer than the round trip,
    /// or a level of 32 or more.
    pub fn delays(&self) -> Result<(u32, u32), Error> {
        let rtt = self.t4.wrapping_sub(self.t1);
        let remote = self.t3.wrapping_sub(self.t2);
        if rtt == 0 || rtt >= Self::MAX_RTT_NS || remote >= rtt || self.rx_buffer_level >= Self::RX_LEVELS {
            return Err(Error::BadSample);
        }
        Ok((rtt, rtt - remote))
    }
}

/// What happened to a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EventKind<'a> {
    /// Create the flow's state. The decision gives its initial window and rate.
    Start(FlowParams),
    /// Remove the flow's state.
    End,
    /// The scheduler is about to send bytes `[seq, seq + len)` (PktSend,
    /// HPCC++ §6.3.1). The decision's `ecn` is the codepoint for this packet.
    Sent {
        /// First byte of the packet.
        seq: Seq,
        /// Payload length in bytes.
        len: u32,
        /// Whether it is the last packet of its message.
        end: MessageEnd,
    },
    /// An ACK (with or without telemetry) arrived at the sender.
    Ack(Ack<'a>),
    /// The transport detected a loss at `first_lost` (a go-back-N NACK
    /// or a timeout).
    Loss {
        /// First byte to retransmit (go-back-N).
        first_lost: Seq,
        /// The entropy value the timed-out packet took, for a sprayed
        /// flow: its own path is penalised. `None` for a loss that names
        /// no path (a go-back-N NACK).
        ev: Option<Ev>,
    },
    /// The receiver NACKed one packet that a switch trimmed to its header
    /// (a trimming fabric's transport, such as Ultra Ethernet's: the
    /// packet alone is sent again). An algorithm without a NACK rule of
    /// its own takes it as a [`EventKind::Loss`] at the packet's first
    /// byte.
    Nack(Nack),
    /// A congestion notification packet (LDCP commercial-NIC variant).
    Cnp,
    /// A response to an RTT probe (LDCP commercial-NIC variant, §3.2):
    /// "the sender compares the timestamp difference to calculate the RTT".
    RttResponse {
        /// The request this answers (echoed from [`Request::Probe`]).
        probe: ProbeId,
        /// The measured RTT, ns, if the NIC timed it.
        rtt_ns: Option<u32>,
    },
    /// A telemetry response to an HPCC++ probe: the one hop the responder
    /// chose (§7.1), `hop_index` being its position on the path.
    ProbeResponse {
        /// The probe this answers (echoed from [`Request::Probe`]).
        probe: ProbeId,
        /// Position of the reported hop on the path, 0 = first.
        hop_index: u8,
        /// The reported hop.
        hop: HopSample,
    },
    /// At the receiver: a data packet carrying telemetry arrived (Rx-HPCC
    /// `NewINT`, §6.3.2).
    RxTelemetry {
        /// The packet's telemetry, first hop first.
        telemetry: &'a [HopSample],
    },
    /// At the receiver: a probe carrying telemetry arrived; the decision's
    /// request is the reply (§7.1).
    ProbeRequest {
        /// The probe's telemetry, first hop first.
        telemetry: &'a [HopSample],
    },
    /// At the sender: Rx-HPCC window feedback from the receiver.
    Feedback {
        /// The window the receiver computed.
        window: Window,
    },
    /// At the sender: the receiver reports N concurrent flows on its last
    /// hop; W_ai becomes W_init·(1−eta)/N (HPCC++ §5).
    FlowCount {
        /// Number of concurrent flows, at least 1.
        flows: u16,
    },
    /// The flow's timer fired.
    Timer,
    /// The flow sprays its packets over many paths from now on: each
    /// `Sent`'s decision names the packet's entropy value, and the EVs
    /// echoed on ACKs, NACKs and timeouts steer the choice
    /// ([`crate::path`]). Refused by an engine whose slots keep no path
    /// state ([`crate::path::NoPaths`]).
    Spray(Spray),
}

/// One event for one flow at one instant's worth of input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Event<'a> {
    /// The flow it concerns.
    pub flow: FlowId,
    /// What happened.
    pub kind: EventKind<'a>,
}

/// ECN codepoint for the flow's packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Ecn {
    /// Not ECN-capable (Not-ECT, `00`): WRED drops it above threshold K.
    NotEct,
    /// ECN-capable (ECT(0), `10`): WRED marks it CE instead of dropping.
    Ect,
}

/// What the flow's single timer should do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum TimerRequest {
    /// Leave it as it is (armed or not).
    Keep,
    /// Arm it (replacing any armed deadline) to fire at this instant.
    Arm(Instant),
    /// Disarm it.
    Cancel,
}

/// Something the NIC should do for the flow now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Request {
    /// Nothing.
    None,
    /// Send a telemetry probe (HPCC++ §6.2.1) or an RTT request (LDCP
    /// §3.2) carrying `id`, which its response echoes.
    Probe {
        /// The probe's number.
        id: ProbeId,
    },
    /// Send window feedback to the data sender (Rx-HPCC, §6.3.2 line 31).
    Feedback {
        /// The window to carry.
        window: Window,
    },
    /// Reply to a probe with the telemetry of the hop at `hop_index` in the
    /// `ProbeRequest`'s stack, and only that hop (§7.1).
    ProbeReply {
        /// Position of the chosen hop on the path.
        hop_index: u8,
    },
    /// Send one packet now although the window is below one packet (LDCP
    /// §2.2: a flow with cw < 1 is ticked out by a timer).
    ReleaseOne,
    /// Retransmit from this sequence number (go-back-N, LDCP §3.1).
    GoBackN {
        /// First byte to send again.
        from: Seq,
    },
}

/// How fast a flow may send, as both drafts state it: `bytes` every `per`
/// (HPCC++ Figure 6, line 27: R = W/T; LDCP: rate = cw·MTU/RTT). A pacer
/// that adds `bytes` of credit every `per` needs no division; one that is
/// programmed in bit/s takes [`Pacing::rate`]. The engine leaves that
/// division to whoever needs it: on a soft core it is a fifth of an
/// LDCP ACK's instructions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Pacing {
    /// Bytes the flow may send …
    pub bytes: Window,
    /// … every this long.
    pub per: BaseRtt,
}

impl Pacing {
    /// The rate in bit/s: `bytes · 8 / per`, rounded down (exactly for
    /// windows below 1 MiB, short by at most 2^-24 of a raw window unit
    /// per ns above; five 32-bit divides).
    pub fn rate(self) -> Rate {
        crate::per_rtt::window_rate(self.bytes, self.per)
    }

    /// [`Pacing::rate`], to the bit, with its divisions by `per` taken from
    /// `kept` when they are for this `per`; otherwise done (five 32-bit
    /// divides) and left in `kept` for the next call.
    pub fn rate_with(self, kept: &mut Option<RateDivisor>) -> Rate {
        let div = match *kept {
            Some(RateDivisor(d)) if d.nanos() == self.per.as_nanos() => d,
            _ => {
                let d = crate::per_rtt::PerRtt::new(self.per);
                *kept = Some(RateDivisor(d));
                d
            }
        };
        div.rate(self.bytes)
    }
}

/// [`Pacing::rate`]'s divisions by `per`, done once for a flow's base RTT
/// and kept by the caller for [`Pacing::rate_with`]: the rate of each new
/// window is then two multiplications and a compare, the same to the bit.
/// A NIC that programs its pacer in bit/s keeps one per flow (`per`
/// seldom changes; HPCC++ keeps it for the flow's life).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateDivisor(crate::per_rtt::PerRtt);

/// The engine's answer for one flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
// 40 bytes, as before the EV: `Option<Ev>` (three bytes of alignment 1)
// fills what was padding. An `Option<u16>` there cost the decision 8 bytes
// and every event of every algorithm a store.
pub struct Decision {
    /// The flow's timer.
    pub timer: TimerRequest,
    /// An action to take now.
    pub request: Request,
    /// Most bytes in flight. Below one MTU only in LDCP's timer-clocked mode.
    pub window: Window,
    /// Pacing: `bytes` every `per` ([`Decision::rate`] in bit/s).
    pub pacing: Pacing,
    /// ECN codepoint for the packet of a `Sent` event, and the next ones.
    pub ecn: Ecn,
    /// The entropy value for the packet of a `Sent` event, for a flow
    /// that sprays ([`EventKind::Spray`]); `None` for every other event
    /// and for a flow that does not.
    pub ev: Option<Ev>,
}

impl Decision {
    /// A window `w` sent at most `w` per `per` (HPCC++'s R = W/T, LDCP's
    /// cw/RTT, DCTCP's cwnd per T), ECN-capable, no timer change, nothing
    /// asked: the answer a window controller starts each event from.
    pub const fn window_paced(w: Window, per: BaseRtt) -> Decision {
        Decision {
            window: w,
            pacing: Pacing { bytes: w, per },
            ecn: Ecn::Ect,
            timer: TimerRequest::Keep,
            request: Request::None,
            ev: None,
        }
    }

    /// The pacing rate in bit/s ([`Pacing::rate`]).
    pub fn rate(&self) -> Rate {
        self.pacing.rate()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Swift's two delays from the four stamps, each difference on one
    /// NIC's counter across its wrap; what no network makes is refused.
    #[test]
    fn nic_samples_give_rtt_and_fabric_delay_or_a_refusal() {
        let s = NicSample {
            t1: u32::MAX - 3_999,
            t2: 77_000,
            t3: 78_000,
            t4: 10_000,
            forward_hops: 5,
            rx_buffer_level: 15,
        };
        // t4 − t1 = 4000 + 10 000; t3 − t2 = 1000.
        assert_eq!(s.delays(), Ok((14_000, 13_000)));
        let bad = [
            NicSample { t4: s.t1, ..s },
            NicSample { t3: s.t2 + 14_000, ..s },
            NicSample {
                t3: s.t2.wrapping_sub(1),
                ..s
            },
            NicSample {
                t4: s.t1.wrapping_add(1 << 24),
                ..s
            },
            NicSample {
                rx_buffer_level: 32,
                ..s
            },
        ];
        for b in bad {
            assert_eq!(b.delays(), Err(Error::BadSample), "{b:?}");
        }
        assert_eq!(
            NicSample {
                t4: s.t1.wrapping_add((1 << 24) - 1),
                ..s
            }
            .delays()
            .map(|d| d.0),
            Ok((1 << 24) - 1)
        );
    }

    /// With divisions kept, `Pacing::rate` to the bit for every window of
    /// the base RTT they are for; a pacing of another base RTT replaces
    /// them.
    #[test]
    fn a_rate_with_kept_divisions_is_the_rate() {
        for t in [100u32, 999, 12_000, 65_537, 1 << 20] {
            let per = BaseRtt::from_nanos(t).unwrap();
            let other = BaseRtt::from_nanos(if t > BaseRtt::MIN_NS { t - 1 } else { t + 1 }).unwrap();
            let mut kept = None;
            for w in [1u32, 1_600, 150_000 * 16, (1 << 24) - 1, u32::MAX] {
                let p = Pacing {
                    bytes: Window::from_bits(w),
                    per,
                };
                assert_eq!(p.rate_with(&mut kept), p.rate(), "w {w} t {t}");
                let for_t = kept;
                let q = Pacing { per: other, ..p };
                assert_eq!(q.rate_with(&mut kept), q.rate(), "w {w} t {t} and another");
                assert_ne!(kept, for_t, "the divisions for another base RTT replace them");
                assert_eq!(p.rate_with(&mut kept), p.rate());
                assert_eq!(kept, for_t);
            }
        }
    }
}
