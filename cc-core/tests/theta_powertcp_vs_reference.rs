//! θ-PowerTCP's fixed-point engine against the `f64` reference (the
//! authors' Linux module's arithmetic, `cc_core::powertcp::reference`):
//! from random states, one update's window within max(0.1 %, one 2^-4
//! byte LSB) and Γ within max(0.01 %, 2^-15); over traces of 10^4 ACKs
//! on both clocks, the window within 1 %.
#![cfg(feature = "reference")]

use cc_core::powertcp::reference::{ThetaRef, ThetaRefParams};
use cc_core::powertcp::{ThetaPowerTcp, ThetaPowerTcpConfig, MAX_RTT_NS};
use cc_core::prelude::*;
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("THETA_POWERTCP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn params(gbps: u32, tau: u32) -> FlowParams {
    FlowParams {
        algorithm: Algorithm::ThetaPowerTcp,
        base_rtt: BaseRtt::from_nanos(tau).unwrap(),
        line_rate: LinkSpeed::from_gbps(gbps),
        start_seq: Seq(u32::MAX - 5_000_000),
    }
}

/// The paper's, the Linux module's and the ns-3 code's constants.
fn config(which: u8) -> ThetaPowerTcpConfig {
    match which {
        0 => ThetaPowerTcpConfig::paper(),
        1 => ThetaPowerTcpConfig::linux(),
        _ => ThetaPowerTcpConfig::ns3(),
    }
}

fn reference(cfg: &ThetaPowerTcpConfig, p: &FlowParams) -> ThetaRefParams {
    let bdp =
        (p.line_rate.as_mbps() as f64 * p.base_rtt.as_nanos() as f64 / 8000.0).min(((1u64 << 30) - 1) as f64 / 16.0);
    ThetaRefParams::from_config(cfg, p.base_rtt.as_nanos() as f64, bdp)
}

fn ack(cum: u32, nxt: u32, rtt: u32) -> Ack<'static> {
    Ack {
        rtt_ns: Some(rtt),
        ..Ack::new(Seq(cum), Seq(nxt))
    }
}

fn bytes(f: &ThetaPowerTcp) -> f64 {
    f.window_bits() as f64 / 16.0
}

/// Copies the engine's state into the reference.
fn sync(r: &mut ThetaRef, f: &ThetaPowerTcp) {
    r.w = bytes(f);
    r.power = f.power_q16() as f64 / 65536.0;
    r.prev_rtt = f.prev_rtt() as f64;
    r.t_prev = f.last_sample_ns() as f64;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(4000), failure_persistence: None, ..ProptestConfig::default() })]

    /// One update from a random state: the window within max(0.1 %, one
    /// LSB), Γ within max(0.01 %, 2^-15) of the reference's.
    #[test]
    fn one_update(
        which in 0u8..3,
        gbps in prop::sample::select(vec![10u32, 25, 100, 400, 1600]),
        tau in 1_000u32..=200_000,
        w_frac in 0.0f64..=1.0,
        power_q16 in prop_oneof![Just(0u32), cc_core::powertcp::MIN_POWER..1 << 24],
        prev in prop_oneof![Just(0u32), 1u32..2_000_000],
        dt in 1u32..400_000,
        rtt in 1u32..2_000_000,
    ) {
        let cfg = config(which);
        let p = params(gbps, tau);
        let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
        let rp = reference(&cfg, &p);
        let floor = cfg.min_window_bytes as f64;
        let w = ((floor + (rp.bdp - floor) * w_frac) * 16.0) as u32;
        f.restore(&cfg, w, power_q16, prev, 0).unwrap();
        let mut r = ThetaRef::new(rp, 0.0, 0.0);
        sync(&mut r, &f);
        let s = p.start_seq.0;
        f.ack(&cfg, Instant::from_nanos(dt as u64), &ack(s.wrapping_add(1), s.wrapping_add(2), rtt)).unwrap();
        r.ack(dt as f64, 1.0, 2.0, rtt as f64);
        let tol = (r.w * 1e-3).max(1.0 / 16.0);
        prop_assert!((bytes(&f) - r.w).abs() <= tol, "window {} against {}", bytes(&f), r.w);
        let kept = f.power_q16() as f64 / 65536.0;
        prop_assert!((kept - r.power).abs() <= (r.power * 1e-4).max(1.0 / 32768.0), "power {} against {}", kept, r.power);
        prop_assert_eq!(f.prev_rtt(), rtt);
    }
}

/// A random walk of RTT samples around `center` ns, `step` ns at most a
/// sample, from a small LCG.
fn walk(seed: u64, n: usize, center: i64, step: i64) -> Vec<u32> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut rtt = center;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (x >> 33) as i64 % (2 * step + 1) - step;
            rtt = (rtt + u + (center - rtt) / 16).clamp(1_000, (MAX_RTT_NS - 1) as i64);
            rtt as u32
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(48), failure_persistence: None, ..ProptestConfig::default() })]

    /// 10^4 ACKs, one a packet of 1000 bytes with ten in flight, spaced
    /// so that an RTT holds about ten (some closer than others, so that
    /// the smoothing's Δt varies): the window within 1 % of the
    /// reference's after every ACK, neither synced to the other.
    #[test]
    fn traces(
        seed in any::<u64>(),
        which in 0u8..3,
        gbps in prop::sample::select(vec![25u32, 100, 400]),
        tau in 2_000u32..=50_000,
        queue in 0u32..4,
    ) {
        let cfg = config(which);
        let p = params(gbps, tau);
        let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
        let mut r = ThetaRef::new(reference(&cfg, &p), 0.0, 0.0);
        let center = (tau as i64) * (1 + queue as i64);
        let rtts = walk(seed, 10_000, center, center / 64);
        let mut now = 0u64;
        let s = p.start_seq.0;
        for (i, &rtt) in rtts.iter().enumerate() {
            // Between 0.05 and 0.15 RTTs after the ACK before.
            now += (rtt as u64 / 20) + (rtt as u64 * ((i as u64 * 7919) % 101)) / 1000;
            let cum = (i as u64 + 1) * 1000;
            let nxt = cum + 10_000;
            f.ack(&cfg, Instant::from_nanos(now), &ack(s.wrapping_add(cum as u32), s.wrapping_add(nxt as u32), rtt)).unwrap();
            r.ack(now as f64, cum as f64, nxt as f64, rtt as f64);
            let tol = r.w * 1e-2;
            prop_assert!((bytes(&f) - r.w).abs() <= tol.max(1.0 / 16.0),
                "ACK {i}: window {} against {}", bytes(&f), r.w);
        }
    }
}
