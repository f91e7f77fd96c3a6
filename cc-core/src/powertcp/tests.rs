//! θ-PowerTCP's behaviour from the paper's equations: the fixed points of
//! the window law, the once-per-RTT clock, the refusals.

use super::*;
use crate::units::LinkSpeed;

/// A 100 Gb/s flow with τ = 10 µs: BDP 125 000 bytes.
fn params() -> FlowParams {
    FlowParams {
        algorithm: Algorithm::ThetaPowerTcp,
        base_rtt: BaseRtt::from_nanos(10_000).unwrap(),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(u32::MAX - 100_000),
    }
}

fn ack(cum: u32, nxt: u32, rtt: Option<u32>) -> Ack<'static> {
    Ack {
        rtt_ns: rtt,
        ..Ack::new(Seq(cum), Seq(nxt))
    }
}

/// Runs `n` updates, one an RTT (`rtt` ns each) apart, every one with the
/// RTT sample `rtt`; returns the flow.
fn steady(cfg: &ThetaPowerTcpConfig, f: &mut ThetaPowerTcp, mut seq: u32, t0: u64, rtt: u32, n: u32) -> (u32, u64) {
    let mut t = t0;
    for _ in 0..n {
        t += rtt as u64;
        let next = seq.wrapping_add(10_000);
        f.ack(cfg, Instant::from_nanos(t), &ack(seq, next, Some(rtt))).unwrap();
        seq = next;
    }
    (seq, t)
}

fn bytes(f: &ThetaPowerTcp) -> f64 {
    f.window_bits() as f64 / 16.0
}

#[test]
fn a_new_flow_sends_at_the_line_rate() {
    let cfg = ThetaPowerTcpConfig::paper();
    let p = params();
    let f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
    assert_eq!(bytes(&f), 125_000.0);
    assert_eq!(f.tau_ns(), 10_000);
    let d = f.decision();
    assert_eq!(d.window, Window::from_bytes(125_000));
    assert_eq!(d.pacing.per, p.base_rtt);
    assert_eq!(d.rate().as_bps(), 100_000_000_000);
}

/// An RTT of 2τ held steady: Γ = 2 (the queue holds one BDP, arrivals
/// match the line rate), so W = γ(W/2 + β) + (1 − γ)W has its fixed point
/// at W = 2β: with β = BDP/10, 25 000 bytes.
#[test]
fn a_steady_queue_of_one_bdp_settles_the_window_at_two_beta() {
    let cfg = ThetaPowerTcpConfig::paper();
    let p = params();
    let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
    steady(&cfg, &mut f, p.start_seq.0, 0, 20_000, 200);
    assert!((bytes(&f) - 25_000.0).abs() < 25_000.0 * 2e-3, "{}", bytes(&f));
    // Γ = 2 exactly (θ/τ = 2, the gradient 0).
    assert_eq!(f.power_q16(), 2 << 16);
}

/// An RTT at τ (an empty path, Γ = 1): the window grows by γβ each RTT
/// until it meets the BDP, its ceiling.
#[test]
fn an_empty_path_grows_the_window_by_gamma_beta_to_the_bdp() {
    let cfg = ThetaPowerTcpConfig::paper();
    let p = params();
    let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
    f.restore(&cfg, 10_000 * 16, 0, 0, 0).unwrap();
    let (seq, t) = steady(&cfg, &mut f, p.start_seq.0, 0, 10_000, 1);
    // γβ = 0.9 · 12 500 bytes.
    let grew = bytes(&f) - 10_000.0;
    assert!((grew - 11_250.0).abs() < 1.0, "{grew}");
    steady(&cfg, &mut f, seq, t, 10_000, 20);
    assert_eq!(bytes(&f), 125_000.0);
}

/// A rising RTT raises power beyond θ/τ: with the RTT growing by half of
/// the time passed (dθ/dt = 0.5), Γ = 1.5·θ/τ.
#[test]
fn a_rising_rtt_adds_its_gradient() {
    let cfg = ThetaPowerTcpConfig::paper();
    let p = params();
    let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
    let s = p.start_seq.0;
    f.ack(
        &cfg,
        Instant::from_nanos(10_000),
        &ack(s.wrapping_add(1), s.wrapping_add(2), Some(10_000)),
    )
    .unwrap();
    assert_eq!(f.power_q16(), 1 << 16);
    // 20 µs later the RTT is 20 µs: dθ/dt = 10 000/20 000.
    f.ack(
        &cfg,
        Instant::from_nanos(30_000),
        &ack(s.wrapping_add(2), s.wrapping_add(3), Some(20_000)),
    )
    .unwrap();
    assert_eq!(f.power_q16(), 3 << 16);
    // Falling as fast as time passes or faster: the factor is 0, Γ its
    // floor of 0.01 (the window grows); with the ns-3 code's floor of 0.5
    // and its 1.05·τ, Γ = 0.5·θ/(1.05·τ).
    let mut g = f;
    g.ack(
        &cfg,
        Instant::from_nanos(40_000),
        &ack(s.wrapping_add(3), s.wrapping_add(4), Some(10_000)),
    )
    .unwrap();
    assert_eq!(g.power_q16(), MIN_POWER);
    let ns3 = ThetaPowerTcpConfig::ns3();
    f.ack(
        &ns3,
        Instant::from_nanos(40_000),
        &ack(s.wrapping_add(3), s.wrapping_add(4), Some(10_000)),
    )
    .unwrap();
    // Kept in 2^-16 rounded to nearest: 31 207.6 is 31 208.
    assert_eq!(f.power_q16(), ((1 << 15) * 100 + 105 / 2) / 105);
}

/// The window changes once per RTT: an ACK short of the last update's
/// `snd_nxt` leaves it (and, with the Linux module's clock, everything)
/// as it was; on the paper's clock Γ takes the ACK's sample.
#[test]
fn one_window_update_per_rtt() {
    for cfg in [ThetaPowerTcpConfig::paper(), ThetaPowerTcpConfig::linux()] {
        let p = params();
        let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
        let s = p.start_seq.0;
        f.ack(
            &cfg,
            Instant::from_nanos(20_000),
            &ack(s.wrapping_add(1000), s.wrapping_add(50_000), Some(20_000)),
        )
        .unwrap();
        let before = f;
        for i in 1..10u32 {
            let now = Instant::from_nanos(20_000 + i as u64 * 1000);
            let a = ack(
                s.wrapping_add(1000 + i * 4000),
                s.wrapping_add(90_000),
                Some(20_000 + i * 1000),
            );
            let d = f.ack(&cfg, now, &a).unwrap();
            assert_eq!(d, before.decision());
            assert_eq!(f.window_bits(), before.window_bits());
            match cfg.clock {
                PowerClock::PerRtt => assert_eq!(f, before),
                // Rising 1 µs a µs: the factor 2, θ/τ 2.1 and up.
                PowerClock::PerAck => assert!(f.power_q16() > before.power_q16(), "{i}"),
            }
        }
        // The ACK that reaches the mark updates the window.
        f.ack(
            &cfg,
            Instant::from_nanos(40_000),
            &ack(s.wrapping_add(50_000), s.wrapping_add(90_000), Some(30_000)),
        )
        .unwrap();
        assert!(f.window_bits() < before.window_bits());
    }
}

/// On the paper's clock Γ is smoothed over τ: ACKs 1 µs apart each move
/// it a tenth (τ = 10 µs) of the way to their Γ_norm.
#[test]
fn power_is_smoothed_over_tau_per_ack() {
    let cfg = ThetaPowerTcpConfig::paper();
    let p = params();
    let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
    let s = p.start_seq.0;
    f.ack(
        &cfg,
        Instant::from_nanos(10_000),
        &ack(s.wrapping_add(1), s.wrapping_add(1_000_000), Some(10_000)),
    )
    .unwrap();
    assert_eq!(f.power_q16(), 1 << 16);
    // θ = 2τ, steady: Γ_norm = 2; after one ACK 1 µs later, 1.1 (the
    // first of these has a gradient of 10 µs over 1 µs, capped by
    // nothing: Γ_norm = 11·2 = 22, so 1 + 21/10 = 3.1).
    f.ack(
        &cfg,
        Instant::from_nanos(11_000),
        &ack(s.wrapping_add(2), s.wrapping_add(1_000_000), Some(20_000)),
    )
    .unwrap();
    assert_eq!(f.power_q16(), (31 << 16) / 10 + 1);
    // Then steady at 2τ: each ACK takes a tenth of the way to 2.
    let mut g = f.power_q16() as f64 / 65536.0;
    for i in 0..30u32 {
        f.ack(
            &cfg,
            Instant::from_nanos(12_000 + i as u64 * 1000),
            &ack(s.wrapping_add(3 + i), s.wrapping_add(1_000_000), Some(20_000)),
        )
        .unwrap();
        g = 0.9 * g + 0.1 * 2.0;
        assert!(
            (f.power_q16() as f64 / 65536.0 - g).abs() < 1e-4,
            "{i}: {} against {g}",
            f.power_q16()
        );
    }
}

/// A sample of 0 or of 2^24 ns or more is refused, the state unchanged;
/// an ACK without a sample leaves the window as it is.
#[test]
fn samples_no_nic_makes_are_refused() {
    let cfg = ThetaPowerTcpConfig::paper();
    let p = params();
    let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
    let s = p.start_seq.0;
    let before = f;
    for rtt in [0, MAX_RTT_NS, u32::MAX] {
        let r = f.ack(
            &cfg,
            Instant::from_nanos(1),
            &ack(s.wrapping_add(1), s.wrapping_add(2), Some(rtt)),
        );
        assert_eq!(r, Err(Error::InvalidParams));
        assert_eq!(f, before);
    }
    let d = f
        .ack(
            &cfg,
            Instant::from_nanos(1),
            &ack(s.wrapping_add(1), s.wrapping_add(2), None),
        )
        .unwrap();
    assert_eq!(f, before);
    assert_eq!(d, before.decision());
}

/// A loss or a packet sent leaves the flow and its decision as they were
/// (no refusal: the NIC's events all have an answer).
#[test]
fn losses_and_sends_change_nothing() {
    let cfg = ThetaPowerTcpConfig::paper();
    let p = params();
    let mut f = ThetaPowerTcp::new(&cfg, &p, Instant::ZERO).unwrap();
    let before = f;
    let d = f.loss(&cfg, Instant::from_nanos(5), p.start_seq).unwrap();
    assert_eq!((f, d), (before, before.decision()));
    let d = f
        .sent(&cfg, Instant::from_nanos(6), p.start_seq, 1000, MessageEnd::More)
        .unwrap();
    assert_eq!((f, d), (before, before.decision()));
}

/// Every corner of the configuration's ranges starts a flow whose
/// decisions keep their bounds under absurd samples and times.
#[test]
fn corners_keep_the_bounds() {
    use crate::controller::AlgorithmConfig;
    for cfg in [
        ThetaPowerTcpConfig::paper(),
        ThetaPowerTcpConfig::ns3(),
        ThetaPowerTcpConfig {
            gamma: Fraction::ONE,
            expected_flows: 1,
            beta_mbps: 1 << 24,
            min_growth: Fraction::ONE,
            min_window_bytes: 65_535,
            clock: PowerClock::PerRtt,
            tau_scale_pct: 200,
        },
        ThetaPowerTcpConfig {
            gamma: Fraction::from_bits(1).unwrap(),
            expected_flows: 65_535,
            beta_mbps: 0,
            min_growth: Fraction::ZERO,
            min_window_bytes: 1,
            clock: PowerClock::PerAck,
            tau_scale_pct: 100,
        },
    ] {
        for (gbps, tau) in [(1, 100), (100, 10_000), (6_400, 1 << 20), (1, 1 << 20), (6_400, 100)] {
            let p = FlowParams {
                base_rtt: BaseRtt::from_nanos(tau).unwrap(),
                line_rate: LinkSpeed::from_gbps(gbps),
                ..params()
            };
            let (mut f, d) = ThetaPowerTcp::start(&cfg, Instant::ZERO, &p).unwrap();
            cfg.check_decision(&p, &d).unwrap();
            let mut seq = p.start_seq.0;
            for (i, (dt, rtt)) in [
                (1u64, 1u32),
                (u32::MAX as u64, MAX_RTT_NS - 1),
                (1, 1),
                (5, MAX_RTT_NS - 1),
                (7, 100),
            ]
            .into_iter()
            .cycle()
            .take(40)
            .enumerate()
            {
                seq = seq.wrapping_add(1);
                let now = Instant::from_nanos(i as u64 * 3 + dt);
                let d = f.ack(&cfg, now, &ack(seq, seq, Some(rtt))).unwrap();
                cfg.check_decision(&p, &d).unwrap();
            }
        }
    }
}

#[test]
fn out_of_range_fields_are_named() {
    let ok = ThetaPowerTcpConfig::paper();
    assert_eq!(ok.invalid_field(), None);
    for (bad, name) in [
        (
            ThetaPowerTcpConfig {
                gamma: Fraction::ZERO,
                ..ok
            },
            "gamma",
        ),
        (
            ThetaPowerTcpConfig {
                expected_flows: 0,
                ..ok
            },
            "expected_flows",
        ),
        (
            ThetaPowerTcpConfig {
                expected_flows: 65_536,
                ..ok
            },
            "expected_flows",
        ),
        (
            ThetaPowerTcpConfig {
                beta_mbps: (1 << 24) + 1,
                ..ok
            },
            "beta_mbps",
        ),
        (
            ThetaPowerTcpConfig {
                min_window_bytes: 0,
                ..ok
            },
            "min_window_bytes",
        ),
        (
            ThetaPowerTcpConfig {
                tau_scale_pct: 99,
                ..ok
            },
            "tau_scale_pct",
        ),
        (
            ThetaPowerTcpConfig {
                tau_scale_pct: 201,
                ..ok
            },
            "tau_scale_pct",
        ),
    ] {
        assert_eq!(bad.invalid_field(), Some(name));
        assert_eq!(bad.validate(), Err(Error::InvalidParams));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 20_000, failure_persistence: None, ..Default::default() })]
    /// The window law's integer steps are its formula's, in exact
    /// arithmetic: ⌊(γ·(⌊min(W_old·2^(b+4)/Γ, W_max·2^4)·η⌋ + β) +
    /// (2^24 − γ)·W·2^4 + 2^27) / 2^28⌋ within [floor, BDP], β =
    /// ⌊BDP·2^4/N⌋ or ⌊min(β_rate·τ·4/125, W_max·2^4)⌋, every quotient in
    /// u128, over every range the law takes.
    #[test]
    fn the_window_law_is_its_formula_exactly(
        w_old in 0u32..1 << 30,
        w in 0u32..1 << 30,
        bdp in 0u32..1 << 30,
        power in 1u64..1 << 28,
        power_bits in proptest::prop_oneof![proptest::strategy::Just(16u32), proptest::strategy::Just(28u32)],
        gamma in 1u32..=1 << 24,
        eta in 1u32..=1 << 24,
        expected_flows in 1u32..=65_535,
        beta_mbps in proptest::prop_oneof![proptest::strategy::Just(0u32), 1u32..=1 << 24],
        min_window_bytes in 1u32..=65_535,
        tau in 100u32..1 << 20,
    ) {
        let law = WindowLaw {
            gamma: Fraction::from_bits(gamma).unwrap(),
            expected_flows,
            beta_mbps,
            min_window_bytes,
            eta: Fraction::from_bits(eta).unwrap(),
        };
        let got = law.next(w_old, w, bdp, power, power_bits, tau);
        let max = (MAX_WINDOW_BITS as u128) << EXTRA_BITS;
        let mut scaled = (((w_old as u128) << (power_bits + EXTRA_BITS)) / power as u128).min(max);
        if eta != 1 << 24 {
            scaled = (scaled * eta as u128) >> 24;
        }
        let beta = if beta_mbps == 0 {
            ((bdp as u128) << EXTRA_BITS) / expected_flows as u128
        } else {
            (beta_mbps as u128 * tau as u128 * 4 / 125).min(max)
        };
        let g = gamma as u128;
        let mixed = (g * (scaled + beta) + ((1u128 << 24) - g) * ((w as u128) << EXTRA_BITS) + (1 << 27)) >> 28;
        let want = mixed.min(bdp as u128).max((min_window_bytes as u128) << 4) as u32;
        proptest::prop_assert_eq!(got, want);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 20_000, failure_persistence: None, ..Default::default() })]

    /// Γ_norm's quotient: the 32-bit core's two divides give ⌊n·2^8/d⌋
    /// exactly, as the one division does, over n < 2^56 and d ≤ 2^24
    /// (short and long numerators, divisors on both sides of 2^16).
    #[test]
    fn quotient_q8_forms_agree(
        n in proptest::prop_oneof![0u64..1 << 32, 0u64..1 << 56],
        d in 1u32..=1 << 24,
    ) {
        let d = NonZeroU32::new(d).unwrap();
        let exact = ((n as u128) << 8) / d.get() as u128;
        proptest::prop_assert_eq!(quotient_q8(n, d) as u128, exact);
        proptest::prop_assert_eq!(quotient_q8_narrow(n, d) as u128, exact);
    }
}
