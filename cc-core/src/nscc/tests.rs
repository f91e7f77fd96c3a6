//! NSCC's behaviour from uet-htsim's rules, its parameters against what
//! uet-htsim printed, and the fixed point against its `f64` model.

use super::*;
#[cfg(feature = "reference")]
use crate::testing::Lcg;
use crate::units::LinkSpeed;

const T0: u32 = 14_023;

fn params(base: u32) -> FlowParams {
    FlowParams {
        algorithm: Algorithm::Nscc,
        base_rtt: BaseRtt::from_nanos(base).unwrap(),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(0),
    }
}

fn at(ns: u32) -> Instant {
    Instant::from_nanos(ns as u64)
}

/// An ACK of `cum` received bytes with `in_flight` more out, RTT `rtt`.
fn ack(cum: u32, in_flight: u32, rtt: Option<u32>, ecn: bool) -> Ack<'static> {
    Ack {
        rtt_ns: rtt,
        ece: if ecn { EcnEcho::Marked } else { EcnEcho::NotMarked },
        ..Ack::new(Seq(cum), Seq(cum.wrapping_add(in_flight)))
    }
}

/// What `initNsccParams` printed at 40ccb05 (docs/reference-runs.md,
/// "NSCC's parameters as uet-htsim derives them"): host speed (Mb/s),
/// network RTT (ps), target (ps), alpha (B/ps), fi (B), eta (B),
/// fi_scale, QA threshold (ps), max window at the network RTT (B).
/// One printout's row.
type Printed = (u32, u64, u64, f64, f64, f64, f64, f64, u32);

const PRINTED: [Printed; 5] = [
    (
        100_000, 14_022_720, 10_517_040, 0.00159158, 23_873.7, 716.21, 0.29214, 4.20682e7, 262_926,
    ),
    (
        100_000, 9_348_480, 7_011_360, 0.00106105, 15_915.8, 477.474, 0.19476, 2.80454e7, 175_284,
    ),
    (
        200_000, 8_674_240, 6_505_680, 0.00196905, 29_535.8, 886.074, 0.361427, 2.60227e7, 325_284,
    ),
    (
        400_000, 8_337_120, 6_252_840, 0.00378505, 56_775.8, 1_703.27, 0.69476, 2.50114e7, 625_284,
    ),
    (
        800_000, 8_168_560, 6_126_420, 0.00741705, 111_256.0, 3_337.67, 1.36143, 2.45057e7, 1_225_284,
    ),
];

/// The derivation holds uet-htsim's printed values at 100, 200, 400 and
/// 800 Gb/s, each to its unit's rounding (times to the ns, fi to the
/// byte, α and fi_scale to 2^-16; the printouts' six digits), and the max
/// window at the network RTT to within what rounding the RTT to the ns
/// moves it (1.5 · rate · 0.5 ns).
#[test]
fn parameters_are_uet_htsims() {
    for (mbps, rtt, target, alpha, fi, eta, fi_scale, qa, maxwnd) in PRINTED {
        let c = NsccConfig::derive(mbps, rtt, 4_150, true);
        assert_eq!(c.validate(), Ok(()), "{mbps}");
        let close = |got: f64, want: f64, unit: f64| (got - want).abs() <= unit + want.abs() * 1e-5;
        assert_eq!(c.network_rtt_ns, ((rtt + 500) / 1000) as u32);
        assert_eq!(c.target_delay_ns, ((target + 500) / 1000) as u32, "{mbps}");
        assert!(
            close(c.alpha_q16 as f64 / 65_536.0, alpha * 1000.0, 1.0 / 65_536.0),
            "{mbps}: α {}",
            c.alpha_q16
        );
        assert!(close(c.fi as f64, fi, 0.5), "{mbps}: fi {}", c.fi);
        assert_eq!(c.eta, eta as u32, "{mbps}");
        assert!(
            close(c.fi_scale_q16 as f64 / 65_536.0, fi_scale, 1.0 / 65_536.0),
            "{mbps}"
        );
        assert!(close(c.qa_threshold_ns as f64, qa / 1000.0, 0.5), "{mbps}");
        assert_eq!((c.qa_gate, c.adjust_bytes, c.mtu), (3, 33_200, 4_150));
        let slack = 1.5 * mbps as f64 / 8000.0 * 0.5 + 1.0;
        assert!(
            (c.max_window(c.network_rtt_ns) as f64 - maxwnd as f64).abs() <= slack,
            "{mbps}: {} vs {maxwnd}",
            c.max_window(c.network_rtt_ns)
        );
    }
    // Without trimming the target is the whole RTT.
    assert_eq!(
        NsccConfig::derive(100_000, 14_022_720, 4_150, false).target_delay_ns,
        T0
    );
}

/// A target given (uet-htsim's `-target_q_delay`) moves the target and
/// quick adapt's threshold alone, as uet-htsim prints them for its
/// default fabric with `-target_q_delay 5` and `20.5`: `_target_Qdelay`
/// 5 000 000 and 20 500 000 ps, `_qa_threshold` 2e+07 and 8.2e+07, α,
/// fi, eta and fi_scale those of the first row of `PRINTED`.
#[test]
fn a_given_target_moves_the_target_and_quick_adapts_threshold_alone() {
    let (mbps, rtt) = (100_000, 14_022_720);
    let derived = NsccConfig::derive(mbps, rtt, 4_150, true);
    for (target_ps, target_ns, qa_ns) in [(5_000_000, 5_000, 20_000), (20_500_000, 20_500, 82_000)] {
        let c = NsccConfig::derive_with_target(mbps, rtt, 4_150, target_ps);
        assert_eq!((c.target_delay_ns, c.qa_threshold_ns), (target_ns, qa_ns));
        let same = NsccConfig {
            target_delay_ns: derived.target_delay_ns,
            qa_threshold_ns: derived.qa_threshold_ns,
            ..c
        };
        assert_eq!(same, derived, "{target_ps}");
    }
}

#[test]
fn state_is_48_bytes_and_a_bad_sample_changes_nothing() {
    assert_eq!(core::mem::size_of::<Nscc>(), 48);
    let cfg = NsccConfig::uet_htsim();
    let mut s = Nscc::new(&cfg, &params(T0)).unwrap();
    let before = s;
    assert_eq!(
        s.ack(&cfg, at(20_000), &ack(16_600, 100_000, Some(0), false)),
        Err(Error::BadSample)
    );
    assert_eq!(s, before);
    let bad = Nack {
        rtt_ns: Some(0),
        ..Nack::new(Seq(0), 4_150, Seq(0), Seq(8_300))
    };
    assert_eq!(s.nack(&cfg, at(20_000), &bad), Err(Error::BadSample));
    assert_eq!(s, before);
    // Rates not a multiple of 125 Mb/s are refused by name.
    let odd = NsccConfig {
        line_rate_mbps: 100_001,
        ..cfg
    };
    assert_eq!(odd.invalid_field(), Some("line_rate_mbps"));
}

/// One flow on an idle path (uet-htsim's one.cm): it starts at the
/// ceiling, 1.5 BDP, and no ACK without queueing moves it down.
#[test]
fn an_idle_path_keeps_the_window_at_its_ceiling() {
    let cfg = NsccConfig::uet_htsim();
    let mut s = Nscc::new(&cfg, &params(T0)).unwrap();
    let max = cfg.max_window(T0);
    assert_eq!(s.window(), max);
    let mut now = 16_000;
    for i in 1..=120u32 {
        now += 1_330;
        s.ack(&cfg, at(now), &ack(i * 16_600, 150_000, Some(T0 + 300), false))
            .unwrap();
        assert_eq!(s.window(), max, "ACK {i}");
    }
}

/// The accumulator's 43 bits: a carry out of the low word passes into the
/// bits beside the base RTT, a sum past 2^43 − 1 stays there (it
/// saturates, never wraps), and the base RTT and the accumulator never
/// touch each other's bits.
#[test]
fn the_accumulator_carries_and_saturates_beside_the_base_rtt() {
    let cfg = NsccConfig::uet_htsim();
    let mut s = Nscc::new(&cfg, &params(BaseRtt::MAX_NS)).unwrap();
    s.add_inc(u32::MAX as u64);
    s.add_inc(1);
    assert_eq!(s.inc(), 1 << 32);
    assert_eq!(s.base_rtt_ns(), BaseRtt::MAX_NS);
    s.add_inc(INC_MAX - (1 << 32) - 5);
    assert_eq!(s.inc(), INC_MAX - 5);
    s.add_inc(6);
    assert_eq!(s.inc(), INC_MAX);
    s.add_inc((1 << 57) - 1);
    assert_eq!(s.inc(), INC_MAX);
    assert_eq!(s.base_rtt_ns(), BaseRtt::MAX_NS);
    assert!(s.update_base(1_000));
    assert_eq!((s.base_rtt_ns(), s.inc()), (1_000, INC_MAX));
    s.clear_inc();
    assert_eq!((s.base_rtt_ns(), s.inc()), (1_000, 0));
    // A fulfil of the saturated sum: INC_MAX/cwnd, then the ceiling.
    s.add_inc(1 << 50);
    s.cwnd = 1 << 20;
    s.fulfil(&cfg, 0, &mut ());
    assert_eq!(s.cwnd, (1 << 20) + (INC_MAX >> 20) as u32);
}

/// Where the 43 bits reach: with every configuration `derive` makes from
/// 100 Gb/s to 1.6 Tb/s and network RTTs up to 1 ms, a fulfil period's
/// fair increase, `fi` times the period's bytes (8 MTU) and one more ACK
/// of up to 64 KB, stays below [`INC_MAX`]: the sum saturates only
/// beyond that (an ACK that covers megabytes at once, at those rates).
#[test]
fn a_period_of_any_derived_configuration_fits_the_accumulator() {
    for gbps in [100u32, 200, 400, 800, 1_600] {
        for rtt_ns in [1_000u64, 12_000, 100_000, 1 << 20] {
            let cfg = NsccConfig::derive(gbps * 1_000, rtt_ns * 1_000, 4_150, true);
            let period = cfg.fi as u64 * (cfg.adjust_bytes as u64 + 65_536);
            assert!(period < INC_MAX, "{gbps} Gb/s, {rtt_ns} ns: {period}");
        }
    }
}

/// Delay above the target without ECN: fair increase, paid by the fulfil
/// every 8 MTU, fi·acked/cwnd, plus eta once a network RTT.
#[test]
fn fair_increase_is_paid_at_the_fulfil() {
    let cfg = NsccConfig::uet_htsim();
    let mut s = Nscc::new(&cfg, &params(T0)).unwrap();
    s.cwnd = 100_000;
    // The first ACK after time 0 opens the QA window and fulfils (eta).
    s.ack(&cfg, at(20_000), &ack(4_150, 50_000, Some(T0 + 20_000), false))
        .unwrap();
    let w0 = 100_000 + (cfg.fi as u64 * 4_150 / 100_000) as u32 + cfg.eta;
    assert_eq!(s.window(), w0);
    // Two more ACKs of 16 600: 33 200 received, not yet above 8 MTU.
    s.ack(&cfg, at(21_000), &ack(20_750, 50_000, Some(T0 + 20_000), false))
        .unwrap();
    s.ack(&cfg, at(22_000), &ack(37_350, 50_000, Some(T0 + 20_000), false))
        .unwrap();
    assert_eq!(s.window(), w0);
    assert_eq!(s.inc(), cfg.fi as u64 * 33_200);
    // One byte more fulfils: no eta within a network RTT of the last.
    s.ack(&cfg, at(23_000), &ack(37_351, 50_000, Some(T0 + 20_000), false))
        .unwrap();
    assert_eq!(s.window(), w0 + (cfg.fi as u64 * 33_201 / w0 as u64) as u32);
    assert_eq!(s.inc(), 0);
}

/// What uet-htsim's "finished at" line sums, on the steps above: each
/// fulfil counts the fair gathering over the window it leaves (before
/// eta), eta as added; a NACK its bytes; a decrease what it took.
#[test]
fn stats_sum_each_rule_as_uet_htsim_prints_it() {
    let cfg = NsccConfig::uet_htsim();
    let mut s = Nscc::new(&cfg, &params(T0)).unwrap();
    s.cwnd = 100_000;
    let mut st = Stats::default();
    s.ack_observed(&cfg, at(20_000), &ack(4_150, 50_000, Some(T0 + 20_000), false), &mut st)
        .unwrap();
    let w1 = 100_000 + (cfg.fi as u64 * 4_150 / 100_000);
    assert_eq!((st.fair_inc, st.eta_inc), (cfg.fi as u64 * 4_150 / w1, cfg.eta as u64));
    s.ack_observed(
        &cfg,
        at(21_000),
        &ack(37_351, 50_000, Some(T0 + 20_000), false),
        &mut st,
    )
    .unwrap();
    let w2 = s.window() as u64;
    assert_eq!(st.fair_inc, cfg.fi as u64 * 4_150 / w1 + cfg.fi as u64 * 33_201 / w2);
    assert_eq!((st.prop_inc, st.fast_inc, st.multi_dec, st.quick_dec), (0, 0, 0, 0));
    // A NACK counts its bytes, which come off the window.
    let n = Nack::new(Seq(37_351), 4_150, Seq(37_351), Seq(87_351));
    s.nack_observed(&cfg, at(22_000), &n, &mut st).unwrap();
    assert_eq!((st.nack_dec, s.window() as u64), (4_150, w2 - 4_150));
    // A marked ACK above the target, a base RTT after the last decrease
    // (and a network RTT after the last eta, which its fulfil adds).
    s.avg_delay = 20_000 << 8;
    let w3 = s.window();
    s.ack_observed(&cfg, at(40_000), &ack(37_351, 50_000, Some(T0 + 30_000), true), &mut st)
        .unwrap();
    assert!(s.window() < w3);
    assert_eq!(st.eta_inc, 2 * cfg.eta as u64);
    assert_eq!(st.multi_dec, (w3 + cfg.eta - s.window()) as i64);
    // The unobserved controller goes the same way.
    let mut plain = Nscc::new(&cfg, &params(T0)).unwrap();
    plain.cwnd = 100_000;
    plain
        .ack(&cfg, at(20_000), &ack(4_150, 50_000, Some(T0 + 20_000), false))
        .unwrap();
    plain
        .ack(&cfg, at(21_000), &ack(37_351, 50_000, Some(T0 + 20_000), false))
        .unwrap();
    plain.nack(&cfg, at(22_000), &n).unwrap();
    plain.avg_delay = 20_000 << 8;
    plain
        .ack(&cfg, at(40_000), &ack(37_351, 50_000, Some(T0 + 30_000), true))
        .unwrap();
    assert_eq!(plain, s);
}

/// ECN with delay above the target: at most one decrease a base RTT, by
/// γ·(avg − target)/avg, never below half; ECN below the target: nothing.
#[test]
fn marked_acks_decrease_once_a_base_rtt_and_at_most_by_half() {
    let cfg = NsccConfig::uet_htsim();
    let mut s = Nscc::new(&cfg, &params(T0)).unwrap();
    s.last_adjust = 0;
    s.avg_delay = 20_000 << 8;
    let w = s.window();
    let now = 15_000;
    // The first event opens the QA window; marked, below the target: no change.
    s.ack(&cfg, at(now), &ack(0, 100_000, Some(T0 + 5_000), true)).unwrap();
    assert_eq!(s.window(), w);
    let avg = s.avg_delay as f64 / 256.0;
    s.ack(&cfg, at(now + 100), &ack(0, 100_000, Some(T0 + 30_000), true))
        .unwrap();
    let avg2 = s.avg_delay as f64 / 256.0;
    assert!(avg2 > avg);
    let t = cfg.target_delay_ns as f64;
    let want = (w as f64 * (1.0 - 0.8 * (avg2 - t) / avg2)).floor();
    assert!((s.window() as f64 - want).abs() <= 2.0, "{} vs {want}", s.window());
    let w1 = s.window();
    // Within a base RTT: no second decrease (no fulfil either: the last
    // is set to now).
    s.last_adjust = now + 100 + T0;
    s.ack(&cfg, at(now + 100 + T0), &ack(0, 100_000, Some(T0 + 30_000), true))
        .unwrap();
    assert_eq!(s.window(), w1);
    // After it: a decrease, floored at half.
    s.avg_delay = 1_000_000 << 8;
    s.ack(&cfg, at(now + 101 + T0), &ack(0, 100_000, Some(T0 + 30_000), true))
        .unwrap();
    assert_eq!(s.window(), w1 / 2);
}

/// A NACK: the delay average moves toward a network RTT; quick adapt
/// runs at the window's end when little was delivered, setting the window
/// to what was, then marked ACKs and NACKs are ignored until the bytes in
/// flight are answered; otherwise the NACK's bytes come off.
#[test]
fn nacks_cut_and_trigger_quick_adapt() {
    let cfg = NsccConfig::uet_htsim();
    let mut s = Nscc::new(&cfg, &params(T0)).unwrap();
    let w = s.window();
    // Opens the QA window (ending at 1000 + base + target).
    s.ack(&cfg, at(1_000), &ack(8_300, 200_000, Some(T0 + 100), false))
        .unwrap();
    let n = |seq: u32, cum: u32| Nack::new(Seq(seq), 4_150, Seq(cum), Seq(cum + 180_000));
    s.nack(&cfg, at(2_000), &n(8_300, 8_300)).unwrap();
    assert_eq!(s.window(), w - 4_150);
    // The average took a network RTT at weight 1/80.
    assert!((s.avg_delay as f64 / 256.0 - 0.0125 * cfg.network_rtt_ns as f64).abs() < 2.0);
    // Past the window's end, 8 300 delivered in it (< maxwnd >> 3): the
    // next NACK runs quick adapt.
    s.ack(&cfg, at(3_000), &ack(16_600, 180_000, Some(T0 + 100), false))
        .unwrap();
    let end = 1_000 + T0 + cfg.target_delay_ns;
    s.nack(&cfg, at(end + 1), &n(16_600, 16_600)).unwrap();
    assert_eq!(s.window(), 8_300);
    assert_eq!(s.ignore_left, 180_000);
    // Marked ACKs and NACKs are now ignored (no cut) until 180 000 bytes
    // are answered.
    s.nack(&cfg, at(end + 2), &n(20_750, 16_600)).unwrap();
    assert_eq!(s.window(), 8_300);
    s.ack(&cfg, at(end + 3), &ack(33_200, 180_000, Some(T0 + 30_000), true))
        .unwrap();
    assert_eq!(s.window(), 8_300);
    assert_eq!(s.ignore_left, 180_000 - 4_150 - 16_600);
    // A timeout takes one MTU, keeping one.
    s.loss(&cfg, at(end + 4), Seq(0)).unwrap();
    assert_eq!(s.window(), 4_150);
    s.loss(&cfg, at(end + 5), Seq(0)).unwrap();
    assert_eq!(s.window(), 4_150);
}

/// Delay under 1 µs for a window's worth of bytes: fast increase, by
/// fi_scale per byte acknowledged, until a delay at or above 1 µs.
#[test]
fn fast_increase_after_a_window_below_one_microsecond() {
    let cfg = NsccConfig::uet_htsim();
    let mut s = Nscc::new(&cfg, &params(T0)).unwrap();
    s.cwnd = 50_000;
    let mut cum = 0;
    let mut now = 20_000;
    for _ in 0..3 {
        cum += 16_600;
        now += 100;
        s.ack(&cfg, at(now), &ack(cum, 50_000, Some(T0 + 500), false)).unwrap();
    }
    assert!(!s.flag(INCREASE), "49 800 acked: not above the window");
    let w = s.window();
    cum += 16_600;
    now += 100;
    s.ack(&cfg, at(now), &ack(cum, 50_000, Some(T0 + 500), false)).unwrap();
    assert!(s.flag(INCREASE));
    let fast = ((16_600u64 * cfg.fi_scale_q16 as u64) >> 16) as u32;
    assert!(s.window() >= w + fast, "{} vs {w} + {fast}", s.window());
    cum += 16_600;
    now += 100;
    s.ack(&cfg, at(now), &ack(cum, 50_000, Some(T0 + 2_000), false))
        .unwrap();
    assert!(!s.flag(INCREASE) && s.fi_count() == 0);
}

/// At 800 Gb/s a fulfil period's fair increase passes 2^32 bytes² (where
/// uet-htsim's 32-bit accumulator wraps); the 43-bit one pays it in full.
#[test]
fn the_accumulator_holds_800_gbps() {
    let (mbps, rtt, ..) = PRINTED[4];
    let cfg = NsccConfig::derive(mbps, rtt, 4_150, true);
    let p = FlowParams {
        line_rate: LinkSpeed::from_gbps(800),
        ..params(cfg.network_rtt_ns)
    };
    let mut s = Nscc::new(&cfg, &p).unwrap();
    s.cwnd = 500_000;
    s.ack(&cfg, at(10_000), &ack(0, 0, Some(cfg.network_rtt_ns + 10_000), false))
        .unwrap();
    let w = s.window();
    // Two ACKs of 20 000 above the target: 40 000 > 33 200 fulfils.
    s.ack(
        &cfg,
        at(10_100),
        &ack(20_000, 0, Some(cfg.network_rtt_ns + 10_000), false),
    )
    .unwrap();
    assert_eq!(s.inc(), cfg.fi as u64 * 20_000);
    let inc = cfg.fi as u64 * 40_000;
    assert!(inc > 1 << 32);
    s.ack(
        &cfg,
        at(10_200),
        &ack(40_000, 0, Some(cfg.network_rtt_ns + 10_000), false),
    )
    .unwrap();
    assert_eq!(s.window() as u64, w as u64 + inc / w as u64);
}

/// The model's state set to the engine's.
#[cfg(feature = "reference")]
fn sync(r: &mut reference::NsccRef, s: &Nscc) {
    r.cwnd = s.cwnd as f64;
    r.base_rtt = s.base_rtt_ns() as f64;
    r.avg_delay = s.avg_delay as f64 / 256.0;
    r.achieved = s.achieved() as f64;
    r.received = s.received() as f64;
    r.bytes_to_ignore = s.ignore_left as f64;
    r.bytes_ignored = 0.0;
    r.inc = s.inc() as f64;
    r.fi_count = s.fi_count() as f64;
    r.increase = s.flag(INCREASE);
    r.trigger_qa = s.flag(TRIGGER_QA);
    r.qa_open = s.flag(QA_OPEN);
    r.qa_end = s.qa_end;
    r.last_adjust = s.last_adjust;
    r.last_dec = s.last_dec;
    r.recvd = s.recvd;
}

/// 10^4 ACKs, NACKs and timeouts against the `f64` model from each of
/// five seeds at each of 100 and 800 Gb/s (`NSCC_SEEDS` for more), the
/// model set to the engine's state before each step: every window within
/// max(2 bytes, 10^-4) of the model's (a byte of a decrease's rounding
/// moves the fulfil's inc/cwnd after it by inc/cwnd² bytes), every count,
/// flag and time equal. The engine's [`Stats`] (summed through
/// [`Observer`]) end within max(16 bytes, 10^-4) of the sums the model
/// keeps where uet-htsim keeps them, each rule's sum above zero.
/// Delays are kept 2 ns or more from the target and the fast-increase
/// gate, and a step that leaves the average within 2^-6 ns of the target
/// (where its 2^-8 ns could take the other branch) is not compared (fewer
/// than ten a trace).
#[cfg(feature = "reference")]
#[test]
fn fixed_point_follows_the_reference() {
    let seeds = std::env::var("NSCC_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5u64);
    for (mbps, rtt_ps) in [(100_000, PRINTED[0].1), (800_000, PRINTED[4].1)] {
        let cfg = NsccConfig::derive(mbps, rtt_ps, 4_150, true);
        let rp = reference::NsccRefParams::from_config(&cfg);
        for seed in 1..=seeds {
            let mut g = Lcg(seed);
            let base = cfg.network_rtt_ns + g.draw() % 3_000;
            let p = FlowParams {
                line_rate: LinkSpeed::from_mbps(mbps),
                ..params(base)
            };
            let mut s = Nscc::new(&cfg, &p).unwrap();
            let mut r = reference::NsccRef::new(rp, base as f64, None, 0);
            let (mut now, mut cum) = (0u32, 0u32);
            // Steps that decreased, quick-adapted, fast-increased, fulfilled.
            let mut seen = [0u32; 4];
            let mut near = 0u32;
            let mut stats = Stats::default();
            for i in 0..10_000 {
                sync(&mut r, &s);
                let before = s;
                let sums_before = (stats, r.stats);
                // Phases of 500 steps: delays anywhere, below the fast
                // increase's gate, or sparse ACKs (quick adapt's case).
                let phase = (i / 500 + seed as u32) % 3;
                now = now.wrapping_add(match phase {
                    2 => 2_000 + g.draw() % 20_000,
                    _ => 50 + g.draw() % 3_000,
                });
                let in_flight = g.draw() % 400_000;
                let rtt = {
                    let mut d = match phase {
                        1 => g.draw() % 1_200,
                        _ => g.draw() % 60_000,
                    };
                    for gate in [cfg.target_delay_ns, cfg.fast_increase_delay_ns] {
                        if d.abs_diff(gate) < 2 {
                            d += 4;
                        }
                    }
                    let rtt = s.base_rtt_ns() + d;
                    match g.draw() % 20 {
                        0 => None,
                        1 => Some(s.base_rtt_ns().saturating_sub(g.draw() % 50).max(1)),
                        _ => Some(rtt),
                    }
                };
                let t = at(now);
                match g.draw() % if phase == 2 { 8 } else { 40 } {
                    0 => {
                        s.loss(&cfg, t, Seq(cum)).unwrap();
                        r.timeout();
                    }
                    1..=3 => {
                        let len = [4_150, 2_000, 64][(g.draw() % 3) as usize];
                        let n = Nack {
                            rtt_ns: rtt,
                            ..Nack::new(Seq(cum), len, Seq(cum), Seq(cum.wrapping_add(in_flight)))
                        };
                        s.nack_observed(&cfg, t, &n, &mut stats).unwrap();
                        r.nack(now, len, in_flight, rtt);
                    }
                    _ => {
                        let step = match phase {
                            2 => [0, 0, 4_150, 2_000],
                            _ => [0, 4_150, 16_600, 33_200],
                        };
                        cum = cum.wrapping_add(step[(g.draw() % 4) as usize]);
                        let ecn = g.draw().is_multiple_of(4);
                        s.ack_observed(&cfg, t, &ack(cum, in_flight, rtt, ecn), &mut stats)
                            .unwrap();
                        r.ack(now, cum, in_flight, rtt, ecn);
                    }
                }
                // The average within 2^-6 ns of the target after the step:
                // its rounding (2^-8 ns, the model's none) may decide the
                // decrease either way; the next step starts again from the
                // engine's state.
                if (r.avg_delay - r.p.target).abs() < 1.0 / 64.0 {
                    near += 1;
                    // The step's rules are not compared: nor are its sums.
                    (stats, r.stats) = sums_before;
                    continue;
                }
                let (got, want) = (s.cwnd as f64, r.cwnd);
                assert!(
                    (got - want).abs() <= (want * 1e-4).max(2.0),
                    "{mbps} seed {seed} step {i}: {got} vs {want}; before {before:?} after {s:?}"
                );
                let ignoring = r.bytes_ignored < r.bytes_to_ignore;
                assert_eq!(
                    (
                        s.base_rtt_ns() as f64,
                        s.achieved() as f64,
                        s.received() as f64,
                        s.ignore_left > 0,
                        s.fi_count() as f64,
                        s.flag(INCREASE),
                        s.flag(TRIGGER_QA),
                        s.flag(QA_OPEN),
                        (s.qa_end, s.last_adjust, s.last_dec, s.recvd),
                    ),
                    (
                        r.base_rtt,
                        r.achieved,
                        r.received,
                        ignoring,
                        r.fi_count,
                        r.increase,
                        r.trigger_qa,
                        r.qa_open,
                        (r.qa_end, r.last_adjust, r.last_dec, r.recvd),
                    ),
                    "{mbps} seed {seed} step {i}"
                );
                assert!(
                    (s.avg_delay as f64 / 256.0 - r.avg_delay).abs() <= 1.0 / 128.0,
                    "{mbps} seed {seed} step {i}: avg {} vs {}",
                    s.avg_delay as f64 / 256.0,
                    r.avg_delay
                );
                seen[0] += (s.last_dec != before.last_dec) as u32;
                seen[1] += (s.ignore_left > before.ignore_left) as u32;
                seen[2] += s.flag(INCREASE) as u32;
                seen[3] += (s.inc() == 0 && before.inc() > 0) as u32;
                let inc_tol = (r.inc * 1e-6).max(acked_tolerance());
                assert!(
                    (s.inc() as f64 - r.inc).abs() <= inc_tol,
                    "{mbps} seed {seed} step {i}: inc {} vs {}",
                    s.inc(),
                    r.inc
                );
            }
            assert!(
                seen.iter().all(|&n| n >= 20),
                "{mbps} seed {seed}: every rule ran: {seen:?}"
            );
            assert!(
                near < 10,
                "{mbps} seed {seed}: {near} steps too near the target to compare"
            );
            let m = r.stats;
            let pairs = [
                (stats.fair_inc as f64, m.fair_inc),
                (stats.prop_inc as f64, m.prop_inc),
                (stats.fast_inc as f64, m.fast_inc),
                (stats.eta_inc as f64, m.eta_inc),
                (stats.multi_dec as f64, m.multi_dec),
                (stats.quick_dec as f64, m.quick_dec),
                (stats.nack_dec as f64, m.nack_dec),
            ];
            for (k, (got, want)) in pairs.into_iter().enumerate() {
                assert!(
                    want > 0.0 && (got - want).abs() <= (want * 1e-4).max(16.0),
                    "{mbps} seed {seed}: sum {k} (fair, prop, fast, eta, multi, quick, nack): {got} vs {want}"
                );
            }
        }
    }
}

/// The accumulator's rounding per ACK: one byte² for the truncation of
/// each term, the model's and the engine's.
#[cfg(feature = "reference")]
fn acked_tolerance() -> f64 {
    2.0
}

/// The reference's own derivation agrees with the fixed-point one.
#[cfg(feature = "reference")]
#[test]
fn the_reference_derives_the_same_parameters() {
    for (mbps, rtt, ..) in PRINTED {
        let c = reference::NsccRefParams::from_config(&NsccConfig::derive(mbps, rtt, 4_150, true));
        let r = reference::NsccRefParams::derive(mbps, rtt, 4_150, true);
        for (got, want, unit) in [
            (c.target, r.target, 0.5),
            (c.alpha, r.alpha, 1.0 / 65_536.0),
            (c.fi, r.fi, 0.5),
            (c.eta, reference::floor(r.eta), 0.0),
            (c.fi_scale, r.fi_scale, 1.0 / 65_536.0),
            (c.network_rtt, r.network_rtt, 0.5),
        ] {
            assert!((got - want).abs() <= unit + 1e-9, "{mbps}: {got} vs {want}");
        }
    }
}

/// A base RTT so short that the ceiling (1.5 BDP) is below one MTU: the
/// flow starts at the ceiling; a timeout keeps one MTU (uet-htsim's
/// `min_cwnd`), above it, which the decision's bounds allow; the next
/// ACK bounds it again.
#[test]
fn a_ceiling_below_one_mtu_keeps_the_mtu_after_a_timeout() {
    use crate::controller::AlgorithmConfig;
    let cfg = NsccConfig::uet_htsim();
    let p = params(100);
    let max = cfg.max_window(100);
    assert!(max < cfg.mtu);
    let mut s = Nscc::new(&cfg, &p).unwrap();
    assert_eq!(s.window(), max);
    let d = s.loss(&cfg, at(1_000), Seq(0)).unwrap();
    assert_eq!(s.window(), cfg.mtu);
    assert_eq!(cfg.check_decision(&p, &d), Ok(()));
    s.ack(&cfg, at(2_000), &ack(4_150, 0, Some(150), false)).unwrap();
    assert_eq!(s.window(), max);
}

/// An ACK's case, at the target's edge and either side of the base RTT:
/// the delay is the sample over the base RTT (none below it), the
/// average without a sample; the target itself counts as reached.
#[test]
fn an_acks_case_is_its_mark_against_the_delay_at_the_target() {
    let cfg = NsccConfig::uet_htsim();
    let s = Nscc::new(&cfg, &params(12_000)).unwrap();
    let (base, t) = (s.base_rtt_ns(), cfg.target_delay_ns);
    let cases = |rtt| [false, true].map(|m| s.case(&cfg, m, rtt));
    use Case::*;
    assert_eq!(cases(Some(base + t)), [FairIncrease, MultiplicativeDecrease]);
    assert_eq!(cases(Some(base + t - 1)), [ProportionalIncrease, NoChange]);
    assert_eq!(cases(Some(base / 2)), [ProportionalIncrease, NoChange]);
    assert_eq!(cases(Some(u32::MAX)), [FairIncrease, MultiplicativeDecrease]);
    // No sample: the average (0 at the start).
    assert_eq!(cases(None), [ProportionalIncrease, NoChange]);
    let mut hot = s;
    hot.avg_delay = t << 8;
    assert_eq!(hot.case(&cfg, false, None), FairIncrease);
    assert_eq!(
        Case::ALL.map(Case::name),
        [
            "fair increase",
            "proportional increase",
            "multiplicative decrease",
            "no change"
        ]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
    /// The proportional increase's product is the exact ⌊p·a/2^16⌋ in
    /// both of its forms: p within a word (half the cases) and above.
    #[test]
    fn the_proportional_product_is_exact(p in 0u64..=1 << 47, a in 0u32..1 << 31, word in proptest::prelude::any::<bool>()) {
        let p = if word { p & 0xFFFF_FFFF } else { p };
        proptest::prop_assert_eq!(mul_shr16(p, a) as u128, (p as u128 * a as u128) >> 16);
    }
}

#[test]
fn the_proportional_product_at_its_corners() {
    for p in [
        0,
        1,
        0xFFFF,
        0x1_0000,
        u32::MAX as u64,
        1 << 32,
        (1 << 32) + 0xFFFF,
        1 << 47,
    ] {
        for a in [0, 1, 0xFFFF, 1 << 16, (1 << 31) - 1] {
            assert_eq!(mul_shr16(p, a) as u128, (p as u128 * a as u128) >> 16, "{p}·{a}");
        }
    }
}
