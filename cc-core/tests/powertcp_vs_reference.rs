//! PowerTCP's fixed-point engine against the `f64` reference of the
//! paper's Algorithm 1 (`cc_core::powertcp::reference::PowerTcpRef`): from
//! random states and telemetry stacks of one to five hops, one update's Γ
//! within max(0.05 %, 2^-20) and window within max(0.1 %, one 2^-4 byte
//! LSB); over traces of 10^4 ACKs on the three presets, the window within
//! 1 %.
#![cfg(feature = "reference")]

use cc_core::powertcp::reference::{HopRef, PowerTcpRef};
use cc_core::powertcp::{PowerTcp, PowerTcpConfig};
use cc_core::prelude::*;
use cc_core::telemetry::TxUtilization;
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("POWERTCP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn params(gbps: u32, tau: u32) -> FlowParams {
    FlowParams {
        algorithm: Algorithm::PowerTcp,
        base_rtt: BaseRtt::from_nanos(tau).unwrap(),
        line_rate: LinkSpeed::from_gbps(gbps),
        start_seq: Seq(u32::MAX - 5_000_000),
    }
}

/// The paper's, the Linux module's and the ns-3 code's constants.
fn config(which: u8) -> PowerTcpConfig {
    match which {
        0 => PowerTcpConfig::paper(),
        1 => PowerTcpConfig::linux(),
        _ => PowerTcpConfig::ns3(),
    }
}

fn bdp(p: &FlowParams) -> f64 {
    (p.line_rate.as_mbps() as f64 * p.base_rtt.as_nanos() as f64 / 8000.0).min(((1u64 << 30) - 1) as f64 / 16.0)
}

/// A hop as the switch writes it (32-bit counters of bytes) and as the
/// reference reads it.
#[derive(Clone, Copy, Debug)]
struct Hop {
    ts: u64,
    tx: u64,
    qlen: u32,
    gbps: u32,
}

impl Hop {
    fn sample(&self, id: u32) -> HopSample {
        HopSample {
            ts: self.ts as u32,
            tx: self.tx as u32,
            qlen_bytes: self.qlen,
            sojourn_ns: 0,
            bandwidth: LinkSpeed::from_gbps(self.gbps),
            id,
            widths: CounterWidths::new(32, 32, 1).unwrap(),
            tx_utilization: TxUtilization::NONE,
        }
    }

    fn reference(&self) -> HopRef {
        HopRef {
            ts: self.ts as f64,
            tx: self.tx as f64,
            qlen: self.qlen as f64,
            b: self.gbps as f64 / 8.0,
        }
    }
}

fn stack(hops: &[Hop]) -> Vec<HopSample> {
    hops.iter().enumerate().map(|(i, h)| h.sample(i as u32 + 1)).collect()
}

fn refs(hops: &[Hop]) -> Vec<HopRef> {
    hops.iter().map(Hop::reference).collect()
}

fn ack<'a>(cum: u32, nxt: u32, telemetry: &'a [HopSample]) -> Ack<'a> {
    Ack {
        telemetry,
        ..Ack::new(Seq(cum), Seq(nxt))
    }
}

fn bytes(f: &PowerTcp<5>) -> f64 {
    f.window_bits() as f64 / 16.0
}

fn power(f: &PowerTcp<5>) -> f64 {
    f.power_q28() as f64 / (1u64 << 28) as f64
}

/// One hop's next sample after `dt` ns: it sent `load` of its capacity
/// and its queue moved to `qlen`.
fn advance(h: &Hop, dt: u64, load: f64, qlen: u32) -> Hop {
    Hop {
        ts: h.ts + dt,
        tx: h.tx + (dt as f64 * h.gbps as f64 / 8.0 * load) as u64,
        qlen,
        gbps: h.gbps,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(4000), failure_persistence: None, ..ProptestConfig::default() })]

    /// One update from a random state: Γ within max(0.05 %, 2^-20) and
    /// the window within max(0.1 %, one LSB) of the reference's.
    #[test]
    fn one_update(
        which in 0u8..3,
        gbps in prop::sample::select(vec![25u32, 100, 400]),
        tau in 2_000u32..=100_000,
        w_frac in 0.0f64..=1.0,
        power in prop_oneof![Just(0.0f64), 0.01f64..20.0],
        n in 1usize..=5,
        speeds in prop::collection::vec(prop::sample::select(vec![100u32, 400]), 5),
        dt_frac in prop_oneof![0.001f64..1.0, 1.0f64..3.0],
        loads in prop::collection::vec(0.0f64..1.2, 5),
        q0 in prop::collection::vec(0.0f64..4.0, 5),
        q1 in prop::collection::vec(0.0f64..4.0, 5),
    ) {
        let cfg = config(which);
        let p = params(gbps, tau);
        let mut f = PowerTcp::<5>::new(&cfg, &p, Instant::ZERO).unwrap();
        let s = p.start_seq.0;
        let before: Vec<Hop> = (0..n)
            .map(|i| Hop { ts: 1_000_000 + i as u64 * 37, tx: 5_000_000 * i as u64, qlen: 0, gbps: speeds[i] })
            .map(|h| Hop { qlen: (q0[h.tx as usize / 5_000_000] * h.gbps as f64 / 8.0 * tau as f64) as u32, ..h })
            .collect();
        let dt = ((dt_frac * tau as f64) as u64).max(1);
        let after: Vec<Hop> = before
            .iter()
            .enumerate()
            .map(|(i, h)| advance(h, dt, loads[i], (q1[i] * h.gbps as f64 / 8.0 * tau as f64) as u32))
            .collect();
        let (sb, sa) = (stack(&before), stack(&after));
        // The first stack is recorded; then the state is set.
        f.ack(&cfg, Instant::from_nanos(1_000), &ack(s, s, &sb)).unwrap();
        let floor = cfg.min_window_bytes as f64;
        let w = ((floor + (bdp(&p) - floor) * w_frac) * 16.0) as u32;
        f.restore(&cfg, w, (power * (1u64 << 28) as f64) as u64).unwrap();
        let mut r = PowerTcpRef::new(&cfg, tau as f64, bdp(&p), 0.0);
        r.w = bytes(&f);
        r.w_old = r.w;
        r.power = self::power(&f);
        f.ack(&cfg, Instant::from_nanos(1_000 + dt), &ack(s.wrapping_add(1), s.wrapping_add(2), &sa)).unwrap();
        r.ack(1.0, 2.0, &refs(&after), &refs(&before));
        let got = self::power(&f);
        prop_assert!((got - r.power).abs() <= (r.power * 5e-4).max(1.0 / (1 << 20) as f64),
            "power {} against {}", got, r.power);
        let tol = (r.w * 1e-3).max(1.0 / 16.0);
        prop_assert!((bytes(&f) - r.w).abs() <= tol, "window {} against {}", bytes(&f), r.w);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), failure_persistence: None, ..ProptestConfig::default() })]

    /// 10^4 ACKs over two to five hops, 0.02 to 0.3 τ apart, each hop's
    /// queue a random walk and its load around the link's speed: the
    /// window within 1 % of the reference's after every ACK, neither
    /// synced to the other.
    #[test]
    fn traces(
        seed in any::<u64>(),
        which in 0u8..3,
        gbps in prop::sample::select(vec![25u32, 100, 400]),
        tau in 2_000u32..=50_000,
        n in 2usize..=5,
    ) {
        let cfg = config(which);
        let p = params(gbps, tau);
        let mut f = PowerTcp::<5>::new(&cfg, &p, Instant::ZERO).unwrap();
        let mut r = PowerTcpRef::new(&cfg, tau as f64, bdp(&p), 0.0);
        let mut x = seed | 1;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut hops: Vec<Hop> = (0..n)
            .map(|i| Hop { ts: 3_000 + i as u64, tx: 0, qlen: 0, gbps: if i == n / 2 { gbps.min(100) } else { 400 } })
            .collect();
        let s = p.start_seq.0;
        let mut now = 1_000u64;
        let mut prev = hops.clone();
        let samples = stack(&hops);
        f.ack(&cfg, Instant::from_nanos(now), &ack(s, s, &samples)).unwrap();
        for i in 0..10_000u32 {
            let dt = (tau as f64 * (0.02 + 0.28 * next())) as u64 + 1;
            now += dt;
            for h in hops.iter_mut() {
                let bdp_h = h.gbps as f64 / 8.0 * tau as f64;
                let q = (h.qlen as f64 + bdp_h * (next() - 0.5) * 0.2).clamp(0.0, 3.0 * bdp_h);
                let load = if q > 0.0 { 1.0 } else { 0.6 + 0.4 * next() };
                *h = advance(h, dt, load, q as u32);
            }
            let cum = (i + 1) * 1000;
            let nxt = cum + 10_000;
            let samples = stack(&hops);
            f.ack(&cfg, Instant::from_nanos(now), &ack(s.wrapping_add(cum), s.wrapping_add(nxt), &samples)).unwrap();
            r.ack(cum as f64, nxt as f64, &refs(&hops), &refs(&prev));
            prev = hops.clone();
            let tol = (r.w * 1e-2).max(1.0 / 16.0);
            prop_assert!((bytes(&f) - r.w).abs() <= tol,
                "ACK {i}: window {} against {} (power {} against {})", bytes(&f), r.w, power(&f), r.power);
        }
    }
}
