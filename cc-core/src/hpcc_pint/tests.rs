//! HPCC-PINT's steps worked by hand.

use super::*;
use crate::event::PintSample;
use crate::units::LinkSpeed;
use crate::wire::pint::PintWidth;

/// 100 Gb/s, T = 8 µs: W_init = 100 000 bytes.
fn params() -> FlowParams {
    FlowParams {
        algorithm: Algorithm::HpccPint,
        base_rtt: BaseRtt::from_nanos(8_000).unwrap(),
        line_rate: LinkSpeed::from_gbps(100),
        start_seq: Seq(u32::MAX - 1_500),
    }
}

fn ack(cum: u32, nxt: u32, pint: Option<PintSample>) -> Ack<'static> {
    let s = params().start_seq.0;
    Ack {
        pint,
        ..Ack::new(Seq(s.wrapping_add(cum)), Seq(s.wrapping_add(nxt)))
    }
}

fn code(width: PintWidth, code: u16) -> Option<PintSample> {
    Some(PintSample { width, code })
}

fn bytes(s: &HpccPint) -> f64 {
    s.window().to_bits() as f64 / 16.0
}

/// A started flow that has seen its first code (lastUpdateSeq = 1000).
fn started(cfg: &HpccPintConfig) -> HpccPint {
    let (mut s, d) = HpccPint::start(cfg, Instant::ZERO, &params()).unwrap();
    assert_eq!(d.window, Window::from_bytes(100_000));
    s.ack(cfg, Instant::ZERO, &ack(0, 1000, code(PintWidth::Two, 627)))
        .unwrap();
    s
}

#[test]
fn starts_at_the_bdp_paced_over_t_in_16_bytes() {
    let cfg = HpccPintConfig::hpcc_sim();
    let (s, d) = HpccPint::start(&cfg, Instant::ZERO, &params()).unwrap();
    assert_eq!(core::mem::size_of::<HpccPint>(), 16);
    assert_eq!(s.bdp_bytes(), 100_000);
    assert_eq!(d.window, Window::from_bytes(100_000));
    assert_eq!(d.pacing.bytes, d.window);
    assert_eq!(d.pacing.per, params().base_rtt);
    assert_eq!(s.base_rtt(), params().base_rtt);
    // T at the range's ends survives the split over two words.
    for t in [BaseRtt::MIN_NS, BaseRtt::MAX_NS, 2047, 2048] {
        let p = FlowParams {
            base_rtt: BaseRtt::from_nanos(t).unwrap(),
            ..params()
        };
        assert_eq!(HpccPint::new(&cfg, &p).unwrap().base_rtt().as_nanos(), t);
    }
}

/// The reference's first RTT: the first code only sets lastUpdateSeq.
#[test]
fn the_first_code_only_sets_last_update_seq() {
    let cfg = HpccPintConfig::hpcc_sim();
    let s = started(&cfg);
    assert_eq!(s.window(), Window::from_bytes(100_000));
    assert_eq!(s.last_update_seq(), Seq(params().start_seq.0.wrapping_add(1000)));
}

/// U = 1.05^142/512 = 1.99347 (one byte), η 0.95, W_ai 4·10^-4: W =
/// Wc·η/U + W_ai = 100 000 · (0.476555 + 0.0004) = 47 695.5 bytes; past
/// lastUpdateSeq it commits: Wc = W, lastUpdateSeq = snd_nxt.
#[test]
fn a_code_above_eta_divides_by_u_over_eta() {
    let cfg = HpccPintConfig::hpcc_sim();
    let mut s = started(&cfg);
    let d = s
        .ack(&cfg, Instant::ZERO, &ack(1500, 9000, code(PintWidth::One, 142)))
        .unwrap();
    assert!((bytes(&s) - 47_695.5).abs() < 0.2, "{}", bytes(&s));
    assert_eq!(d.window, s.window());
    assert_eq!(s.reference_fraction(), s.window_fraction());
    assert_eq!(s.last_update_seq(), Seq(params().start_seq.0.wrapping_add(9000)));
    assert_eq!(s.inc_stage(), 0);
}

/// Before lastUpdateSeq each ACK reacts from Wc (the reference's fast
/// reaction): two codes in a row give the second's W from Wc, not from
/// the first's W, and Wc stays.
#[test]
fn before_last_update_seq_each_ack_reacts_from_wc() {
    let cfg = HpccPintConfig::hpcc_sim();
    let mut s = started(&cfg);
    s.ack(&cfg, Instant::ZERO, &ack(500, 1000, code(PintWidth::One, 142)))
        .unwrap();
    let once = bytes(&s);
    assert!((once - 47_695.5).abs() < 0.2, "{once}");
    s.ack(&cfg, Instant::ZERO, &ack(600, 1100, code(PintWidth::One, 142)))
        .unwrap();
    assert_eq!(bytes(&s), once);
    assert_eq!(s.reference_fraction(), 1 << X_BITS);
}

/// With maxStage 5 a code below η adds W_ai to Wc for five RTTs, then
/// multiplies (U = 1.01^500/512 = 0.2896: Wc·0.95/0.2896 clamps at W_init).
#[test]
fn below_eta_the_stages_add_then_multiply() {
    let cfg = HpccPintConfig {
        max_stage: 5,
        ..HpccPintConfig::hpcc_sim()
    };
    let mut s = started(&cfg);
    // From half the BDP.
    s.restore(1 << 19, 1 << 19, 0, Seq(params().start_seq.0.wrapping_add(1000)))
        .unwrap();
    let a = HpccPintConfig::x_of(cfg.additive_increase);
    for k in 1..=5u32 {
        let cum = 1000 * k + 500;
        s.ack(&cfg, Instant::ZERO, &ack(cum, cum + 500, code(PintWidth::Two, 500)))
            .unwrap();
        assert_eq!(s.window_fraction(), (1 << 19) + k * a);
        assert_eq!(s.inc_stage() as u32, k);
    }
    s.ack(&cfg, Instant::ZERO, &ack(6500, 7500, code(PintWidth::Two, 500)))
        .unwrap();
    assert_eq!(s.window_fraction(), 1 << X_BITS);
    assert_eq!(s.inc_stage(), 0);
}

/// The largest codes hold W at the floor: 1 % of the BDP.
#[test]
fn the_window_stops_at_its_floor() {
    let cfg = HpccPintConfig::hpcc_sim();
    let mut s = started(&cfg);
    for k in 1..=10u32 {
        let cum = 1000 * k + 500;
        s.ack(&cfg, Instant::ZERO, &ack(cum, cum + 1000, code(PintWidth::Two, 1254)))
            .unwrap();
    }
    assert_eq!(s.window_fraction(), HpccPintConfig::x_of(cfg.min_window));
    assert!((bytes(&s) - 1000.0).abs() < 0.2, "{}", bytes(&s));
}

/// An ACK without a code only acknowledges; a code past its width's
/// largest is refused with nothing changed.
#[test]
fn no_code_changes_nothing_and_a_bad_code_is_refused() {
    let cfg = HpccPintConfig::hpcc_sim();
    let mut s = started(&cfg);
    let before = s;
    s.ack(&cfg, Instant::ZERO, &ack(5000, 6000, None)).unwrap();
    assert_eq!(s, before);
    assert_eq!(
        s.ack(&cfg, Instant::ZERO, &ack(5000, 6000, code(PintWidth::Two, 1255))),
        Err(Error::BadSample)
    );
    assert_eq!(
        s.ack(&cfg, Instant::ZERO, &ack(5000, 6000, code(PintWidth::One, 256))),
        Err(Error::BadSample)
    );
    assert_eq!(s, before);
}

#[test]
fn configurations_out_of_range_are_named() {
    let ok = HpccPintConfig::hpcc_sim();
    assert_eq!(ok.invalid_field(), None);
    let bad = [
        (
            HpccPintConfig {
                eta: Fraction::ZERO,
                ..ok
            },
            "eta",
        ),
        (HpccPintConfig { max_stage: 16, ..ok }, "max_stage"),
        (
            HpccPintConfig {
                additive_increase: Fraction::ZERO,
                ..ok
            },
            "additive_increase",
        ),
        (
            HpccPintConfig {
                min_window: Fraction::from_bits(15).unwrap(),
                ..ok
            },
            "min_window",
        ),
    ];
    for (c, field) in bad {
        assert_eq!(c.invalid_field(), Some(field));
        assert_eq!(HpccPint::new(&c, &params()), Err(Error::InvalidParams));
    }
}
