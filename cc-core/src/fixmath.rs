//! Guarded fixed-point helpers shared by the algorithms.
//!
//! Each helper states its exact input envelope and rounding; none can panic
//! or divide by zero for any input.

use core::num::{NonZeroU32, NonZeroU64};

/// `floor(n / d)`, exactly as `n / d`, but cheap on a 32-bit core.
///
/// On rv32 a `u64` division is a call to compiler-builtins' `__udivdi3`
/// (about 75 instructions measured on the soft core, several per event).
/// The engine's divisors are nearly always below 2^32, and then:
/// - `n < 2^32`: one `divu`;
/// - `d < 2^16` (a base RTT in ns, an MTU): four `divu`/`remu`, 16 bits of
///   quotient at a time;
/// - otherwise: a high digit and a 64/32 long division ([`div_64_by_32`]),
///   inline (as a call it spilled a dozen registers around it: θ-PowerTCP's
///   ACK took 10 % more instructions on rv32imac).
///
/// Only a divisor of 2^32 or more goes to the generic routine. On 64-bit
/// cores the hardware divides; this is `n / d`.
#[inline]
pub(crate) fn div_u64(n: u64, d: NonZeroU64) -> u64 {
    #[cfg(target_pointer_width = "64")]
    {
        n / d
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        div_u64_narrow(n, d)
    }
}

/// [`div_u64`] for cores whose registers are 32 bits wide. Compiled on every
/// target so that the host tests check it against `n / d`.
#[cfg_attr(target_pointer_width = "64", allow(dead_code))]
#[inline(always)]
pub(crate) fn div_u64_narrow(n: u64, d: NonZeroU64) -> u64 {
    // d < 2^32 (and ≠ 0) or the generic division. NonZeroU32 keeps every
    // division below free of a divide-by-zero panic path.
    let Some(d32) = u32::try_from(d.get()).ok().and_then(NonZeroU32::new) else {
        return n / d;
    };
    let (hi, lo) = ((n >> 32) as u32, n as u32);
    if hi == 0 {
        return (lo / d32) as u64;
    }
    // n = hi·2^32 + lo: the high quotient digit, then (r·2^32 + lo) / d with
    // r < d, whose quotient fits 32 bits.
    let (q_hi, r) = (hi / d32, hi % d32);
    let q_lo = if d32.get() >> 16 == 0 {
        // Two 16-bit long-division steps, each dividend (r·2^16 + digit)
        // < 2^32 because r < d < 2^16.
        let a = (r << 16) | (lo >> 16);
        let (qa, ra) = (a / d32, a % d32);
        let b = (ra << 16) | (lo & 0xFFFF);
        (qa << 16) | (b / d32)
    } else {
        // Never None: d ≥ 2^16 and r < d. The unreachable fallback is a
        // constant, not the generic division: a call to the runtime's
        // 64-bit divide would make every caller save its registers.
        div_64_by_32(r, lo, d32.get()).unwrap_or(u32::MAX)
    };
    ((q_hi as u64) << 32) | q_lo as u64
}

/// `floor(n·2^24 / d)` for `n < d < 2^24`: a proper fraction in 2^-24
/// (below 2^24), exact. On a 32-bit core three 32-bit divides of eight
/// quotient bits each, inline and without a call (each dividend r·2^8 <
/// 2^32 because the remainder r < d < 2^24); on a 64-bit core one. Outside
/// its envelope (`n ≥ d` or `d ≥ 2^24`) the answer is meaningless but
/// never a panic: callers keep to it.
#[inline(always)]
pub(crate) fn fraction_q24(n: u32, d: NonZeroU32) -> u32 {
    let n = n.min(d.get() - 1) & 0x00FF_FFFF;
    #[cfg(target_pointer_width = "64")]
    {
        (((n as u64) << 24) / NonZeroU64::from(d)) as u32
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        let d = NonZeroU32::new(d.get() & 0x00FF_FFFF).unwrap_or(NonZeroU32::MIN);
        let a = n << 8;
        let (q1, r1) = (a / d, a % d);
        let b = r1 << 8;
        let (q2, r2) = (b / d, b % d);
        let c = r2 << 8;
        (q1 << 16) | (q2 << 8) | (c / d)
    }
}

/// `x.leading_zeros()` for `x ≠ 0`: one `clz` where the core has one
/// (Zbb on RISC-V, every host), else [`leading_zeros_search`]. The same
/// value either way.
#[inline(always)]
pub(crate) fn leading_zeros_nonzero(x: u32) -> u32 {
    #[cfg(any(target_feature = "zbb", not(any(target_arch = "riscv32", target_arch = "riscv64"))))]
    {
        x.leading_zeros()
    }
    #[cfg(not(any(target_feature = "zbb", not(any(target_arch = "riscv32", target_arch = "riscv64")))))]
    {
        leading_zeros_search(x)
    }
}

/// `x.leading_zeros() & !1` for `x ≠ 0`: the shift by an even count that
/// puts the top bit at 30 or 31 (a square root's normalisation). One `clz`
/// where the core has one, else the search's first four steps.
#[inline(always)]
pub(crate) fn leading_zeros_even(x: u32) -> u32 {
    #[cfg(any(target_feature = "zbb", not(any(target_arch = "riscv32", target_arch = "riscv64"))))]
    {
        x.leading_zeros() & !1
    }
    #[cfg(not(any(target_feature = "zbb", not(any(target_arch = "riscv32", target_arch = "riscv64")))))]
    {
        leading_zeros_even_search(x)
    }
}

/// [`leading_zeros_even`] by [`leading_zeros_search`]'s first four steps.
#[cfg_attr(
    any(target_feature = "zbb", not(any(target_arch = "riscv32", target_arch = "riscv64"))),
    allow(dead_code)
)]
#[inline(always)]
fn leading_zeros_even_search(x: u32) -> u32 {
    let (mut x, mut n) = (x, 0);
    for s in [16, 8, 4, 2] {
        if x >> (32 - s) == 0 {
            n += s;
            x <<= s;
        }
    }
    n
}

/// `x.leading_zeros()` for `x ≠ 0` by binary search: five compare-and-shift
/// steps. rv32imac and rv64imac have no count-leading-zeros instruction
/// (that is Zbb), and the compiler's branch-free expansion takes about
/// twice as many.
#[cfg_attr(
    any(target_feature = "zbb", not(any(target_arch = "riscv32", target_arch = "riscv64"))),
    allow(dead_code)
)]
#[inline(always)]
fn leading_zeros_search(mut x: u32) -> u32 {
    let mut n = 0;
    if x >> 16 == 0 {
        n += 16;
        x <<= 16;
    }
    if x >> 24 == 0 {
        n += 8;
        x <<= 8;
    }
    if x >> 28 == 0 {
        n += 4;
        x <<= 4;
    }
    if x >> 30 == 0 {
        n += 2;
        x <<= 2;
    }
    if x >> 31 == 0 {
        n += 1;
    }
    n
}

/// `floor((u1·2^32 + u0) / v)` for `u1 < v` (so the quotient fits 32
/// bits) and `v ≥ 2^16`: Knuth's algorithm D with two 16-bit quotient
/// digits, as in Hacker's Delight §9-4 (`divlu`). `v` is normalized (shifted
/// until its top bit is set) so each digit estimate is at most 2 too large;
/// the correction loops run at most twice. The comments bound every product
/// below 2^32.
///
/// `None` only if `v < 2^16` or `u1 ≥ v`, which the caller excludes.
#[cfg_attr(target_pointer_width = "64", allow(dead_code))]
#[inline(always)]
fn div_64_by_32(u1: u32, u0: u32, v: u32) -> Option<u32> {
    const B: u32 = 1 << 16;
    if u1 >= v || v < B {
        return None;
    }
    let s = leading_zeros_nonzero(v); // < 16: v ≥ 2^16
    let v = v << s;
    // vn1 ≥ 2^15 after normalization; NonZeroU32 spares a zero check.
    let vn1 = NonZeroU32::new(v >> 16)?;
    let vn0 = v & 0xFFFF;
    // u1 < v, so the shifted-out bits of u1 are zero.
    let un32 = if s == 0 { u1 } else { (u1 << s) | (u0 >> (32 - s)) };
    let un10 = u0 << s;
    let (un1, un0) = (un10 >> 16, un10 & 0xFFFF);

    // First digit. q1 ≤ 2^17; q1·vn0 is only formed once q1 < 2^16
    // (< 2^32), and B·rhat + un1 < 2^32 because rhat < B there.
    let mut q1 = un32 / vn1;
    let mut rhat = un32 - q1 * vn1.get();
    while q1 >= B || q1 * vn0 > B * rhat + un1 {
        q1 -= 1;
        rhat += vn1.get();
        if rhat >= B {
            break;
        }
    }
    // The partial remainder, < v: computed modulo 2^32, where it is exact.
    let un21 = un32.wrapping_mul(B).wrapping_add(un1).wrapping_sub(q1.wrapping_mul(v));

    // Second digit, the same way.
    let mut q0 = un21 / vn1;
    let mut rhat = un21 - q0 * vn1.get();
    while q0 >= B || q0 * vn0 > B * rhat + un0 {
        q0 -= 1;
        rhat += vn1.get();
        if rhat >= B {
            break;
        }
    }
    Some((q1 << 16) | q0)
}

/// `floor(num · 2^24 / den)`, saturated at 2^40; `None` when `den == 0`.
///
/// Both operands are shifted right together until they fit 32 bits, and
/// again until den < 2^24; then [`quotient_q24`] divides exactly: one
/// hardware divide on a 64-bit core, eight 32-bit `divu`/`remu` on rv32
/// (no `__udivdi3` there). The results are the same to the bit.
///
/// Exact when num < 2^32 and den < 2^24. A shift of both operands by k
/// drops less than 2^k from each; den is at least 2^23 after a shift for
/// its own size, and at least 2^15 after one for num's (a quotient near
/// the 2^16 saturation), so the result stays within a relative 2^-14 and
/// two units (2^-23) of the exact quotient, and within 2^-22 and two units
/// wherever den sets the shift (property-tested against 128-bit arithmetic).
#[inline(always)]
pub(crate) fn ratio_q24(num: u64, den: u64) -> Option<u64> {
    const LIMIT: u64 = 1 << 40;
    if den == 0 {
        return None;
    }
    let high = ((num | den) >> 32) as u32;
    let (n, d) = if high != 0 {
        let k = 32 - leading_zeros_nonzero(high);
        ((num >> k) as u32, (den >> k) as u32)
    } else {
        (num as u32, den as u32)
    };
    let top = d >> 24;
    let (n, d) = if top != 0 {
        // d ≥ 2^24: shift by its bit length − 24 (1 ..= 8).
        let k = 8 - leading_zeros_nonzero(d);
        (n >> k, d >> k)
    } else {
        (n, d)
    };
    // d == 0: den < 2^k, so num / den > 2^31: saturate.
    let Some(d) = NonZeroU32::new(d) else {
        return Some(LIMIT);
    };
    Some(quotient_q24(n, d).min(LIMIT))
}

/// `n · 2^24 / d` to a relative 2^-15, saturated at 2^40, with one 32-bit
/// divide: `n` is shifted until its top bit is set, `d` rounded to its top
/// 16 bits, and the quotient of the two (between 2^15 and 2^17) rounded to
/// nearest and shifted into place.
///
/// ```text
/// n = n'·2^-ln          n' in [2^31, 2^32)
/// d ≈ d'·2^(bd − 16)    d' in [2^15, 2^16], bd = bit length of d, rounded to nearest
/// n·2^24/d ≈ round(n'/d') · 2^(40 − ln − bd)
/// ```
/// Each rounding is within half a unit of a value of at least 2^15, so the
/// result is within a relative 2^-15 of the exact quotient (property-tested
/// against 128-bit arithmetic), unbiased. `d = 0` saturates (the limit of
/// n/d); `n = 0` gives 0. HPCC++'s ComputeWind takes eta/U this way: its
/// one division per event.
#[inline(always)]
pub(crate) fn ratio_q24_once(n: u32, d: u64) -> u64 {
    const LIMIT: u64 = 1 << 40;
    if n == 0 {
        return 0;
    }
    let (d_hi, d_lo) = ((d >> 32) as u32, d as u32);
    let bd = if d_hi != 0 {
        64 - leading_zeros_nonzero(d_hi)
    } else if d_lo != 0 {
        32 - leading_zeros_nonzero(d_lo)
    } else {
        return LIMIT;
    };
    let d16 = if bd > 16 {
        // Rounded to nearest: at most 2^16 (d just below a power of two).
        let k = bd - 16;
        ((d >> (k - 1)) + 1) >> 1
    } else {
        d << (16 - bd)
    } as u32;
    let ln = leading_zeros_nonzero(n);
    let n32 = n << ln;
    // d16 ≥ 2^15 (rounding never lowers the top bit): no division by zero.
    let Some(div) = NonZeroU32::new(d16) else {
        return LIMIT;
    };
    // n32 + d16/2 < 2^32 + 2^15: the half is added after the quotient's
    // own rounding test instead, so nothing overflows.
    let (q, r) = (n32 / div, n32 - (n32 / div) * d16);
    let q = q + (r >= d16 - d16 / 2) as u32;
    let e = 40 - ln as i32 - bd as i32;
    let v = q as u64;
    if e >= 0 {
        // e ≤ 39 (ln ≥ 0, bd ≥ 1) and v < 2^18: below 2^57.
        (v << e).min(LIMIT)
    } else if e > -48 {
        let k = (-e) as u32;
        ((v >> (k - 1)) + 1) >> 1
    } else {
        0
    }
}

/// `⌊x · m / 2^s⌋` for x < 2^41, m < 2^32 and 10 ≤ s ≤ 32, exact, below
/// 2^64. On a 32-bit core in two 32 × 32 products (x = hi·2^32 + lo, hi <
/// 2^9): `hi·m·2^(32 − s) + ⌊lo·m / 2^s⌋` (the first term an integer, so
/// the sum is the same floor); on a 64-bit core the one 64 × 64 → 128
/// product (`mul` and `mulhu`) shifted.
#[inline(always)]
pub(crate) const fn mul_shr41(x: u64, m: u32, s: u32) -> u64 {
    #[cfg(target_pointer_width = "64")]
    {
        ((x as u128 * m as u128) >> s) as u64
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        let hi = (x >> 32) * m as u64;
        let lo = (x as u32 as u64) * m as u64;
        (hi << (32 - s)) + (lo >> s)
    }
}

/// `⌊n · 2^24 / d⌋` for d < 2^24, or any value of at least 2^40 when the
/// quotient is that large (the caller saturates there). On 64-bit cores
/// the hardware divides n·2^24 < 2^56 once; elsewhere
/// [`quotient_q24_narrow`] takes 32-bit steps. Both are exact below 2^40.
#[inline(always)]
fn quotient_q24(n: u32, d: NonZeroU32) -> u64 {
    #[cfg(target_pointer_width = "64")]
    {
        ((n as u64) << 24) / d.get() as u64
    }
    #[cfg(not(target_pointer_width = "64"))]
    {
        quotient_q24_narrow(n, d)
    }
}

/// [`quotient_q24`] with 32-bit divides only: the integer part, then three
/// 8-bit rounds of long division on the remainders (remainder < d < 2^24,
/// so remainder·2^8 < 2^32), eight `divu`/`remu`; an integer part of 2^16
/// or more gives 2^40 at once. Compiled on every target so that the host
/// tests check it against the 64-bit quotient.
#[cfg_attr(target_pointer_width = "64", allow(dead_code))]
#[inline(always)]
fn quotient_q24_narrow(n: u32, d: NonZeroU32) -> u64 {
    let (q, r) = (n / d, n % d);
    if q >> 16 != 0 {
        return 1 << 40;
    }
    let a = r << 8;
    let (f1, r) = (a / d, a % d);
    let a = r << 8;
    let (f2, r) = (a / d, a % d);
    let f3 = (r << 8) / d;
    (q as u64) << 24 | (f1 << 16 | f2 << 8 | f3) as u64
}

/// `(x · f + 2^31) >> 32` for x < 2^41, f < 2^32: x times the fraction
/// f/2^32, rounded to nearest, with two 32 × 32 products (x = hi·2^32 + lo,
/// hi < 2^9, so hi·f < 2^41 and the sum fits 64 bits). Never above x:
/// x·f + 2^31 < (x + 1)·2^32.
#[inline(always)]
pub(crate) fn mul_frac_q32(x: u64, f: u32) -> u64 {
    let f = f as u64;
    let lo = (x as u32 as u64) * f;
    let hi = (x >> 32) * f;
    hi + ((lo + (1 << 31)) >> 32)
}

#[inline(always)]
pub(crate) const fn mul_shr(a: u32, b: u32, s: u32) -> u64 {
    (a as u64 * b as u64) >> (s & 63)
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    fn narrow(n: u64, d: u64) -> u64 {
        div_u64_narrow(n, NonZeroU64::new(d).unwrap())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// The 2^-24 fraction is the exact quotient over its envelope.
        #[test]
        fn a_proper_fraction_is_exact(d in 1u32..1 << 24, n_frac in 0.0f64..1.0) {
            let n = ((d as f64 * n_frac) as u32).min(d - 1);
            prop_assert_eq!(fraction_q24(n, NonZeroU32::new(d).unwrap()) as u64, ((n as u64) << 24) / d as u64);
        }
    }

    #[test]
    fn a_proper_fraction_at_its_corners() {
        for d in [1u32, 2, 3, 255, 256, 257, 65_535, 65_536, (1 << 24) - 1] {
            for n in [0, 1, d / 2, d.saturating_sub(2), d - 1] {
                let n = n.min(d - 1);
                assert_eq!(
                    fraction_q24(n, NonZeroU32::new(d).unwrap()) as u64,
                    ((n as u64) << 24) / d as u64,
                    "{n}/{d}"
                );
            }
        }
    }

    #[test]
    fn leading_zeros_by_search() {
        for s in 0..32 {
            for x in [1u32 << s, (1u32 << s) | 1, u32::MAX >> (31 - s)] {
                assert_eq!(leading_zeros_search(x), x.leading_zeros(), "{x:#x}");
                assert_eq!(leading_zeros_nonzero(x), x.leading_zeros(), "{x:#x}");
                assert_eq!(leading_zeros_even_search(x), x.leading_zeros() & !1, "{x:#x}");
                assert_eq!(leading_zeros_even(x), x.leading_zeros() & !1, "{x:#x}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// The one-divide quotient is within a relative 2^-15 of
        /// n·2^24/d (or saturated at 2^40 where that is larger), over the
        /// whole range ComputeWind gives it: eta up to 2^32, U up to 2^41.
        #[test]
        fn the_one_divide_ratio_is_within_two_to_the_minus_15(n in 1u32.., d_bits in 0u32..42, d_frac: u64) {
            let d = if d_bits == 0 { 0 } else { (1u64 << (d_bits - 1)) | (d_frac & ((1u64 << (d_bits - 1)) - 1)) };
            let got = ratio_q24_once(n, d);
            if d == 0 {
                prop_assert_eq!(got, 1 << 40);
                return Ok(());
            }
            let exact = ((n as u128) << 24) as f64 / d as f64;
            if exact >= (1u64 << 40) as f64 * (1.0 + 2f64.powi(-15)) {
                prop_assert_eq!(got, 1 << 40);
            } else {
                let tol = exact * 2f64.powi(-15) + 1.0;
                prop_assert!((got as f64 - exact.min((1u64 << 40) as f64)).abs() <= tol, "{} vs {}", got, exact);
            }
        }

        /// The split product is the 128-bit one.
        #[test]
        fn the_split_product_is_exact(x in 0u64..1 << 41, m: u32, s in 10u32..=32) {
            let exact = ((x as u128 * m as u128) >> s) as u64;
            prop_assert_eq!(mul_shr41(x, m, s), exact);
        }
    }

    #[test]
    fn narrow_division_edges() {
        for &(n, d) in &[
            (0, 1),
            (u64::MAX, 1),
            (u64::MAX, u32::MAX as u64),
            (u64::MAX, 1 << 31),
            (u64::MAX, (1 << 31) - 1),
            (u64::MAX, 3),
            ((1 << 32) - 1, 1),
            (1 << 32, 1 << 32),
            (1 << 32, (1 << 32) + 1),
            (u64::MAX, u64::MAX),
            (u64::MAX - 1, u64::MAX),
            (0x8000_0000_0000_0000, 0x8000_0001),
            (0x7FFF_FFFF_FFFF_FFFF, 0xFFFF),
            (0xFFFF_FFFF_0000_0000, 0xFFFF_FFFF),
            // Both correction steps of a digit: divisor top half 0x8000.
            (0x7FFF_8000_0000_0000, 0x8000_FFFF),
            (0x0000_8000_FFFF_0000, 0x8000_0001),
            // The long division's smallest divisor, 2^16, and divisors
            // about 2^24 with the largest high digit.
            (u64::MAX, 1 << 16),
            (u64::MAX, (1 << 24) - 1),
            (((1 << 24) - 2) << 32 | 0xFFFF_FFFF, (1 << 24) - 1),
            (u64::MAX, 1 << 24),
        ] {
            assert_eq!(narrow(n, d), n / d, "{n} / {d}");
        }
        // Every normalization shift.
        for s in 0..32 {
            let d = (1u64 << s) | 1;
            for n in [u64::MAX, u64::MAX / 3, 1 << 40, (1 << 33) + 12_345] {
                assert_eq!(narrow(n, d), n / d, "{n} / {d}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn narrow_division_is_exact(n: u64, d in 1u64..) {
            prop_assert_eq!(narrow(n, d), n / d);
        }

        #[test]
        fn narrow_division_is_exact_for_32_bit_divisors(n: u64, d in 1u64..=u32::MAX as u64) {
            prop_assert_eq!(narrow(n, d), n / d);
        }

        #[test]
        fn narrow_division_is_exact_for_16_to_25_bit_divisors(n: u64, d in (1u64 << 15)..=1 << 25) {
            prop_assert_eq!(narrow(n, d), n / d);
        }

        #[test]
        fn narrow_division_is_exact_for_small_divisors(n: u64, d in 1u64..=1 << 17) {
            prop_assert_eq!(narrow(n, d), n / d);
        }
    }

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

    proptest! {
        /// The error bound of `ratio_q24`, from its shifts: exact while the
        /// operands fit (num < 2^32, den < 2^24); when den has at least 24
        /// bits and num at most 8 more, the final divisor has at least 23
        /// bits (relative error 2^-23, num's truncation under 2 units, the
        /// floor 1); otherwise a non-saturating quotient leaves a divisor
        /// of at least 15 bits (2^-15, under 2^9 units). The saturation at
        /// 2^40 is approached within the same bounds.
        #[test]
        fn ratio_matches_the_exact_quotient(num: u64, den in 1u64..) {
            check_ratio(num, den)?;
        }

        /// The same bound where it is tight: operands of every size whose
        /// quotient is anywhere up to past the saturation.
        #[test]
        fn ratio_bound_holds_across_sizes(den_bits in 1u32..64, den_low: u64, q in 0u64..1 << 41, jitter: u16) {
            let den = (den_low >> (64 - den_bits)) | 1 << (den_bits - 1);
            let num = ((den as u128 * q as u128) >> 24).saturating_add(jitter as u128).min(u64::MAX as u128) as u64;
            check_ratio(num, den)?;
        }
    }

    /// `ratio_q24(num, den)` within the bound its shifts allow.
    fn check_ratio(num: u64, den: u64) -> Result<(), TestCaseError> {
        const LIMIT: u128 = 1 << 40;
        let exact = (((num as u128) << 24) / den as u128).min(LIMIT);
        let got = ratio_q24(num, den).unwrap() as u128;
        prop_assert!(got <= LIMIT);
        let bits = |x: u64| 64 - x.leading_zeros();
        let tol = if num >> 32 == 0 && den >> 24 == 0 {
            0
        } else if bits(den) >= 24 && bits(num) <= bits(den) + 8 {
            3 + exact / (1 << 22)
        } else {
            (1 << 10) + exact / (1 << 14)
        };
        prop_assert!(got.abs_diff(exact) <= tol, "{} vs {} (tolerance {})", got, exact, tol);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// The 32-bit long division that rv32 runs gives the 64-bit
        /// quotient to the bit wherever it is below 2^40, and at least
        /// 2^40 wherever that is (the caller saturates both there).
        #[test]
        fn narrow_q24_quotient_is_the_wide_one(n: u32, d in 1u32..1 << 24) {
            let d = NonZeroU32::new(d).unwrap();
            let wide = ((n as u64) << 24) / d.get() as u64;
            let narrow = quotient_q24_narrow(n, d);
            prop_assert_eq!(narrow.min(1 << 40), wide.min(1 << 40));
            prop_assert_eq!(quotient_q24(n, d).min(1 << 40), wide.min(1 << 40));
        }

    }

    /// The narrow quotient at its edges: the largest operands, a quotient
    /// just under and just at the 2^40 saturation.
    #[test]
    fn narrow_quotients_at_the_edges() {
        let nz = |x: u32| NonZeroU32::new(x).unwrap();
        for (n, d) in [
            (u32::MAX, 1),
            (u32::MAX, (1 << 24) - 1),
            (0xFFFF, 1),
            (0x1_0000, 1),
            (0x1_0000, 2),
            (1, (1 << 24) - 1),
        ] {
            let wide = ((n as u64) << 24) / d as u64;
            assert_eq!(
                quotient_q24_narrow(n, nz(d)).min(1 << 40),
                wide.min(1 << 40),
                "{n} / {d}"
            );
        }
    }

    #[test]
    fn ratio_saturates() {
        assert_eq!(ratio_q24(u64::MAX, 1), Some(1 << 40));
        assert_eq!(ratio_q24(1 << 50, 1), Some(1 << 40));
    }
}
