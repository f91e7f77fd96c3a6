//! The pacing rate of a window, R = W / T, without a 64-bit division:
//! T's divisions done once ([`PerRtt`]) and kept by whoever paces at T.

use crate::units::{BaseRtt, Rate, Window};

/// Pacing rate R = W / T (HPCC++ Figure 6, line 27; LDCP §3.2 rate = cw/RTT).
///
/// ```text
/// R [bit/s] = W [bytes] · 8 / T [ns] · 10^9 = W_raw / 16 · 8·10^9 / T = W_raw · 5·10^8 / T
/// ```
/// With no 64-bit division, exactly rounded down for every window below
/// 2^24 raw (1 MiB): with q, r the quotient and remainder of 5·10^8 / T,
/// R = W_raw·q + ⌊W_raw·r / T⌋. The second term uses r/T to 24 fractional
/// bits f, formed 12 at a time by 32-bit divides (each remainder < T ≤
/// 2^20, so remainder·2^12 < 2^32), f rounded down:
///
/// ```text
/// b = (W_raw · f) >> 24          ≤ ⌊W_raw·r/T⌋, short by less than W_raw·2^-24 + 1
/// b + 1 when (b + 1)·T ≤ W_raw·r  one step up, exact when W_raw < 2^24
/// ```
/// Larger windows may be short by up to 256 bit/s (a relative 10^-10).
/// Never above W·8/T: the flow never paces faster than its window allows,
/// and a window of one BDP paces at exactly the line rate.
/// W_raw·q < 2^32·2^23, W_raw·f < 2^56, (b + 1)·T ≤ 2^53. Five
/// `divu`/`remu` on rv32, all in [`PerRtt::new`]: q, r and f depend on T
/// alone, so a caller that keeps them for its T pays only the
/// multiplications of [`PerRtt::rate`] for each new window.
#[inline]
pub(crate) fn window_rate(w: Window, t: BaseRtt) -> Rate {
    PerRtt::new(t).rate(w)
}

/// The divisions of [`window_rate`] by T, done once: 5·10^8 = q·T + r,
/// and f = ⌊r·2^24 / T⌋.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PerRtt {
    t: core::num::NonZeroU32,
    q: u32,
    r: u32,
    f: u32,
}

impl PerRtt {
    #[inline]
    pub(crate) fn new(t: BaseRtt) -> Self {
        const NS_PER_S_OVER_2: u32 = 500_000_000;
        let t = t.as_divisor32();
        let (q, r) = (NS_PER_S_OVER_2 / t, NS_PER_S_OVER_2 % t);
        let (f_hi, r2) = ((r << 12) / t, (r << 12) % t);
        let f = (f_hi << 12) | ((r2 << 12) / t);
        PerRtt { t, q, r, f }
    }

    /// T in nanoseconds.
    #[inline]
    pub(crate) fn nanos(&self) -> u32 {
        self.t.get()
    }

    /// W_raw·q + b, with b from f and corrected by one step against r.
    #[inline]
    pub(crate) fn rate(&self, w: Window) -> Rate {
        let w = w.to_bits() as u64;
        let mut b = (w * self.f as u64) >> 24;
        if (b + 1) * self.t.get() as u64 <= w * self.r as u64 {
            b += 1;
        }
        Rate::from_bps(w * self.q as u64 + b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    /// The divide-free rate is W_raw·5·10^8/T rounded down, exactly below
    /// 2^24 raw, and short by at most W_raw·2^-24 bit/s above.
    #[test]
    fn window_rate_matches_the_exact_quotient() {
        for t in [
            100u32,
            101,
            999,
            8_000,
            12_000,
            12_345,
            65_535,
            65_537,
            300_000,
            1 << 20,
        ] {
            // One T's divisions kept for every window, as a pacer keeps them.
            let per = PerRtt::new(BaseRtt::from_nanos(t).unwrap());
            for w in [1u32, 16, 1_600, 150_000 * 16, (1 << 24) - 1, 999_999_937, u32::MAX] {
                let exact = w as u64 * 500_000_000 / t as u64;
                let got = per.rate(Window::from_bits(w)).as_bps();
                assert!(got <= exact, "w {w} t {t}: {got} > {exact}");
                assert!(exact - got <= (w as u64 >> 24), "w {w} t {t}: {got} vs {exact}");
            }
        }
    }

    proptest! {
        #[test]
        fn window_rate_is_within_its_bound(w: u32, t in 100u32..=1 << 20) {
            let exact = w as u64 * 500_000_000 / t as u64;
            let got = window_rate(Window::from_bits(w), BaseRtt::from_nanos(t).unwrap()).as_bps();
            prop_assert!(got <= exact && exact - got <= (w as u64 >> 24));
        }
    }

    #[test]
    fn rate_of_bdp_window_is_line_rate() {
        let t = BaseRtt::from_nanos(12_000).unwrap();
        // 150 kB over 12 us = 100 Gb/s.
        assert_eq!(window_rate(Window::from_bytes(150_000), t).as_bps(), 100_000_000_000);
    }
}
