//! LDCP on a commercial NIC (draft-dai §3.2): rate-based, "the window is
//! decreased by beta upon *every* CNP", and "upon the arrival of an RTT
//! response ... the window should increase by alpha"; rate = cw/RTT.
//!
//! ```text
//!   start: send RTT request n, arm timeout
//!   RTT response to n: cw += alpha (≤ IW), send request n+1, re-arm
//!   RTT response to another number: ignored (a superseded or duplicate request)
//!   timeout (no response): send request n+1, re-arm, no AI
//!   CNP: cw = max(gamma, cw − beta)
//! ```
//!
//! Below one packet too, a CNP takes beta: §3.2 says "decreased by beta
//! upon *every* CNP" and gives this variant no sub-packet rule (the
//! window variant's max(gamma, cw/2) belongs to its ACK-clocked §2.2); the
//! floor is gamma.
//!
//! One request is outstanding at a time: each has a number ([`ProbeId`]),
//! and only the response to the current one counts, so a late response to
//! a request a timeout re-sent adds no second alpha and starts no second
//! chain. State: 20 bytes.

use bitfield_struct::bitfield;

use super::{iw_packets, LdcpConfig, Tick16, FRACTION_TO_PACKETS};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, FlowParams, MessageEnd, ProbeId, Request};
use crate::units::{BaseRtt, Instant, Packets, Seq};

#[bitfield(u32, defmt = cfg(feature = "defmt"))]
#[derive(PartialEq, Eq)]
struct Status {
    /// IW in 1/16 packets: the cap on cw (the line rate).
    #[bits(20)]
    iw16: u32,
    /// An RTT request is out.
    probe_outstanding: bool,
    /// The number of the request last sent.
    #[bits(8)]
    probe_id: u8,
    #[bits(3)]
    __: u8,
}

/// LDCP commercial-NIC state for one flow. 20 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct LdcpRate {
    cw: Packets,
    srtt: BaseRtt,
    /// The path's base RTT: the floor of srtt.
    base: BaseRtt,
    /// Probe timeout deadline.
    deadline: Tick16,
    status: Status,
}

impl LdcpRate {
    /// A flow at cw = IW = BDP (line rate). The first decision sends an RTT
    /// request ("at the beginning of a flow, an RTT request is sent out").
    pub fn new(cfg: &LdcpConfig, p: &FlowParams, now: Instant) -> Result<(Self, Decision), Error> {
        let iw16 = cfg.initial_window_16ths(p)?;
        let mut s = LdcpRate {
            cw: iw_packets(iw16),
            srtt: p.base_rtt,
            base: p.base_rtt,
            deadline: Tick16::default(),
            status: Status::new().with_iw16(iw16 & 0xF_FFFF),
        };
        let d = s.send_probe(cfg, now);
        Ok((s, d))
    }

    /// The window cw in packets.
    pub fn cw(&self) -> Packets {
        self.cw
    }

    /// Rate = cw·MTU/RTT; window cw·MTU.
    pub fn decision(&self, cfg: &LdcpConfig) -> Decision {
        Decision::window_paced(self.cw.to_window(cfg.mtu.bytes()), self.srtt)
    }

    fn send_probe(&mut self, cfg: &LdcpConfig, now: Instant) -> Decision {
        // At most 255 · 2^20 ns < 2^28: fits.
        let timeout = (cfg.probe_timeout_rtts as u32).saturating_mul(self.srtt.as_nanos());
        let (deadline, arm) = Tick16::after(now, timeout);
        self.deadline = deadline;
        let id = ProbeId(self.status.probe_id()).next();
        self.status.set_probe_id(id.0);
        self.status.set_probe_outstanding(true);
        let mut d = self.decision(cfg);
        d.request = Request::Probe { id };
        // Saturates near the end of time instead of wrapping into the past.
        d.timer = arm;
        d
    }
}

impl Controller for LdcpRate {
    type Config = LdcpConfig;

    fn validate(cfg: &LdcpConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &LdcpConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::LdcpRate {
            return Err(Error::NotApplicable);
        }
        LdcpRate::new(cfg, p, now)
    }

    fn decision(&self, cfg: &LdcpConfig) -> Decision {
        LdcpRate::decision(self, cfg)
    }

    /// MD: cw = max(gamma, cw − beta) on every CNP.
    fn cnp(&mut self, cfg: &LdcpConfig, _now: Instant) -> Result<Decision, Error> {
        // beta ≤ 2^24 raw → ≤ 2^16 in cw units.
        let beta = (cfg.beta.to_bits() >> FRACTION_TO_PACKETS) as u64;
        let cw = (self.cw.to_bits() as u64).saturating_sub(beta);
        self.cw = Packets::from_bits_saturating(cw).max(cfg.gamma_packets());
        Ok(self.decision(cfg))
    }

    /// AI: an RTT response means one RTT has passed: cw += alpha, capped at
    /// IW; the next request goes out at once. The measured RTT, if given,
    /// feeds the smoothed RTT of rate = cw/RTT. A response to another
    /// request than the current one (superseded by a timeout, or a
    /// duplicate) is ignored.
    fn rtt_response(
        &mut self,
        cfg: &LdcpConfig,
        now: Instant,
        probe: ProbeId,
        rtt_ns: Option<u32>,
    ) -> Result<Decision, Error> {
        if !self.status.probe_outstanding() || probe.0 != self.status.probe_id() {
            return Ok(self.decision(cfg));
        }
        if let Some(sample) = rtt_ns {
            // The base RTT is the floor: IW/T is the line rate.
            let floor = self.base.as_nanos();
            self.srtt = super::window::smooth_rtt(self.srtt, sample.max(floor));
        }
        let alpha = (cfg.alpha.to_bits() >> FRACTION_TO_PACKETS) as u64;
        let cap = iw_packets(self.status.iw16());
        self.cw = Packets::from_bits_saturating(self.cw.to_bits() as u64 + alpha).min(cap);
        Ok(self.send_probe(cfg, now))
    }

    /// The request timed out: send it again without AI. Early or unarmed
    /// firings are ignored.
    fn timer(&mut self, cfg: &LdcpConfig, now: Instant) -> Result<Decision, Error> {
        let due = self.deadline.due(now);
        if !self.status.probe_outstanding() || !due {
            return Ok(self.decision(cfg));
        }
        Ok(self.send_probe(cfg, now))
    }

    /// The commercial NIC's ACK/NACK handling stays in the ASIC.
    fn ack(&mut self, cfg: &LdcpConfig, _now: Instant, _ack: &Ack<'_>) -> Result<Decision, Error> {
        Ok(LdcpRate::decision(self, cfg))
    }

    fn sent(&mut self, cfg: &LdcpConfig, _: Instant, _: Seq, _: u32, _: MessageEnd) -> Result<Decision, Error> {
        Ok(LdcpRate::decision(self, cfg))
    }

    fn loss(&mut self, cfg: &LdcpConfig, _now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        Ok(LdcpRate::decision(self, cfg))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Algorithm, TimerRequest};
    use crate::units::{LinkSpeed, Seq};

    fn params() -> FlowParams {
        FlowParams {
            algorithm: Algorithm::LdcpRate,
            base_rtt: BaseRtt::from_nanos(8_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(100),
            start_seq: Seq(0),
        }
    }

    #[test]
    fn starts_at_line_rate_with_a_probe() {
        let cfg = LdcpConfig::draft_default();
        let (s, d) = LdcpRate::new(&cfg, &params(), Instant::ZERO).unwrap();
        assert_eq!(s.cw(), Packets::from_int(100));
        assert_eq!(d.rate().as_bps(), 100_000_000_000);
        assert_eq!(d.request, Request::Probe { id: ProbeId(1) });
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(32_000)));
    }

    #[test]
    fn md_per_cnp_ai_per_response() {
        let cfg = LdcpConfig::draft_default();
        let (mut s, _) = LdcpRate::new(&cfg, &params(), Instant::ZERO).unwrap();
        for _ in 0..4 {
            s.cnp(&cfg, Instant::ZERO).unwrap();
        }
        assert_eq!(s.cw(), Packets::from_int(98));
        // rate = 98 kB / 8 us = 98 Gb/s.
        assert_eq!(s.decision(&cfg).rate().as_bps(), 98_000_000_000);
        let d = s
            .rtt_response(&cfg, Instant::from_nanos(8_000), ProbeId(1), None)
            .unwrap();
        assert_eq!(s.cw(), Packets::from_int(99));
        assert_eq!(d.request, Request::Probe { id: ProbeId(2) });
        // A duplicate of the answered response adds nothing.
        s.rtt_response(&cfg, Instant::from_nanos(9_000), ProbeId(1), None)
            .unwrap();
        assert_eq!(s.cw(), Packets::from_int(99));
    }

    #[test]
    fn cw_floors_at_gamma_and_caps_at_iw() {
        let cfg = LdcpConfig::draft_default();
        let (mut s, _) = LdcpRate::new(&cfg, &params(), Instant::ZERO).unwrap();
        for _ in 0..1000 {
            s.cnp(&cfg, Instant::ZERO).unwrap();
        }
        assert_eq!(s.cw(), cfg.gamma_packets());
        let (mut s, _) = LdcpRate::new(&cfg, &params(), Instant::ZERO).unwrap();
        s.rtt_response(&cfg, Instant::ZERO, ProbeId(1), None).unwrap();
        assert_eq!(s.cw(), Packets::from_int(100));
    }

    #[test]
    fn timeout_reissues_without_ai() {
        let cfg = LdcpConfig::draft_default();
        let (mut s, _) = LdcpRate::new(&cfg, &params(), Instant::ZERO).unwrap();
        s.cnp(&cfg, Instant::ZERO).unwrap();
        let cw = s.cw();
        assert_eq!(
            s.timer(&cfg, Instant::from_nanos(31_999)).unwrap().request,
            Request::None
        );
        let d = s.timer(&cfg, Instant::from_nanos(32_000)).unwrap();
        assert_eq!(d.request, Request::Probe { id: ProbeId(2) });
        assert_eq!(d.timer, TimerRequest::Arm(Instant::from_nanos(64_000)));
        assert_eq!(s.cw(), cw);
    }

    /// Issue: the duplicate-response guard was dead code, so after a
    /// timeout re-sent the request, the late and the new response both
    /// added alpha and both started a chain: AI doubled per RTT, for good.
    /// Now the late response is ignored and one chain goes on.
    #[test]
    fn a_late_response_to_a_resent_request_adds_nothing() {
        let cfg = LdcpConfig::draft_default();
        let (mut s, _) = LdcpRate::new(&cfg, &params(), Instant::ZERO).unwrap();
        for _ in 0..1000 {
            s.cnp(&cfg, Instant::ZERO).unwrap();
        }
        let cw0 = s.cw();
        assert_eq!(cw0, cfg.gamma_packets());
        // Request 1 is slow: the timeout re-sends it as request 2.
        let d = s.timer(&cfg, Instant::from_nanos(32_000)).unwrap();
        assert_eq!(d.request, Request::Probe { id: ProbeId(2) });
        // The late response to 1: nothing.
        let d = s
            .rtt_response(&cfg, Instant::from_nanos(33_000), ProbeId(1), Some(33_000))
            .unwrap();
        assert_eq!((s.cw(), d.request), (cw0, Request::None));
        // The response to 2: one alpha, request 3.
        let d = s
            .rtt_response(&cfg, Instant::from_nanos(41_000), ProbeId(2), Some(9_000))
            .unwrap();
        assert_eq!(s.cw(), Packets::from_bits(cw0.to_bits() + (cfg.alpha.to_bits() >> 8)));
        assert_eq!(d.request, Request::Probe { id: ProbeId(3) });
        // Over 20 further RTTs, one chain: cw grows by alpha per response.
        let mut id = ProbeId(3);
        let mut now = 41_000u64;
        for _ in 0..20 {
            now += 8_000;
            let d = s.rtt_response(&cfg, Instant::from_nanos(now), id, Some(8_000)).unwrap();
            let Request::Probe { id: next } = d.request else {
                panic!("the chain continues")
            };
            // The superseded number arriving again changes nothing.
            let before = s;
            s.rtt_response(&cfg, Instant::from_nanos(now + 1), ProbeId(1), Some(8_000))
                .unwrap();
            assert_eq!(s, before);
            id = next;
        }
        let grown = s.cw().to_bits() - cw0.to_bits();
        assert_eq!(grown, 21 * (cfg.alpha.to_bits() >> 8));
    }
}
