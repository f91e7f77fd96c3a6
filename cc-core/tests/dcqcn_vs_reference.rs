//! DCQCN fixed-point engine against the `f64` reference: random CNP and
//! send sequences at random times drive both, the engine's timer delivered
//! whenever it falls due (as a NIC's timer wheel would). After every event
//! Rc and Rt must agree within max(0.1 %, 4 steps of 2^-8 Mb/s), and alpha
//! (which the engine brings up to date when it reads it) within 2^-24/g
//! after every CNP (one LSB an update, shrunk by 1 − g at each later one). The engine's lazy alpha and its silence at full rate
//! are thereby checked against a model with all three timers running.
#![cfg(feature = "reference")]

use cc_core::prelude::*;
use cc_core::reference::{DcqcnRef, DcqcnRefParams};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// A CNP after `gap` ns.
    Cnp { gap: u32 },
    /// A packet of `len` bytes sent after `gap` ns.
    Sent { gap: u32, len: u16 },
    /// Nothing for `gap` ns (timers run).
    Idle { gap: u32 },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..20_000).prop_map(|gap| Op::Cnp { gap }),
        4 => (0u32..2_000, 64u16..9_000).prop_map(|(gap, len)| Op::Sent { gap, len }),
        1 => (0u32..2_000_000).prop_map(|gap| Op::Idle { gap }),
    ]
}

fn mbps(r: u32) -> f64 {
    r as f64 / 256.0
}

fn frac(f: Fraction) -> f64 {
    f.to_bits() as f64 / (1u64 << 24) as f64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("DCQCN_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(500), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn traces_match_reference(
        ops in prop::collection::vec(op(), 1..300),
        paper in any::<bool>(),
        clamp in any::<bool>(),
        byte_counter in prop::sample::select(vec![0u32, 1 << 16, 10_000_000]),
        gbps in prop::sample::select(vec![10u32, 25, 100, 400]),
        g_k in 4u32..=8,
    ) {
        let mut cfg = if paper { DcqcnConfig::paper() } else { DcqcnConfig::hpcc_sim() };
        cfg.clamp_target = clamp;
        cfg.byte_counter = byte_counter;
        cfg.g = Fraction::inverse_pow2(g_k).unwrap();
        let p = FlowParams {
            algorithm: Algorithm::Dcqcn,
            base_rtt: BaseRtt::from_nanos(12_000).unwrap(),
            line_rate: LinkSpeed::from_gbps(gbps),
            start_seq: Seq(0),
        };
        let line = gbps as f64 * 1000.0;
        let step = |f: Fraction| (((gbps as u64 * 1000 * 256) * f.to_bits() as u64) >> 24).max(1) as f64 / 256.0;
        let mut d = Dcqcn::new(&cfg, &p).unwrap();
        let mut r = DcqcnRef::new(DcqcnRefParams {
            g: frac(cfg.g),
            ta_ns: cfg.alpha_interval_ns as u64,
            td_ns: cfg.decrease_interval_ns as u64,
            ti_ns: cfg.increase_interval_ns as u64,
            f: cfg.fast_recovery_steps as u32,
            // R_AI and R_HAI as the engine holds them: the fraction of the
            // line rate rounded down to a 2^-8 Mb/s step (a configured
            // constant read once; rounding it is not the algorithm's).
            ai_mbps: step(cfg.rate_ai),
            hai_mbps: step(cfg.rate_hai),
            min_mbps: cfg.min_rate_mbps as f64,
            line_mbps: line,
            byte_counter: byte_counter as f64,
            clamp,
        });
        let mut now = 0u64;
        let mut armed: Option<u64> = None;
        let close = |a: f64, b: f64| (a - b).abs() <= (b * 1e-3).max(4.0 / 256.0);
        for (i, op) in ops.iter().enumerate() {
            let gap = match *op { Op::Cnp { gap } | Op::Sent { gap, .. } | Op::Idle { gap } => gap };
            let until = now + gap as u64;
            // The engine's timer, whenever it is due first.
            while let Some(t) = armed.filter(|&t| t <= until) {
                let out = d.timer(&cfg, Instant::from_nanos(t)).unwrap();
                r.advance(t);

                armed = match out.timer {
                    TimerRequest::Arm(at) => { prop_assert!(at.as_nanos() >= t); Some(at.as_nanos()) }
                    TimerRequest::Cancel => None,
                    TimerRequest::Keep => armed.filter(|&a| a > t),
                };
                prop_assert!(close(mbps(d.rate()), r.rc), "step {} timer at {}: Rc {} vs {}", i, t, mbps(d.rate()), r.rc);
                prop_assert!(close(mbps(d.target()), r.rt), "step {} timer at {}: Rt {} vs {}", i, t, mbps(d.target()), r.rt);
            }
            now = until;
            let at = Instant::from_nanos(now);
            let out = match *op {
                Op::Cnp { .. } => {
                    r.on_cnp(now);
                    let out = d.cnp(&cfg, at).unwrap();
                    // Each update rounds within 2^-24 and the EWMA shrinks
                    // older errors by 1 − g: at most 2^-24/g apart.
                    let tol = 2f64.powi(-24) / frac(cfg.g) + 2f64.powi(-24);
                    prop_assert!((frac(d.alpha()) - r.alpha).abs() <= tol, "step {}: alpha {} vs {}", i, frac(d.alpha()), r.alpha);
                    Some(out)
                }
                Op::Sent { len, .. } => {
                    r.on_sent(now, len as f64);
                    Some(d.sent(&cfg, Instant::ZERO, Seq(0), len as u32, MessageEnd::More).unwrap())
                }
                Op::Idle { .. } => {
                    r.advance(now);
                    None
                }
            };
            if let Some(out) = out {
                match out.timer {
                    TimerRequest::Arm(t) => { prop_assert!(t.as_nanos() >= now); armed = Some(t.as_nanos()) }
                    TimerRequest::Cancel => armed = None,
                    TimerRequest::Keep => {}
                }
                prop_assert_eq!(armed.map(Instant::from_nanos), d.next_deadline());
                // Pacing: Rc as bytes per T, rounded down to 2^-4 byte per
                // T (0.5 bit per 12 µs: 0.0417 Mb/s).
                let paced = out.pacing.bytes.to_bits() as f64 / 16.0 * 8.0 / 12_000.0 * 1000.0;
                let unit = 0.5 / 12_000.0 * 1000.0;
                prop_assert!(paced <= mbps(d.rate()) + 1e-9 && paced + unit >= mbps(d.rate()), "paced {} Mb/s at Rc {}", paced, mbps(d.rate()));
            }
            prop_assert!(close(mbps(d.rate()), r.rc), "step {}: Rc {} vs {}", i, mbps(d.rate()), r.rc);
            prop_assert!(close(mbps(d.target()), r.rt), "step {}: Rt {} vs {}", i, mbps(d.target()), r.rt);
            prop_assert!(d.rate() <= d.target() && mbps(d.target()) <= line);
            prop_assert!(mbps(d.rate()) + 1e-9 >= (cfg.min_rate_mbps as f64).min(line));
        }
    }
}
