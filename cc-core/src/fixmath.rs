//! Guarded fixed-point helpers shared by the algorithms.
//!
//! Each helper states its exact input envelope and rounding; none can panic
//! or divide by zero for any input.

use crate::units::{BaseRtt, Rate, Window};

/// `floor(num · 2^24 / den)`, saturated at 2^40; `None` when `den == 0`.
///
/// Exact when `num < 2^40`. Above that both operands are shifted right by
/// the same k ≤ 24 until `num < 2^40`; a quotient that does not saturate has
/// `den > num / 2^16 = 2^(24+k)`, so `den >> k ≥ 2^24` and the relative
/// error of the shift is below 2^-24. One `u64` division.
pub(crate) fn ratio_q24(num: u64, den: u64) -> Option<u64> {
    if den == 0 {
        return None;
    }
    const LIMIT_BITS: u32 = 40;
    let num_bits = 64 - num.leading_zeros();
    let (n, d) = if num_bits > LIMIT_BITS {
        let k = num_bits - LIMIT_BITS;
        (num >> k, den >> k)
    } else {
        (num, den)
    };
    if d == 0 {
        // den < 2^k: the quotient is above num/2^k·2^24 ≥ 2^(24+39): saturate.
        return Some(1 << LIMIT_BITS);
    }
    Some(((n << 24) / d).min(1 << LIMIT_BITS))
}

/// Pacing rate R = W / T (HPCC++ Figure 6, line 27; LDCP §3.2 rate = cw/RTT).
///
/// ```text
/// R [bit/s] = W [bytes] · 8 / T [ns] · 10^9 = W_raw / 16 · 8·10^9 / T = W_raw · 5·10^8 / T
/// ```
/// `W_raw < 2^32` and `5·10^8 < 2^29`, so the product stays below 2^61.
/// Rounded down: the flow never paces faster than its window allows.
pub(crate) fn window_rate(w: Window, t: BaseRtt) -> Rate {
    Rate::from_bps(w.to_bits() as u64 * 500_000_000 / t.as_divisor())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_exact_small() {
        assert_eq!(ratio_q24(1, 2), Some(1 << 23));
        assert_eq!(ratio_q24(3, 1), Some(3 << 24));
        assert_eq!(ratio_q24(5, 0), None);
        assert_eq!(ratio_q24(0, 7), Some(0));
    }

    #[test]
    fn ratio_large_operands_stay_accurate() {
        // 2^60 / 2^44 = 2^16 exactly.
        assert_eq!(ratio_q24(1 << 60, 1 << 44), Some(1 << 40));
        let num = 0x0123_4567_89AB_CDEFu64;
        let den = 0x0000_1234_5678_9ABCu64;
        let exact = num as f64 / den as f64 * 16_777_216.0;
        let got = ratio_q24(num, den).unwrap() as f64;
        assert!((got - exact).abs() / exact < 1e-6, "{got} vs {exact}");
    }

    #[test]
    fn ratio_saturates() {
        assert_eq!(ratio_q24(u64::MAX, 1), Some(1 << 40));
        assert_eq!(ratio_q24(1 << 50, 1), Some(1 << 40));
    }

    #[test]
    fn rate_of_bdp_window_is_line_rate() {
        let t = BaseRtt::from_nanos(12_000).unwrap();
        // 150 kB over 12 us = 100 Gb/s.
        assert_eq!(window_rate(Window::from_bytes(150_000), t).as_bps(), 100_000_000_000);
    }
}
