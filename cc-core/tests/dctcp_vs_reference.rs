//! DCTCP fixed-point engine against the `f64` reference: random ACK, loss
//! and send sequences drive both; after every event the window must agree
//! within max(0.1 %, one 2^-4 byte LSB) per step (checked from random
//! states) and within 1 % over the whole sequence, alpha within 2^-20 per
//! step, and whether a reduction is in force exactly.
#![cfg(feature = "reference")]

use cc_core::prelude::*;
use cc_core::reference::{DctcpRef, DctcpRefParams};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    /// An ACK advancing `quarters/4` packets, `ahead` packets more sent.
    Ack {
        quarters: u16,
        ece: bool,
        ahead: u16,
    },
    Loss,
    Sent {
        pkts: u16,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0u16..=12, prop::bool::weighted(0.25), 0u16..200).prop_map(|(quarters, ece, ahead)| Op::Ack { quarters, ece, ahead }),
        1 => Just(Op::Loss),
        2 => (1u16..=8).prop_map(|pkts| Op::Sent { pkts }),
    ]
}

fn setup(g_k: u32, t_ns: u32, gbps: u32, mss: u32) -> (DctcpConfig, FlowParams, DctcpRefParams) {
    let cfg = DctcpConfig {
        mtu: mss,
        g: Fraction::inverse_pow2(g_k).unwrap(),
        w_min: Window::from_bytes(mss),
    };
    let p = FlowParams {
        algorithm: Algorithm::Dctcp,
        base_rtt: BaseRtt::from_nanos(t_ns).unwrap(),
        line_rate: LinkSpeed::from_gbps(gbps),
        start_seq: Seq(u32::MAX - 70_000),
    };
    let bdp = (p.line_rate.bdp_bytes(p.base_rtt) as f64).max(mss as f64);
    let r = DctcpRefParams {
        mss: mss as f64,
        g: 1.0 / (1u64 << g_k) as f64,
        w_min: mss as f64,
        w_max: bdp,
    };
    (cfg, p, r)
}

fn bytes(w: Window) -> f64 {
    w.to_bits() as f64 / 16.0
}

fn alpha(d: &Dctcp) -> f64 {
    d.alpha().to_bits() as f64 / (1u64 << 24) as f64
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("DCTCP_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn traces_match_reference(
        ops in prop::collection::vec(op(), 1..400),
        g_k in 2u32..=6,
        t_ns in 2_000u32..=100_000,
        gbps in prop::sample::select(vec![10u32, 25, 100, 400]),
        mss in prop::sample::select(vec![1000u32, 4096, 9000]),
    ) {
        let (cfg, p, rp) = setup(g_k, t_ns, gbps, mss);
        let mut d = Dctcp::new(&cfg, &p).unwrap();
        let mut r = DctcpRef::new(rp, p.start_seq.0);
        prop_assert_eq!(bytes(d.window()), rp.w_max.floor());
        r.cwnd = bytes(d.window());
        let mut cum = p.start_seq;
        let mut nxt = p.start_seq;
        for (i, op) in ops.iter().enumerate() {
            let out = match *op {
                Op::Ack { quarters, ece, ahead } => {
                    cum = cum.add(quarters as u32 * mss / 4);
                    if cum.after(nxt) {
                        nxt = cum;
                    }
                    let snd_nxt = nxt.add(ahead as u32 * mss);
                    let ack = Ack { ece: if ece { EcnEcho::Marked } else { EcnEcho::NotMarked }, ..Ack::new(cum, snd_nxt) };
                    r.on_ack(cum.0, snd_nxt.0, ece);
                    d.ack(&cfg, Instant::ZERO, &ack).unwrap()
                }
                Op::Loss => {
                    r.on_loss();
                    d.loss(&cfg, Instant::ZERO, Seq(0)).unwrap()
                }
                Op::Sent { pkts } => {
                    let out = d.sent(&cfg, Instant::ZERO, nxt, pkts as u32 * mss, MessageEnd::More).unwrap();
                    r.on_sent(nxt.0, pkts as u32 * mss);
                    nxt = nxt.add(pkts as u32 * mss);
                    out
                }
            };
            prop_assert_eq!(out.window, d.window());
            prop_assert_eq!(out.ecn, Ecn::Ect);
            prop_assert_eq!(d.in_cwr(), r.cwr_until.is_some(), "step {}", i);
            // Each step rounds by at most one LSB (a cut multiplies earlier
            // differences by at most 1): the steps so far, or 1 %.
            let w = bytes(d.window());
            let tol = (r.cwnd * 0.01).max((i + 1) as f64 / 16.0);
            prop_assert!((w - r.cwnd).abs() <= tol, "step {}: window {} vs {}", i, w, r.cwnd);
            prop_assert!((alpha(&d) - r.alpha).abs() <= (i + 1) as f64 * 2f64.powi(-22), "step {}: alpha {} vs {}", i, alpha(&d), r.alpha);
            prop_assert!(d.window() >= cfg.w_min && d.window() <= d.max_window());
        }
    }

    /// One ACK from random states: the window within max(0.1 %, one LSB),
    /// alpha within 2^-22.
    #[test]
    fn one_ack_matches_reference(
        w_bytes in 1_000u32..2_000_000,
        alpha_bits in 0u32..=(1 << 24),
        acked_before in 0u32..100_000,
        marked_frac in 0.0f64..=1.0,
        newly in 0u32..20_000,
        ece in any::<bool>(),
        g_k in 2u32..=6,
    ) {
        let (cfg, p, rp) = setup(g_k, 100_000, 400, 1000);
        let mut d = Dctcp::new(&cfg, &p).unwrap();
        let w = Window::from_bytes(w_bytes.min(bytes(d.max_window()) as u32));
        let a = Fraction::from_bits(alpha_bits).unwrap();
        d.restore(&cfg, w, a).unwrap();
        let mut r = DctcpRef::new(rp, p.start_seq.0);
        r.cwnd = bytes(w);
        r.alpha = alpha_bits as f64 / (1u64 << 24) as f64;
        // Bring both to the same counters: one unmarked-or-marked ACK of
        // `acked_before` bytes while a reduction is in force (so the
        // window does not move), inside the first observation window.
        let start = p.start_seq;
        let first = start.add(1);
        let ack0 = Ack::new(first, start.add(10_000_000));
        d.ack(&cfg, Instant::ZERO, &ack0).unwrap();
        r.on_ack(first.0, start.0.wrapping_add(10_000_000), false);
        d.loss(&cfg, Instant::ZERO, Seq(0)).unwrap();
        r.on_loss();
        let w = bytes(d.window());
        r.cwnd = w;
        let marked = (acked_before as f64 * marked_frac) as u32;
        let mid = first.add(marked);
        let ack1 = Ack { ece: EcnEcho::Marked, ..Ack::new(mid, start.add(10_000_000)) };
        d.ack(&cfg, Instant::ZERO, &ack1).unwrap();
        r.on_ack(mid.0, start.0.wrapping_add(10_000_000), true);
        let end = mid.add(acked_before - marked);
        let ack2 = Ack::new(end, start.add(10_000_000));
        d.ack(&cfg, Instant::ZERO, &ack2).unwrap();
        r.on_ack(end.0, start.0.wrapping_add(10_000_000), false);
        prop_assert!((alpha(&d) - r.alpha).abs() <= 2f64.powi(-22));
        r.alpha = alpha(&d);
        // The step under test: past the end of the reduction and of the
        // observation window, so alpha updates, then the cut or the growth.
        let cum = start.add(10_000_001).add(newly);
        let ack = Ack { ece: if ece { EcnEcho::Marked } else { EcnEcho::NotMarked }, ..Ack::new(cum, cum.add(50_000)) };
        d.ack(&cfg, Instant::ZERO, &ack).unwrap();
        r.on_ack(cum.0, cum.0.wrapping_add(50_000), ece);
        prop_assert!((alpha(&d) - r.alpha).abs() <= 2f64.powi(-22), "alpha {} vs {}", alpha(&d), r.alpha);
        let got = bytes(d.window());
        prop_assert!((got - r.cwnd).abs() <= (r.cwnd * 1e-3).max(1.0 / 16.0), "from {}: window {} vs {}", w, got, r.cwnd);
    }
}
