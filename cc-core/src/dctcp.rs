//! DCTCP (RFC 8257) as a NIC window controller: the ECN-driven baseline
//! most datacenters run today, behind the same event API as HPCC++ and
//! LDCP so that one simulator, one firmware image and one set of tests
//! compare them.
//!
//! | part                                              | RFC 8257 | here                 |
//! |---------------------------------------------------|----------|----------------------|
//! | bytes acknowledged and bytes ECE-marked per window | §3.3     | [`Dctcp::ack`]       |
//! | alpha = (1 − g)·alpha + g·F once per window        | §3.3     | [`Dctcp::ack`]       |
//! | cwnd = cwnd·(1 − alpha/2), at most once per window | §3.3     | [`Dctcp::ack`]       |
//! | otherwise standard congestion avoidance (RFC 5681) | §3.3     | [`Dctcp::ack`]       |
//! | loss: as standard TCP (halve, once per window)     | §3.5     | [`Dctcp::loss`]      |
//!
//! Choices the RFC leaves to the implementation, as RDMA NICs make them:
//! a flow starts at cwnd = W_max = line rate · T (the path's BDP, as
//! HPCC++'s W_init) instead of slow start, so the window never exceeds a
//! BDP and only falls below it by the rules above; alpha starts at 1
//! (§3.3: "initialized to 1"); every data packet is ECN-capable; the pacer
//! sends cwnd per base RTT T. The receiver's rule (ECE on the ACK of every
//! CE-marked packet, §3.2) belongs to the receiver's transport.
//!
//! Units: windows in [`Window`] (2^-4 byte), alpha and g in [`Fraction`]
//! (2^-24); every product fits 64 bits (stated at each).

#[cfg(feature = "bench")]
use crate::bench::AckBench;
use crate::codec::{ConfigReader, ConfigWriter};
use crate::controller::Controller;
use crate::error::Error;
use crate::event::{Ack, Algorithm, Decision, EcnEcho, FlowParams, MessageEnd, Request, TimerRequest};
use crate::fixmath::{div_u64, ratio_q24};
use crate::params::{param, EcnMarking, Gate, Network, Param, Unit};
#[cfg(feature = "bench")]
use crate::telemetry::HopSample;
use crate::units::{BaseRtt, Fraction, Instant, Seq, Window};
use crate::wire::Result as WireResult;

/// DCTCP parameters shared by every flow of an engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct DctcpConfig {
    /// Sender maximum segment size, bytes (64 ..= 65535): congestion
    /// avoidance adds one per window.
    pub mtu: u32,
    /// Estimation gain g of §3.3, 0 < g ≤ 1 (the RFC suggests 1/16).
    pub g: Fraction,
    /// The smallest window, ≥ 1 byte (one MSS in TCP; one packet here by
    /// default).
    pub w_min: Window,
}

impl DctcpConfig {
    /// 1000-byte packets, g = 1/16 (RFC 8257 §4.2), W_min one packet.
    pub const fn rfc_default() -> Self {
        DctcpConfig {
            mtu: 1000,
            g: match Fraction::inverse_pow2(4) {
                Some(f) => f,
                None => Fraction::ONE,
            },
            w_min: Window::from_bytes(1000),
        }
    }

    /// Checks every field's range.
    pub fn validate(&self) -> Result<(), Error> {
        match self.invalid_field() {
            None => Ok(()),
            Some(_) => Err(Error::InvalidParams),
        }
    }

    /// The first field out of its range, by its name here; `None` if
    /// every field is in range.
    pub fn invalid_field(&self) -> Option<&'static str> {
        let w_min_ok =
            self.w_min >= Window::from_bytes(1) && self.w_min <= Window::from_bytes(Window::MAX_CONFIG_BYTES);
        [
            (!(64..=65_535).contains(&self.mtu), "mtu"),
            (self.g.to_bits() == 0, "g"),
            (!w_min_ok, "w_min"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }
}

impl Default for DctcpConfig {
    fn default() -> Self {
        Self::rfc_default()
    }
}

impl crate::controller::AlgorithmConfig for DctcpConfig {
    type Sender<const H: usize> = Dctcp;

    /// A window; marking at one threshold K = K_min = K_max with P_max 1
    /// (RFC 8257 §3.1), 3 KB per Gb/s as the HPCC reference simulator's
    /// DCTCP runs set it (30 KB at 10 Gb/s).
    const NETWORK: Network = Network {
        marking: Some(EcnMarking {
            kmin_bytes_per_gbps: 3_000,
            kmax_bytes_per_gbps: 3_000,
            pmax_percent: 100,
        }),
        ..Network::new(Gate::Window)
    };

    const DEFAULT: Self = Self::rfc_default();

    /// g, the MSS and W_min as a table sets them; the MSS and W_min
    /// follow the NIC's payload where a front end knows it (one packet's
    /// payload each).
    const PARAMS: &'static [Param<Self>] = &[
        param!(
            DctcpConfig,
            "g",
            g,
            Unit::Fraction,
            "(0, 1]",
            "estimation gain",
            fraction
        ),
        param!(
            DctcpConfig,
            "mtu_bytes",
            mtu,
            Unit::Bytes,
            "64 ..= 65535",
            "bytes of a packet (the MSS): congestion avoidance adds one per window"; payload
        ),
        param!(
            DctcpConfig,
            "w_min_bytes",
            w_min,
            Unit::Bytes,
            "1 ..= 67108864",
            "smallest window",
            window; payload
        ),
    ];

    #[cfg(feature = "bench")]
    /// ACKs 100 ns apart, each a packet more than the last, every eighth
    /// ECE-marked ([`bench_ack`]).
    const ACK_BENCH: Option<AckBench> = Some(AckBench {
        name: "dctcp-ack",
        row: "DCTCP ACK (baseline)",
        ack: bench_ack,
        interval_ns: 100,
        targets: None,
        state_bytes: None,
    });

    fn validate(&self) -> Result<(), Error> {
        DctcpConfig::validate(self)
    }

    fn invalid_field(&self) -> Option<&'static str> {
        DctcpConfig::invalid_field(self)
    }

    /// mtu 4 | g 4 | W_min 4.
    fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
        for v in [self.mtu, self.g.to_bits(), self.w_min.to_bits()] {
            w.u32(v)?;
        }
        Ok(())
    }

    fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<Self> {
        Ok(DctcpConfig {
            mtu: r.u32()?,
            g: r.fraction()?,
            w_min: Window::from_bits(r.u32()?),
        })
    }

    /// The window within [W_min, max(W_min, line rate · T)]; no timer, no
    /// request.
    fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
        let bdp = p.line_rate.bdp_bytes(p.base_rtt);
        if d.window < self.w_min {
            return Err("DCTCP window below W_min");
        }
        if d.window.bytes_floor() as u64 > bdp.max(self.w_min.bytes_floor() as u64) {
            return Err("DCTCP window above line rate · T");
        }
        if d.timer != TimerRequest::Keep || d.request != Request::None {
            return Err("DCTCP asked for a timer or a request");
        }
        Ok(())
    }
}

#[cfg(feature = "bench")]
/// The benchmark's ACK `n` (from 1): it acknowledges n packets of 1000
/// bytes with 100 packets more in flight, and every eighth is ECE-marked,
/// so that windows end, alpha updates, the window is cut and grows.
pub fn bench_ack(n: u32, _hops: &mut [HopSample; 5]) -> Ack<'_> {
    Ack {
        ece: if n.is_multiple_of(8) {
            EcnEcho::Marked
        } else {
            EcnEcho::NotMarked
        },
        ..Ack::new(
            Seq(n.wrapping_mul(1000)),
            Seq(n.wrapping_mul(1000).wrapping_add(100_000)),
        )
    }
}

/// One DCTCP flow at its sender: 44 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Dctcp {
    /// cwnd.
    w: Window,
    /// W_max = line rate · T, also the initial window.
    w_max: Window,
    /// Base RTT T: the pacer sends cwnd per T.
    t: BaseRtt,
    /// DCTCP.Alpha.
    alpha: Fraction,
    /// Highest cumulative ACK (SND.UNA).
    snd_una: Seq,
    /// Highest sequence sent, from `Sent` and from each ACK's `snd_nxt`.
    snd_nxt: Seq,
    /// DCTCP.WindowEnd: the observation window ends when SND.UNA passes it.
    window_end: Seq,
    /// The reduction in force lasts until SND.UNA passes this.
    cwr_end: Seq,
    /// DCTCP.BytesAcked (saturating).
    acked: u32,
    /// DCTCP.BytesMarked (saturating; never above `acked`).
    marked: u32,
    /// A reduction is in force (once per window of data, RFC 3168 §6.1.2).
    in_cwr: bool,
}

impl Dctcp {
    /// A flow at cwnd = W_max = line rate · T, alpha = 1.
    pub fn new(cfg: &DctcpConfig, p: &FlowParams) -> Result<Self, Error> {
        cfg.validate()?;
        if !p.line_rate.is_plausible() {
            return Err(Error::InvalidParams);
        }
        // bdp_bytes < 2^30; capped at the largest configurable window.
        let bdp = p.line_rate.bdp_bytes(p.base_rtt).min(Window::MAX_CONFIG_BYTES as u64);
        let w_max = Window::from_bytes(bdp as u32).max(cfg.w_min);
        Ok(Dctcp {
            w: w_max,
            w_max,
            t: p.base_rtt,
            alpha: Fraction::ONE,
            snd_una: p.start_seq,
            snd_nxt: p.start_seq,
            window_end: p.start_seq,
            cwr_end: p.start_seq,
            acked: 0,
            marked: 0,
            in_cwr: false,
        })
    }

    /// The current decision: cwnd, cwnd per T, ECN-capable, nothing asked.
    pub fn decision(&self) -> Decision {
        Decision::window_paced(self.w, self.t)
    }

    /// cwnd.
    pub fn window(&self) -> Window {
        self.w
    }

    /// W_max (the initial window).
    pub fn max_window(&self) -> Window {
        self.w_max
    }

    /// DCTCP.Alpha.
    pub fn alpha(&self) -> Fraction {
        self.alpha
    }

    /// Whether a reduction is in force (no further cut, no increase, until
    /// the data sent before it is acknowledged).
    pub fn in_cwr(&self) -> bool {
        self.in_cwr
    }

    /// Sets cwnd and alpha, e.g. to restore a checkpoint; refuses a window
    /// outside [W_min, W_max].
    pub fn restore(&mut self, cfg: &DctcpConfig, w: Window, alpha: Fraction) -> Result<(), Error> {
        if w < cfg.w_min || w > self.w_max {
            return Err(Error::InvalidParams);
        }
        self.w = w;
        self.alpha = alpha;
        Ok(())
    }

    fn enter_cwr(&mut self) {
        self.in_cwr = true;
        self.cwr_end = self.snd_nxt;
    }

    /// `alpha = (1 − g)·alpha + g·F`, F = BytesMarked/BytesAcked (§3.3).
    ///
    /// In 2^-24 units: F by [`ratio_q24`] (exact while BytesAcked < 2^24,
    /// within 2^-22 beyond; F ≤ 1 since BytesMarked ≤ BytesAcked), then
    /// `(alpha·(2^24 − g) + F·g + 2^23) >> 24`, rounded to nearest: each
    /// product < 2^24·2^24, the sum < 2^49. No window acknowledged (F
    /// undefined) leaves alpha as it is.
    fn update_alpha(&mut self, cfg: &DctcpConfig) {
        let Some(f) = ratio_q24(self.marked as u64, self.acked as u64) else {
            return;
        };
        let one = Fraction::ONE.to_bits() as u64;
        let f = f.min(one);
        let g = (cfg.g.to_bits() as u64).min(one);
        let a = self.alpha.to_bits() as u64;
        let next = (a * (one - g) + f * g + (one >> 1)) >> Fraction::FRAC_BITS;
        // next ≤ 2^24 (a convex combination of two values ≤ 2^24).
        self.alpha = Fraction::from_bits(next.min(one) as u32).unwrap_or(Fraction::ONE);
    }

    /// `cwnd = cwnd·(1 − alpha/2)` (§3.3), rounded down, at least W_min:
    /// `W_raw·(2^25 − alpha) >> 25` with W_raw < 2^32 and 2^24 ≤ 2^25 −
    /// alpha ≤ 2^25: the product < 2^57.
    fn cut(&mut self, cfg: &DctcpConfig) {
        let factor = (2u64 << Fraction::FRAC_BITS) - self.alpha.to_bits() as u64;
        let raw = (self.w.to_bits() as u64 * factor) >> (Fraction::FRAC_BITS + 1);
        self.w = Window::from_bits(raw as u32).clamp_to(cfg.w_min, self.w_max);
        self.enter_cwr();
    }

    /// RFC 5681 congestion avoidance by bytes: `cwnd += MSS·newly/cwnd`
    /// (one MSS per window acknowledged), rounded down, at most W_max. In
    /// 2^-4 bytes: `Δ_raw = 2^8·MSS·newly / W_raw`, numerator <
    /// 2^8·2^16·2^32 = 2^56; W_raw ≥ W_min > 0.
    fn increase(&mut self, newly: u32, cfg: &DctcpConfig) {
        let Some(w) = core::num::NonZeroU64::new(self.w.to_bits() as u64) else {
            return;
        };
        let step = div_u64(256 * cfg.mtu as u64 * newly as u64, w);
        let raw = (self.w.to_bits() as u64).saturating_add(step);
        self.w = Window::from_bits_saturating(raw).clamp_to(cfg.w_min, self.w_max);
    }
}

impl Controller for Dctcp {
    type Config = DctcpConfig;

    fn validate(cfg: &DctcpConfig) -> Result<(), Error> {
        cfg.validate()
    }

    fn start(cfg: &DctcpConfig, _now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        if p.algorithm != Algorithm::Dctcp {
            return Err(Error::NotApplicable);
        }
        let d = Dctcp::new(cfg, p)?;
        Ok((d, d.decision()))
    }

    fn decision(&self, _cfg: &DctcpConfig) -> Decision {
        Dctcp::decision(self)
    }

    /// The scheduler sends `[seq, seq + len)`.
    fn sent(
        &mut self,
        _cfg: &DctcpConfig,
        _now: Instant,
        seq: Seq,
        len: u32,
        _: MessageEnd,
    ) -> Result<Decision, Error> {
        let end = seq.add(len);
        if end.after(self.snd_nxt) {
            self.snd_nxt = end;
        }
        Ok(self.decision())
    }

    /// An ACK (§3.3, in the RFC's order):
    ///
    /// ```text
    /// newly = cum_ack − SND.UNA (0 for an old or duplicate ACK)
    /// BytesAcked += newly;  if ECE: BytesMarked += newly
    /// if SND.UNA > WindowEnd:                       the observation window ends
    ///     F = BytesMarked / BytesAcked
    ///     alpha = (1 − g)·alpha + g·F
    ///     WindowEnd = SND.NXT;  BytesAcked = BytesMarked = 0
    /// if ECE and no reduction in force:
    ///     cwnd = max(W_min, cwnd·(1 − alpha/2));  in force until SND.UNA > SND.NXT now
    /// else if no reduction in force:
    ///     cwnd = min(W_max, cwnd + MSS·newly/cwnd)  RFC 5681 congestion avoidance
    /// ```
    fn ack(&mut self, cfg: &DctcpConfig, _now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        let newly = if ack.cum_ack.after(self.snd_una) {
            let n = ack.cum_ack.bytes_since(self.snd_una);
            self.snd_una = ack.cum_ack;
            n
        } else {
            0
        };
        if ack.snd_nxt.after(self.snd_nxt) {
            self.snd_nxt = ack.snd_nxt;
        }
        if self.snd_una.after(self.snd_nxt) {
            // An ACK beyond anything known to be sent: what it covers was sent.
            self.snd_nxt = self.snd_una;
        }
        let ece = ack.ece == EcnEcho::Marked;
        self.acked = self.acked.saturating_add(newly);
        if ece {
            self.marked = self.marked.saturating_add(newly).min(self.acked);
        }
        if self.snd_una.after(self.window_end) {
            self.update_alpha(cfg);
            self.window_end = self.snd_nxt;
            self.acked = 0;
            self.marked = 0;
        }
        if self.in_cwr && self.snd_una.after(self.cwr_end) {
            self.in_cwr = false;
        }
        if ece {
            if !self.in_cwr {
                self.cut(cfg);
            }
        } else if !self.in_cwr && newly > 0 {
            self.increase(newly, cfg);
        }
        Ok(self.decision())
    }

    /// A loss (NACK or timeout): cwnd halves, once per window, as standard
    /// TCP (§3.5); alpha is kept.
    fn loss(&mut self, cfg: &DctcpConfig, _now: Instant, _first_lost: Seq) -> Result<Decision, Error> {
        if !self.in_cwr {
            let half = Window::from_bits(self.w.to_bits() / 2);
            self.w = half.clamp_to(cfg.w_min, self.w_max);
            self.enter_cwr();
        }
        Ok(self.decision())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Algorithm;
    use crate::units::LinkSpeed;

    fn flow() -> (DctcpConfig, Dctcp) {
        let cfg = DctcpConfig::rfc_default();
        let p = FlowParams {
            algorithm: Algorithm::Dctcp,
            base_rtt: BaseRtt::from_nanos(10_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(100),
            start_seq: Seq(0),
        };
        (cfg, Dctcp::new(&cfg, &p).unwrap())
    }

    fn ack(cum: u32, nxt: u32, ece: bool) -> Ack<'static> {
        Ack {
            ece: if ece { EcnEcho::Marked } else { EcnEcho::NotMarked },
            ..Ack::new(Seq(cum), Seq(nxt))
        }
    }

    /// 100 Gb/s · 10 µs = 125 000 bytes: the flow starts there, alpha = 1,
    /// and the first mark halves it (1 − 1/2).
    #[test]
    fn first_mark_halves_a_fresh_flow() {
        let (cfg, mut d) = flow();
        assert_eq!(d.window(), Window::from_bytes(125_000));
        // The first ACK ends the first observation window (WindowEnd =
        // SND.NXT at start): F = 1, alpha stays 1.
        let out = d.ack(&cfg, Instant::ZERO, &ack(1000, 125_000, true)).unwrap();
        assert_eq!(d.alpha(), Fraction::ONE);
        assert_eq!(out.window, Window::from_bytes(62_500));
        assert!(d.in_cwr());
        // Marked again within the same window: no second cut.
        d.ack(&cfg, Instant::ZERO, &ack(2000, 125_000, true)).unwrap();
        assert_eq!(d.window(), Window::from_bytes(62_500));
    }

    /// §3.3: with g = 1/16, a window with no marks takes alpha from 1 to
    /// 15/16; a window with a quarter of its bytes marked to
    /// (15/16)·alpha + 1/64.
    #[test]
    fn alpha_follows_the_marked_fraction_per_window() {
        let (cfg, mut d) = flow();
        d.ack(&cfg, Instant::ZERO, &ack(1000, 10_000, false)).unwrap();
        assert_eq!(d.alpha().to_bits(), 15 << 20);
        // Next window ends when SND.UNA passes 10 000.
        d.ack(&cfg, Instant::ZERO, &ack(4000, 10_000, true)).unwrap();
        assert!(d.in_cwr());
        d.ack(&cfg, Instant::ZERO, &ack(10_000, 20_000, false)).unwrap();
        assert_eq!(d.alpha().to_bits(), 15 << 20, "window not over yet");
        d.ack(&cfg, Instant::ZERO, &ack(13_000, 20_000, false)).unwrap();
        // Bytes acked 12 000 (1000 → 13 000), marked 3000: F = 1/4.
        let expect = (15.0 / 16.0) * (15.0 / 16.0) + 0.25 / 16.0;
        let got = d.alpha().to_bits() as f64 / (1u64 << 24) as f64;
        assert!((got - expect).abs() < 1e-7, "{got} vs {expect}");
    }

    /// The cut is by alpha/2, and the reduction lasts until the data sent
    /// before it is acknowledged; unmarked ACKs then grow cwnd by one MSS
    /// per window.
    #[test]
    fn cut_by_half_alpha_then_grow_one_mss_per_window() {
        let (cfg, mut d) = flow();
        d.ack(&cfg, Instant::ZERO, &ack(1000, 1000, false)).unwrap(); // alpha = 15/16
        let w0 = d.window().to_bits() as f64 / 16.0;
        d.ack(&cfg, Instant::ZERO, &ack(2000, 50_000, true)).unwrap();
        let w1 = d.window().to_bits() as f64 / 16.0;
        // That ACK also ended the observation window (F = 1): the cut uses
        // the new alpha.
        let alpha = d.alpha().to_bits() as f64 / (1u64 << 24) as f64;
        assert!((alpha - (15.0 / 16.0 * 15.0 / 16.0 + 1.0 / 16.0)).abs() < 1e-7);
        assert!((w1 - w0 * (1.0 - alpha / 2.0)).abs() <= 1.0 / 16.0, "{w0} -> {w1}");
        // Still in CWR up to 50 000: no growth.
        d.ack(&cfg, Instant::ZERO, &ack(50_000, 50_000, false)).unwrap();
        assert_eq!(d.window().to_bits() as f64 / 16.0, w1);
        // Past it: one window of ACKs adds about one MSS.
        let mut cum = 50_000;
        let start = d.window().to_bits() as f64 / 16.0;
        while (cum - 50_000) as f64 <= start {
            cum += 1000;
            d.ack(&cfg, Instant::ZERO, &ack(cum, cum + 100_000, false)).unwrap();
        }
        let grown = d.window().to_bits() as f64 / 16.0 - start;
        assert!((900.0..=1100.0).contains(&grown), "grew {grown} bytes in a window");
    }

    #[test]
    fn loss_halves_once_per_window_and_never_below_w_min() {
        let (cfg, mut d) = flow();
        d.sent(&cfg, Instant::ZERO, Seq(0), 1000, MessageEnd::More).unwrap();
        d.loss(&cfg, Instant::ZERO, Seq(0)).unwrap();
        assert_eq!(d.window(), Window::from_bytes(62_500));
        d.loss(&cfg, Instant::ZERO, Seq(0)).unwrap();
        assert_eq!(d.window(), Window::from_bytes(62_500));
        for k in 0..40u32 {
            d.ack(&cfg, Instant::ZERO, &ack(1000 * (k + 1), 1000 * (k + 2), false))
                .unwrap();
            d.loss(&cfg, Instant::ZERO, Seq(0)).unwrap();
        }
        assert!(d.window() >= cfg.w_min);
    }

    #[test]
    fn bad_parameters_are_refused() {
        let mut cfg = DctcpConfig::rfc_default();
        cfg.g = Fraction::from_bits(0).unwrap();
        assert_eq!(cfg.validate(), Err(Error::InvalidParams));
        let mut cfg = DctcpConfig::rfc_default();
        cfg.mtu = 10;
        assert_eq!(cfg.validate(), Err(Error::InvalidParams));
    }
}
