//! TIMELY's fixed-point engine against the `f64` reference (the two
//! public codes' arithmetic, `cc_core::timely::reference`), on both
//! update clocks: from random states, one ACK's rate within max(0.1 %,
//! one 2^-8 Mb/s LSB) and rtt_diff within one 2^-4 ns LSB (the rounding
//! of one EWMA step); over traces of 10^4 ACKs, the rate within 1 %.
#![cfg(feature = "reference")]

use cc_core::prelude::*;
use cc_core::timely::reference::{TimelyRef, TimelyRefParams};
use cc_core::timely::{Timely, TimelyClock, TimelyConfig};
use proptest::prelude::*;

fn cases(default: u32) -> u32 {
    std::env::var("TIMELY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn setup(clock: TimelyClock, gbps: u32) -> (TimelyConfig, FlowParams, TimelyRefParams) {
    let cfg = TimelyConfig {
        clock,
        ..TimelyConfig::hpcc_sim()
    };
    let p = FlowParams {
        algorithm: Algorithm::Timely,
        base_rtt: BaseRtt::from_nanos(10_000).unwrap(),
        line_rate: LinkSpeed::from_gbps(gbps),
        start_seq: Seq(u32::MAX - 5_000_000),
    };
    let r = TimelyRefParams::from_config(&cfg, gbps as f64 * 1e9);
    (cfg, p, r)
}

/// The engine's rate in b/s.
fn bps(t: &Timely) -> f64 {
    t.rate() as f64 / 256.0 * 1e6
}

fn ack(cum: u32, nxt: u32, rtt: u32) -> Ack<'static> {
    Ack {
        rtt_ns: Some(rtt),
        ..Ack::new(Seq(cum), Seq(nxt))
    }
}

/// Copies the engine's state into the reference.
fn sync(r: &mut TimelyRef, t: &Timely) {
    r.rate = bps(t);
    r.rtt_diff = t.rtt_diff() as f64 / 16.0;
    r.prev_rtt = t.prev_rtt() as f64;
    r.count = t.count() as u32;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2000), failure_persistence: None, ..ProptestConfig::default() })]

    /// One update from a random state, per RTT: the same branch and the
    /// same rate within max(0.1 %, 1 LSB). A state whose EWMA lands within
    /// 1/16 ns of 0 is left out: there the sign, and so the branch, is
    /// below the engine's resolution (docs/design-notes.md).
    #[test]
    fn one_update_per_rtt(
        rate_frac in 0.0f64..=1.0,
        diff_q4 in -(1i32 << 20)..(1 << 20),
        prev in 1u32..2_000_000,
        count in 0u8..8,
        rtt in 1u32..2_000_000,
        gbps in prop::sample::select(vec![10u32, 25, 100, 400, 1600]),
    ) {
        let (cfg, p, rp) = setup(TimelyClock::PerRtt, gbps);
        let mut t = Timely::new(&cfg, &p, Instant::ZERO).unwrap();
        let line = gbps * 1000 * 256;
        let floor = cfg.min_rate_mbps * 256;
        let rate = floor + ((line - floor) as f64 * rate_frac) as u32;
        t.restore(&cfg, rate, diff_q4, prev, count).unwrap();
        let mut r = TimelyRef::new(rp, p.start_seq.0 as f64);
        sync(&mut r, &t);
        // An ACK past the mark: one update, then the mark moves.
        let s = p.start_seq.0;
        t.ack(&cfg, Instant::ZERO, &ack(s.wrapping_add(1000), s.wrapping_add(2000), rtt)).unwrap();
        let expected_diff = (1.0 - rp.alpha) * r.rtt_diff + rp.alpha * (rtt as f64 - r.prev_rtt);
        prop_assume!(expected_diff.abs() >= 1.0 / 16.0);
        r.update(rtt as f64, 1.0);
        prop_assert!((t.rtt_diff() as f64 / 16.0 - r.rtt_diff).abs() <= 1.0 / 16.0,
            "rtt_diff {} against {}", t.rtt_diff() as f64 / 16.0, r.rtt_diff);
        let tol = (r.rate * 1e-3).max(1e6 / 256.0);
        prop_assert!((bps(&t) - r.rate).abs() <= tol, "rate {} against {}", bps(&t), r.rate);
        prop_assert_eq!(t.count() as u32, r.count);
        prop_assert_eq!(t.prev_rtt(), rtt);
    }

    /// The same per sample, with φ from a random time since the last
    /// update.
    #[test]
    fn one_update_per_sample(
        rate_frac in 0.0f64..=1.0,
        diff_q4 in -(1i32 << 20)..(1 << 20),
        prev in 1u32..2_000_000,
        count in 0u8..8,
        rtt in 20_000u32..2_000_000,
        dt in 0u64..60_000,
        gbps in prop::sample::select(vec![10u32, 25, 100, 400, 1600]),
    ) {
        let (cfg, p, rp) = setup(TimelyClock::PerSample, gbps);
        let mut t = Timely::new(&cfg, &p, Instant::ZERO).unwrap();
        let line = gbps * 1000 * 256;
        let floor = cfg.min_rate_mbps * 256;
        let rate = floor + ((line - floor) as f64 * rate_frac) as u32;
        t.restore(&cfg, rate, diff_q4, prev, count).unwrap();
        let mut r = TimelyRef::new(rp, 0.0);
        sync(&mut r, &t);
        t.ack(&cfg, Instant::from_nanos(dt), &ack(1, 1, rtt)).unwrap();
        let expected_diff = (1.0 - rp.alpha) * r.rtt_diff + rp.alpha * (rtt as f64 - r.prev_rtt);
        prop_assume!(expected_diff.abs() >= 1.0 / 16.0);
        r.ack(dt as f64, 1.0, 1.0, rtt as f64);
        prop_assert!((t.rtt_diff() as f64 / 16.0 - r.rtt_diff).abs() <= 1.0 / 16.0);
        let tol = (r.rate * 1e-3).max(1e6 / 256.0);
        prop_assert!((bps(&t) - r.rate).abs() <= tol, "rate {} against {}", bps(&t), r.rate);
        prop_assert_eq!(t.count() as u32, r.count);
    }
}

/// A random walk of RTT samples around `center` ns, `step` ns at most a
/// sample (a queue that grows and drains), from a small LCG: no two
/// samples in a row alike except by chance.
fn walk(seed: u64, n: usize, center: i64, step: i64) -> Vec<u32> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut rtt = center;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (x >> 33) as i64 % (2 * step + 1) - step;
            // Pulled back towards the centre so the walk stays in range.
            rtt = (rtt + u + (center - rtt) / 16).clamp(2_000, 1_500_000);
            rtt as u32
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), failure_persistence: None, ..ProptestConfig::default() })]

    /// 10^4 ACKs, one per RTT on the per-RTT clock and one every 2 µs on
    /// the per-sample clock: the rate within 1 % of the reference's after
    /// every ACK. Where rtt_diff is within the engine's resolution of 0
    /// the two may take different branches (the reference's geometric
    /// tail stays positive for hundreds of RTTs; the engine's reads 0):
    /// at most 1 % of the updates, each re-synchronised.
    #[test]
    fn traces_match_reference(
        seed in any::<u64>(),
        center in prop::sample::select(vec![30_000i64, 60_000, 200_000, 520_000]),
        step in prop::sample::select(vec![500i64, 3_000, 20_000]),
        per_sample in any::<bool>(),
        gbps in prop::sample::select(vec![25u32, 100, 400]),
    ) {
        let clock = if per_sample { TimelyClock::PerSample } else { TimelyClock::PerRtt };
        let (cfg, p, rp) = setup(clock, gbps);
        let mut t = Timely::new(&cfg, &p, Instant::ZERO).unwrap();
        let mut r = TimelyRef::new(rp, if per_sample { 0.0 } else { p.start_seq.0 as f64 });
        let s = p.start_seq.0;
        let mut below_resolution = 0;
        for (i, rtt) in walk(seed, 10_000, center, step).into_iter().enumerate() {
            let i = i as u32 + 1;
            let now = i as u64 * 2_000;
            // Each ACK acknowledges the data the one before it saw sent.
            let (cum, nxt) = (s.wrapping_add(i * 1000), s.wrapping_add((i + 1) * 1000));
            t.ack(&cfg, Instant::from_nanos(now), &ack(cum, nxt, rtt)).unwrap();
            let diff_before = r.rtt_diff;
            r.ack(now as f64, (cum.wrapping_sub(s)) as f64 + s as f64, (nxt.wrapping_sub(s)) as f64 + s as f64, rtt as f64);
            // An update whose rtt_diff is within the engine's accumulated
            // rounding (1/32 ns a step, shrinking by 1 − α: under 0.04 ns)
            // of 0 may take the other branch: the reference takes the
            // engine's rate and count there, and such updates are counted.
            if r.rtt_diff != diff_before && r.rtt_diff.abs() < 0.04 {
                below_resolution += 1;
                r.rate = bps(&t);
                r.count = t.count() as u32;
            }
            prop_assert!((bps(&t) - r.rate).abs() <= r.rate * 0.01,
                "ACK {}: rate {} against {}", i, bps(&t), r.rate);
        }
        prop_assert!(below_resolution <= 100, "{} updates below the engine's resolution", below_resolution);
    }
}

/// The reference simulator's first RTTs, worked by hand (100 Gb/s, its
/// parameters): the first ACK only records; a flat RTT below T_low adds δ
/// = 100 Mb/s an RTT, five times, then HAI = 500 Mb/s; a rise of 8 µs
/// over minRTT 20 µs gives rtt_diff = 7 µs, gradient 0.35, c = 0.72.
#[test]
fn the_reference_simulators_first_rtts() {
    let (cfg, p, _) = setup(TimelyClock::PerRtt, 100);
    let mut t = Timely::new(&cfg, &p, Instant::ZERO).unwrap();
    let line = 100_000 * 256;
    let s = p.start_seq.0;
    let rtt_at = |k: u32| ack(s.wrapping_add(k * 1000 + 1), s.wrapping_add((k + 1) * 1000), 60_000);
    // First ACK: records 60 µs, no update.
    t.ack(&cfg, Instant::ZERO, &rtt_at(0)).unwrap();
    assert_eq!(t.rate(), line);
    // A rise to 68 µs (between T_low and T_high): new_rtt_diff 8 µs,
    // rtt_diff = 0.875·8 = 7 µs, gradient 7/20, c = 1 − 0.8·0.35 = 0.72.
    let a = ack(s.wrapping_add(1001), s.wrapping_add(3000), 68_000);
    t.ack(&cfg, Instant::ZERO, &a).unwrap();
    assert_eq!(t.rtt_diff(), 7_000 * 16);
    let expected = (line as f64 * 0.72) as u32;
    assert!(t.rate().abs_diff(expected) <= 2, "{} against {expected}", t.rate());
    // ACKs before the mark (snd_nxt 3000) change nothing.
    let before = t;
    t.ack(
        &cfg,
        Instant::ZERO,
        &ack(s.wrapping_add(2000), s.wrapping_add(4000), 1_000),
    )
    .unwrap();
    assert_eq!(t, before);
    // Below T_low: +δ five times, then +HAI.
    let mut r = t.rate();
    for k in 0..7u32 {
        let a = ack(s.wrapping_add(3001 + k * 1000), s.wrapping_add(4000 + k * 1000), 40_000);
        t.ack(&cfg, Instant::ZERO, &a).unwrap();
        let step = if k < 5 { 100 } else { 500 };
        assert!(
            t.rate().abs_diff(r + step * 256) <= 1,
            "step {k}: {} after {r}",
            t.rate()
        );
        r = t.rate();
    }
}

/// Bad samples: none leaves the rate; 0 and 2^24 ns or more are refused
/// with the state unchanged.
#[test]
fn bad_samples_are_refused_or_ignored() {
    for clock in [TimelyClock::PerRtt, TimelyClock::PerSample] {
        let (cfg, p, _) = setup(clock, 100);
        let mut t = Timely::new(&cfg, &p, Instant::ZERO).unwrap();
        let before = t;
        let mut a = ack(p.start_seq.0.wrapping_add(1), p.start_seq.0.wrapping_add(2), 0);
        assert_eq!(t.ack(&cfg, Instant::ZERO, &a), Err(Error::InvalidParams));
        a.rtt_ns = Some(1 << 24);
        assert_eq!(t.ack(&cfg, Instant::ZERO, &a), Err(Error::InvalidParams));
        a.rtt_ns = Some(u32::MAX);
        assert_eq!(t.ack(&cfg, Instant::ZERO, &a), Err(Error::InvalidParams));
        a.rtt_ns = None;
        assert_eq!(t.ack(&cfg, Instant::ZERO, &a), Ok(t.decision()));
        assert_eq!(t, before);
    }
}

/// A flat RTT after a rise: rtt_diff decays by 1 − α = 1/8 an RTT. The
/// engine's (2^-4 ns) reads 0 after six RTTs, and the rate climbs again
/// by δ an RTT; the `f64` code's stays positive (8 µs · 8^-k) for hundreds
/// of RTTs and keeps cutting by a factor within 10^-6 of 1, holding the
/// rate. The one place the two part, by design (docs/design-notes.md).
#[test]
fn a_flat_rtt_after_a_rise_climbs_again_where_f64_holds() {
    let (cfg, p, rp) = setup(TimelyClock::PerRtt, 100);
    let mut t = Timely::new(&cfg, &p, Instant::ZERO).unwrap();
    let mut r = TimelyRef::new(rp, p.start_seq.0 as f64);
    let s = p.start_seq.0;
    let mut rates = Vec::new();
    for k in 0..14u32 {
        let rtt = if k == 0 { 60_000 } else { 68_000 };
        // Each ACK passes the snd_nxt of the one before: one update each.
        let (cum, nxt) = (k * 1000 + 501, (k + 1) * 1000 + 1);
        t.ack(&cfg, Instant::ZERO, &ack(s.wrapping_add(cum), s.wrapping_add(nxt), rtt))
            .unwrap();
        r.ack(0.0, s as f64 + cum as f64, s as f64 + nxt as f64, rtt as f64);
        rates.push((bps(&t), r.rate, t.rtt_diff()));
    }
    // Through the rise and five flat RTTs, the two agree within 0.1 %.
    for (k, &(e, f, _)) in rates.iter().enumerate().take(7) {
        assert!((e - f).abs() <= f * 1e-3, "RTT {k}: {e} against {f}");
    }
    assert_ne!(rates[6].2, 0);
    assert_eq!(rates[7].2, 0, "rtt_diff reads 0 after six flat RTTs");
    for k in 7..14 {
        assert!(rates[k].0 > rates[k - 1].0, "the engine climbs at RTT {k}");
        assert!(rates[k].1 <= rates[k - 1].1, "the f64 code holds at RTT {k}");
        assert!(rates[k - 1].1 - rates[k].1 < 1e-3 * rates[k].1);
    }
}
