//! HPCC-PINT's utilization code: one or two bytes a data packet carries
//! instead of HPCC's per-hop stack (Ben Basat et al., "PINT: Probabilistic
//! In-band Network Telemetry", SIGCOMM 2020, §4.2, as the HPCC reference
//! simulator codes it in its `Pint` class).
//!
//! Each switch port keeps its utilization U (an EWMA over the base RTT of
//! its queue and transmit rate) and, as a packet leaves, writes the code
//!
//! ```text
//! p = log_b(⌈U·512⌉), rounded up or down at random so that its mean is exact
//! ```
//!
//! into the packet if it is larger than the code already there, so the
//! receiver sees the path's most utilized port and echoes the code on its
//! ACK. The sender reads U = b^p / 512 (512 flows at most share a port:
//! the smallest U a code says is 1/512).
//!
//! ```text
//!  one byte:  b = 1.05, codes 0 ..= 255  (U from 1/512 to 490)
//!  +--------+
//!  |   p    |
//!  +--------+
//!
//!  two bytes: b = 1.01, codes 0 ..= 1254 (U from 1/512 to 512.6), big-endian
//!  +--------+--------+
//!  |   p (16 bits)   |
//!  +--------+--------+
//! ```
//!
//! The widths are the reference's: it takes as many bytes as
//! ⌈log2(log_b(512²))⌉ bits need (8 for 1.05, 11 for 1.01). A two-byte
//! code above 1254 names a U above 512², which no port reaches: refused
//! (`OutOfRange`). The code sits wherever the deployment puts it (the
//! reference keeps it in its INT header's place); this module reads and
//! writes the field itself.
//!
//! Decoding is a table lookup ([`PintWidth::decode`]): b^p/512 in 2^-20,
//! made at compile time from b = 105/100 or 101/100 in 100-bit integer
//! steps, so an ACK takes no `pow` and no division.

use super::{Result, WireError};
use crate::units::Utilization;

/// The code's width, and with it the logarithm's base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum PintWidth {
    /// One byte, b = 1.05.
    One,
    /// Two bytes, b = 1.01.
    Two,
}

/// Fractional bits of the decode tables: U in 2^-20.
pub const TABLE_BITS: u32 = 20;

/// Fractional bits of the reciprocal tables: 1/U in 2^-22 (1/U ≤ 512, so
/// 512·2^22 = 2^31 fits a `u32`).
pub const INVERSE_BITS: u32 = 22;

/// The geometric series start·(num/den)^p for p = 0 ..< N, `start` in
/// 2^-100, each term rounded to nearest in 2^-`bits`: exact 100-bit fixed
/// point stepped by ·num/den (each step rounds down by under 2^-100, far
/// below a table's last bit). The terms here stay below 2^10 (2^110 in
/// 2^-100), and ·105 below 2^117.
const fn series<const N: usize>(start: u128, num: u128, den: u128, bits: u32) -> [u32; N] {
    const FRAC: u32 = 100;
    let mut t = [0u32; N];
    let mut v = start;
    let mut p = 0;
    while p < N {
        let r = (v + (1 << (FRAC - bits - 1))) >> (FRAC - bits);
        t[p] = if r > u32::MAX as u128 { u32::MAX } else { r as u32 };
        v = v * num / den;
        p += 1;
    }
    t
}

/// 1/512 and 512 in the series' 2^-100.
const ONE_512TH: u128 = 1 << (100 - 9);
const FIVE_TWELVE: u128 = 1 << (100 + 9);

/// 1.05^p/512 in 2^-20, p = 0 ..= 255.
static ONE_BYTE: [u32; 256] = series::<256>(ONE_512TH, 105, 100, TABLE_BITS);
/// 1.01^p/512 in 2^-20, p = 0 ..= 1254.
static TWO_BYTES: [u32; 1255] = series::<1255>(ONE_512TH, 101, 100, TABLE_BITS);

// 512/b^p in 2^-INVERSE_BITS (the same series by ·den/num). The smallest
// entry (1/U at the largest code, about 1/513) is still above 8000 units,
// so an entry is within 2^-13 of 1/U relatively.

/// 512/1.05^p in 2^-22, p = 0 ..= 255.
static ONE_BYTE_INVERSE: [u32; 256] = series::<256>(FIVE_TWELVE, 100, 105, INVERSE_BITS);
/// 512/1.01^p in 2^-22, p = 0 ..= 1254.
static TWO_BYTES_INVERSE: [u32; 1255] = series::<1255>(FIVE_TWELVE, 100, 101, INVERSE_BITS);

impl PintWidth {
    /// Bytes of the field.
    pub const fn bytes(self) -> usize {
        match self {
            PintWidth::One => 1,
            PintWidth::Two => 2,
        }
    }

    /// The largest code that names a utilization.
    pub const fn max_code(self) -> u16 {
        match self {
            PintWidth::One => 255,
            PintWidth::Two => 1254,
        }
    }

    fn table(self) -> &'static [u32] {
        match self {
            PintWidth::One => &ONE_BYTE,
            PintWidth::Two => &TWO_BYTES,
        }
    }

    /// U = b^p/512 for code `p`, `None` above [`PintWidth::max_code`]. A
    /// table's entry moved from 2^-20 to the engine's 2^-24: exact.
    pub fn decode(self, p: u16) -> Option<Utilization> {
        let v = *self.table().get(p as usize)?;
        Some(Utilization::from_bits(
            (v as u64) << (Utilization::FRAC_BITS - TABLE_BITS),
        ))
    }

    /// 1/U = 512/b^p for code `p` in 2^-[`INVERSE_BITS`], `None` above
    /// [`PintWidth::max_code`]: what a sender multiplies by where the
    /// reference divides by U.
    pub fn inverse(self, p: u16) -> Option<u32> {
        let t: &'static [u32] = match self {
            PintWidth::One => &ONE_BYTE_INVERSE,
            PintWidth::Two => &TWO_BYTES_INVERSE,
        };
        t.get(p as usize).copied()
    }

    /// The code a port of utilization `u` writes, given a uniform random
    /// `r` in 0 ..= 65535: with n = ⌈u·512⌉ (at least 1) between b^p and
    /// b^(p+1), p + 1 with probability (n − b^p)/(b^(p+1) − b^p), else p;
    /// [`PintWidth::max_code`] at and beyond the table's end. The
    /// reference's `Pint::encode_u`, in integers (its powers from the same
    /// table, so b^p here is the decoded value's, to 2^-20).
    pub fn encode(self, u: Utilization, r: u16) -> u16 {
        let t = self.table();
        // n = ⌈u·512⌉ (u < 2^41 in 2^-24: ·2^9 < 2^50), in the table's
        // unit for b^p (b^p = entry·512 = entry·2^9 in 2^-20, so n·2^11
        // compares with the entry).
        let n = ((u.to_bits() << 9) + (1 << Utilization::FRAC_BITS) - 1) >> Utilization::FRAC_BITS;
        let n = n.max(1);
        let key = n << (TABLE_BITS - 9);
        // The largest p with entry ≤ key (entry 0 = 2^11 ≤ key: p ≥ 0).
        let p = t.partition_point(|&e| (e as u64) <= key).saturating_sub(1);
        let (Some(&lo), Some(&hi)) = (t.get(p), t.get(p + 1)) else {
            return self.max_code();
        };
        // (key − lo)/(hi − lo) in 2^-16, against r: hi > lo (b > 1 keeps
        // the table rising by at least 20 units a step), key − lo < hi − lo.
        let span = (hi - lo) as u64;
        let above = key.saturating_sub(lo as u64);
        let upper = (r as u64) * span < above << 16;
        (p + upper as usize) as u16
    }
}

/// A view over the field's bytes.
#[derive(Debug, Clone)]
pub struct PintCode<T: AsRef<[u8]>> {
    buffer: T,
    width: PintWidth,
}

impl<T: AsRef<[u8]>> PintCode<T> {
    /// Wraps without checking.
    pub const fn new_unchecked(buffer: T, width: PintWidth) -> Self {
        PintCode { buffer, width }
    }

    /// Wraps after [`PintCode::check_len`].
    pub fn new_checked(buffer: T, width: PintWidth) -> Result<Self> {
        let c = Self::new_unchecked(buffer, width);
        c.check_len()?;
        Ok(c)
    }

    /// `Truncated` if the buffer is shorter than the field.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < self.width.bytes() {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// The field's width.
    pub fn width(&self) -> PintWidth {
        self.width
    }

    /// The code as carried (big-endian over two bytes).
    pub fn code(&self) -> u16 {
        let b = self.buffer.as_ref();
        match self.width {
            PintWidth::One => b[0] as u16,
            PintWidth::Two => u16::from_be_bytes([b[0], b[1]]),
        }
    }

    /// The buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> PintCode<T> {
    /// Writes a code (the low byte alone for one byte).
    pub fn set_code(&mut self, p: u16) {
        let b = self.buffer.as_mut();
        match self.width {
            PintWidth::One => b[0] = p as u8,
            PintWidth::Two => b[..2].copy_from_slice(&p.to_be_bytes()),
        }
    }
}

/// A parsed code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct PintRepr {
    /// The field's width.
    pub width: PintWidth,
    /// The code, at most the width's [`PintWidth::max_code`].
    pub code: u16,
}

impl PintRepr {
    /// From a checked view; `OutOfRange` for a two-byte code above 1254.
    pub fn parse<T: AsRef<[u8]>>(c: &PintCode<T>) -> Result<Self> {
        let code = c.code();
        if code > c.width().max_code() {
            return Err(WireError::OutOfRange);
        }
        Ok(PintRepr { width: c.width(), code })
    }

    /// Writes the code into a view of this width (`BufferTooSmall` if it
    /// is shorter; `OutOfRange` for a code above the width's largest).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, c: &mut PintCode<T>) -> Result<()> {
        if c.check_len().is_err() || c.width() != self.width {
            return Err(WireError::BufferTooSmall);
        }
        if self.code > self.width.max_code() {
            return Err(WireError::OutOfRange);
        }
        c.set_code(self.code);
        Ok(())
    }

    /// U = b^code / 512.
    pub fn utilization(&self) -> Utilization {
        self.width.decode(self.code).unwrap_or(Utilization::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// U in 2^-20 as the table keeps it.
    fn q20(u: Utilization) -> u64 {
        u.to_bits() >> (Utilization::FRAC_BITS - TABLE_BITS)
    }

    /// The reference's `Pint::decode_u(p) = pow(b, p) / 512`, computed
    /// here in Python's double precision (`round(b**p / 512 * 2**20)`),
    /// not by this module's integer steps.
    #[test]
    fn decoding_matches_the_references_pow() {
        for (p, v) in [
            (0u16, 2048u64),
            (1, 2150),
            (14, 4055),
            (100, 269_315),
            (128, 1_055_748),
            (255, 518_323_877),
        ] {
            assert_eq!(q20(PintWidth::One.decode(p).unwrap()), v, "1.05^{p}");
        }
        for (p, v) in [
            (0u16, 2048u64),
            (1, 2068),
            (70, 4110),
            (500, 296_495),
            (1000, 42_924_351),
            (1254, 537_443_328),
        ] {
            assert_eq!(q20(PintWidth::Two.decode(p).unwrap()), v, "1.01^{p}");
        }
        assert_eq!(PintWidth::Two.decode(1255), None);
        assert_eq!(PintWidth::One.decode(256), None);
    }

    /// The reciprocals against `round(512 / b**p * 2**22)` in Python's
    /// doubles; each entry times its table's U is 1 within 2^-12.
    #[test]
    fn reciprocals_match_the_references_pow() {
        for (p, v) in [
            (0u16, 2_147_483_648u32),
            (1, 2_045_222_522),
            (14, 1_084_625_170),
            (100, 16_330_518),
            (128, 4_165_811),
            (255, 8485),
        ] {
            assert_eq!(PintWidth::One.inverse(p), Some(v), "512/1.05^{p}");
        }
        for (p, v) in [
            (0u16, 2_147_483_648u32),
            (1, 2_126_221_434),
            (70, 1_070_123_006),
            (500, 14_833_477),
            (1000, 102_460),
            (1254, 8183),
        ] {
            assert_eq!(PintWidth::Two.inverse(p), Some(v), "512/1.01^{p}");
        }
        assert_eq!(PintWidth::One.inverse(256), None);
        assert_eq!(PintWidth::Two.inverse(1255), None);
        for w in [PintWidth::One, PintWidth::Two] {
            for p in 0..=w.max_code() {
                let u = q20(w.decode(p).unwrap()) as f64 / (1u64 << TABLE_BITS) as f64;
                let inv = w.inverse(p).unwrap() as f64 / (1u64 << INVERSE_BITS) as f64;
                assert!((u * inv - 1.0).abs() < 1.0 / 4096.0, "{w:?} {p}");
            }
        }
    }

    /// Both tables rise at every step, by at least 20 units (2^-20) at
    /// 1/512: the encoder's division-free comparison relies on it.
    #[test]
    fn the_tables_rise() {
        for w in [PintWidth::One, PintWidth::Two] {
            let t = w.table();
            assert!(t.windows(2).all(|p| p[1] >= p[0] + 20), "{w:?}");
        }
    }

    /// Bytes as the layout gives them: one byte as is, two big-endian; a
    /// two-byte code past 1254 refused; a short buffer truncated.
    #[test]
    fn fields_parse_and_emit() {
        let c = PintCode::new_checked([0x80u8], PintWidth::One).unwrap();
        assert_eq!(PintRepr::parse(&c).unwrap().code, 128);
        let c = PintCode::new_checked([0x04u8, 0xE6, 0xFF], PintWidth::Two).unwrap();
        assert_eq!(PintRepr::parse(&c).unwrap().code, 1254);
        let c = PintCode::new_checked([0x04u8, 0xE7], PintWidth::Two).unwrap();
        assert_eq!(PintRepr::parse(&c), Err(WireError::OutOfRange));
        assert_eq!(
            PintCode::new_checked([0u8], PintWidth::Two).unwrap_err(),
            WireError::Truncated
        );
        let mut buf = [0u8; 2];
        let mut c = PintCode::new_unchecked(&mut buf[..], PintWidth::Two);
        PintRepr {
            width: PintWidth::Two,
            code: 700,
        }
        .emit(&mut c)
        .unwrap();
        assert_eq!(buf, [0x02, 0xBC]);
        let mut c = PintCode::new_unchecked(&mut buf[..], PintWidth::Two);
        assert_eq!(
            PintRepr {
                width: PintWidth::Two,
                code: 1300
            }
            .emit(&mut c),
            Err(WireError::OutOfRange)
        );
    }

    /// The encoder as the reference's: U at an exact power of b gives that
    /// code whatever r; between two powers, the upper code for a share of
    /// r's values equal to where n lies between them; its mean decodes
    /// back to n/512 within a table step.
    #[test]
    fn encoding_rounds_at_random_to_the_exact_mean() {
        // U = 1: n = 512 = b^p for no p; 1.05^127 = 491.3, 1.05^128 = 515.8.
        let u = Utilization::ONE;
        let codes = || (0..=u16::MAX).step_by(7).map(|r| PintWidth::One.encode(u, r));
        assert!(codes().all(|c| c == 127 || c == 128));
        let up = codes().filter(|&c| c == 128).count() as f64 / codes().count() as f64;
        let (lo, hi) = (1.05f64.powi(127), 1.05f64.powi(128));
        assert!((up - (512.0 - lo) / (hi - lo)).abs() < 0.01, "{up}");
        // U = 1/512: n = 1 = b^0, code 0 whatever r.
        let u = Utilization::from_bits(1 << 15);
        assert!((0..=u16::MAX).step_by(101).all(|r| PintWidth::One.encode(u, r) == 0));
        // Past the table: the largest code.
        assert_eq!(PintWidth::One.encode(Utilization::MAX, 0), 255);
        assert_eq!(PintWidth::Two.encode(Utilization::MAX, 0), 1254);
        // Two bytes at U = 0.95: n = 487, between 1.01^621 and 1.01^622.
        let u = Utilization::from_bits((0.95 * (1u64 << 24) as f64) as u64);
        let c = PintWidth::Two.encode(u, 0);
        assert!(c == 621 || c == 622, "{c}");
    }
}
