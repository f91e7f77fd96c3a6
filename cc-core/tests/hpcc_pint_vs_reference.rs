//! HPCC-PINT's fixed-point engine against the `f64` reference (the HPCC
//! reference simulator's `UpdateRateHpPint` on rates, U from `pow`,
//! `cc_core::hpcc_pint::reference`), both code widths: from random states,
//! one ACK's window within max(0.1 %, two 2^-20 steps of the BDP) of the
//! reference's rate times T; over traces of 10^4 ACKs, within 1 %.
#![cfg(feature = "reference")]

use cc_core::hpcc_pint::reference::HpccPintRef;
use cc_core::hpcc_pint::{HpccPint, HpccPintConfig};
use cc_core::prelude::*;
use cc_core::wire::pint::PintWidth;
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("HPCC_PINT_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn params(gbps: u32, t_ns: u32) -> FlowParams {
    FlowParams {
        algorithm: Algorithm::HpccPint,
        base_rtt: BaseRtt::from_nanos(t_ns).unwrap(),
        line_rate: LinkSpeed::from_gbps(gbps),
        start_seq: Seq(u32::MAX - 5_000_000),
    }
}

fn ack(cum: u32, nxt: u32, width: PintWidth, code: u16) -> Ack<'static> {
    Ack {
        pint: Some(PintSample { width, code }),
        ..Ack::new(Seq(cum), Seq(nxt))
    }
}

/// W/W_init of the engine, and of the reference (R/R_max).
fn fraction(s: &HpccPint) -> f64 {
    s.window_fraction() as f64 / (1u64 << 20) as f64
}

const STEP: f64 = 1.0 / (1u64 << 20) as f64;

fn config(eta_pct: u32, max_stage: u8, ai_ppm: u32) -> HpccPintConfig {
    HpccPintConfig {
        eta: Fraction::ratio(eta_pct, 100).unwrap(),
        max_stage,
        additive_increase: Fraction::ratio(ai_ppm, 1_000_000).unwrap(),
        ..HpccPintConfig::hpcc_sim()
    }
}

fn width(two: bool) -> PintWidth {
    if two {
        PintWidth::Two
    } else {
        PintWidth::One
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(20_000), failure_persistence: None, ..ProptestConfig::default() })]

    /// One ACK from a random state, committing or not: the same branch,
    /// the window within max(0.1 %, two steps), the stage the reference's,
    /// and the decision paced at W/T.
    #[test]
    fn one_update(
        x in 1u32..=1 << 20,
        xc in 1u32..=1 << 20,
        stage in 0u8..8,
        two in any::<bool>(),
        code_frac in 0.0f64..=1.0,
        commit in any::<bool>(),
        eta_pct in 50u32..=100,
        max_stage in 0u8..6,
        ai_ppm in 1u32..20_000,
        gbps in prop::sample::select(vec![10u32, 25, 100, 400, 1600]),
        t_ns in 1_000u32..=100_000,
    ) {
        let cfg = config(eta_pct, max_stage, ai_ppm);
        let p = params(gbps, t_ns);
        let w = width(two);
        let code = (w.max_code() as f64 * code_frac) as u16;
        let mut s = HpccPint::new(&cfg, &p).unwrap();
        let s0 = p.start_seq.0;
        s.restore(x, xc, stage, Seq(s0.wrapping_add(10_000))).unwrap();
        let line = gbps as f64 * 1e9;
        let mut r = HpccPintRef::new(&cfg, line);
        r.seen = true;
        r.rate = x as f64 * STEP * line;
        r.cur_rate = xc as f64 * STEP * line;
        r.inc_stage = stage as u32;
        r.last_update_seq = 10_000;
        let cum = if commit { 12_000 } else { 9_000 };
        let d = s.ack(&cfg, Instant::ZERO, &ack(s0.wrapping_add(cum), s0.wrapping_add(20_000), w, code)).unwrap();
        r.ack(w, code, cum as u64, 20_000);
        let want = r.rate / line;
        prop_assert!((fraction(&s) - want).abs() <= (want * 1e-3).max(2.0 * STEP),
            "W/W_init {} against {}", fraction(&s), want);
        prop_assert_eq!(s.inc_stage() as u32, r.inc_stage.min(15));
        prop_assert_eq!(s.last_update_seq(), Seq(s0.wrapping_add(r.last_update_seq as u32)));
        prop_assert_eq!(d.pacing.per, p.base_rtt);
        prop_assert_eq!(d.pacing.bytes, d.window);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), failure_persistence: None, ..ProptestConfig::default() })]

    /// 10^4 ACKs of a random walk of codes (a port's utilization rising
    /// and falling through η), a commit every eighth: the window within
    /// 1 % of the reference's after every ACK.
    #[test]
    fn traces_match_reference(
        seed in any::<u64>(),
        two in any::<bool>(),
        eta_pct in prop::sample::select(vec![90u32, 95, 99]),
        max_stage in prop::sample::select(vec![0u8, 5]),
        gbps in prop::sample::select(vec![25u32, 100, 400]),
    ) {
        let cfg = config(eta_pct, max_stage, 400);
        let p = params(gbps, 8_000);
        let w = width(two);
        let mut s = HpccPint::new(&cfg, &p).unwrap();
        let line = gbps as f64 * 1e9;
        let mut r = HpccPintRef::new(&cfg, line);
        let s0 = p.start_seq.0;
        // The code of U = 1 and a step of about 5 % in U.
        let (center, step) = if two { (627i64, 5i64) } else { (128, 1) };
        let mut code = center;
        let mut x = seed | 1;
        for i in 1..=10_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (x >> 33) as i64 % (2 * step + 1) - step;
            code = (code + u + (center - code) / 32).clamp(0, w.max_code() as i64);
            let (cum, nxt) = (i * 1000, (i + 8) * 1000);
            s.ack(&cfg, Instant::ZERO, &ack(s0.wrapping_add(cum), s0.wrapping_add(nxt), w, code as u16)).unwrap();
            r.ack(w, code as u16, cum as u64, nxt as u64);
            let want = r.rate / line;
            prop_assert!((fraction(&s) - want).abs() <= (want * 0.01).max(2.0 * STEP),
                "ACK {}: W/W_init {} against {}", i, fraction(&s), want);
        }
    }
}
