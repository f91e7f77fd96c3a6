//! The congestion-control parameter blocks of Huawei's hns RoCE driver
//! (Linux, `drivers/infiniband/hw/hns`): 16 little-endian bytes per
//! algorithm, which the driver hands to the NIC. [`LdcpBlock`] and
//! [`DcqcnBlock`] read and write the LDCP and DCQCN blocks and turn them
//! into the engine's configurations and back.
//!
//! ```text
//! LDCP   offset 0 cwd0 u32 | 4 alpha u8 | 5 gamma u8 (≤ 7) | 6 beta u8 (≤ 7) | 7 eta u8 (≤ 7) | 8..16 zero
//! DCQCN  offset 0 ai u16 | 2 f u8 | 3 tkp u8 (≤ 10) | 4 tmp u16 (≤ 15) | 6 alp u16 | 8 max_speed u32 |
//!        12 g u8 (≤ 15) | 13 al u8 | 14 cnp_time u8 | 15 ashift u8 (≤ 15)
//! ```
//!
//! The layout and each field's largest value are the driver's; what a
//! value means is not published. The readings below are the engine's,
//! chosen so that the drafts' and the engine's defaults are written
//! exactly where the field allows it; docs/c-abi.md has the table with
//! the reasons.
//!
//! | field | read as | engine field |
//! |---|---|---|
//! | LDCP `cwd0` | initial window; 0: the path's BDP | none: the engine's IW is each flow's BDP, so only 0 is taken |
//! | LDCP `alpha` | 1 ..= 128, in 1/128 packet | `alpha` (draft: 0 < alpha ≤ 1; 128 is one packet) |
//! | LDCP `gamma` | 2^-gamma packet, 1 ..= 7 | `gamma` (draft: 1/4, 1/8, 1/16; below one packet) |
//! | LDCP `beta` | 2^-beta packet, 0 ..= 7 | `beta` (draft: 0 < beta ≤ 1) |
//! | LDCP `eta` | 2^-eta | none: the draft's eta = 1/2, so only 1 is taken |
//! | DCQCN `ai` | R_AI, Mb/s | `rate_ai` = ai / max_speed |
//! | DCQCN `f` | F, fast-recovery steps | `fast_recovery_steps` (≤ 31) |
//! | DCQCN `tkp` | rate-increase timer 2^tkp µs | `increase_interval_ns` |
//! | DCQCN `tmp` | decrease check period 2^tmp µs | `decrease_interval_ns` |
//! | DCQCN `alp` | alpha update period, µs (≥ 1) | `alpha_interval_ns` |
//! | DCQCN `max_speed` | the line rate, Mb/s (≥ 1) | none: the scale of `ai` |
//! | DCQCN `g` | 2^-g | `g` |
//! | DCQCN `al`, `ashift` | alpha at the first CNP, al · 2^-ashift | none: the engine's is 1, so al = 2^ashift |
//! | DCQCN `cnp_time` | the notification point's CNP interval, µs | `cnp_interval_ns` |
//!
//! A block out of its range, or one the engine cannot take, is refused
//! with a [`BlockError`] naming the field; a configuration a block cannot
//! hold (an alpha that is no multiple of 1/128 packet, a timer that is no
//! power of two microseconds) likewise.

use crate::dcqcn::DcqcnConfig;
use crate::ldcp::LdcpConfig;
use crate::units::Fraction;

/// Bytes of a block.
pub const BLOCK_LEN: usize = 16;

/// Why a block or a configuration was refused, and which field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockError {
    /// The field, by its name in the block.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: &'static str,
}

fn refuse<T>(field: &'static str, reason: &'static str) -> Result<T, BlockError> {
    Err(BlockError { field, reason })
}

fn u16_at(b: &[u8; BLOCK_LEN], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8; BLOCK_LEN], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// `2^-k` for a shift field, `None` beyond 2^-24.
fn inverse_pow2(k: u8) -> Option<Fraction> {
    Fraction::inverse_pow2(k as u32)
}

/// `k` if `f` is exactly 2^-k with `k ≤ max`.
fn shift_of(f: Fraction, max: u8) -> Option<u8> {
    let bits = f.to_bits();
    if !bits.is_power_of_two() {
        return None;
    }
    let k = Fraction::FRAC_BITS - bits.trailing_zeros();
    (k <= max as u32).then_some(k as u8)
}

/// `k` if `ns` is exactly 2^k µs with `k ≤ max`.
fn pow2_us(ns: u32, max: u8) -> Option<u8> {
    if !ns.is_multiple_of(1000) || !(ns / 1000).is_power_of_two() {
        return None;
    }
    let k = (ns / 1000).trailing_zeros();
    (k <= max as u32).then_some(k as u8)
}

/// The hns LDCP block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LdcpBlock {
    /// Initial window (0: the path's BDP).
    pub cwd0: u32,
    /// Additive increase per RTT, 1/128 packet.
    pub alpha: u8,
    /// Smallest window, 2^-gamma packet.
    pub gamma: u8,
    /// Decrease per marked packet, 2^-beta packet.
    pub beta: u8,
    /// Below one packet, a marked ACK multiplies the window by 2^-eta.
    pub eta: u8,
}

impl LdcpBlock {
    /// Largest `gamma`, `beta` and `eta` the driver takes.
    pub const SHIFT_MAX: u8 = 7;

    /// Reads a block; the driver's ranges are checked, and the reserved
    /// bytes must be zero.
    pub fn parse(b: &[u8; BLOCK_LEN]) -> Result<Self, BlockError> {
        let block = LdcpBlock {
            cwd0: u32_at(b, 0),
            alpha: b[4],
            gamma: b[5],
            beta: b[6],
            eta: b[7],
        };
        for (name, v) in [("gamma", block.gamma), ("beta", block.beta), ("eta", block.eta)] {
            if v > Self::SHIFT_MAX {
                return refuse(name, "above the driver's largest, 7");
            }
        }
        if b[8..].iter().any(|&x| x != 0) {
            return refuse("reserved", "bytes 8 to 15 are not zero");
        }
        Ok(block)
    }

    /// The block's bytes.
    pub fn to_bytes(&self) -> [u8; BLOCK_LEN] {
        let mut b = [0; BLOCK_LEN];
        b[..4].copy_from_slice(&self.cwd0.to_le_bytes());
        b[4] = self.alpha;
        b[5] = self.gamma;
        b[6] = self.beta;
        b[7] = self.eta;
        b
    }

    /// The engine's configuration: the block's fields, and the MTU, fast
    /// start and RTT-request timeout of `base` (the block has none).
    pub fn to_config(&self, base: &LdcpConfig) -> Result<LdcpConfig, BlockError> {
        if self.cwd0 != 0 {
            return refuse(
                "cwd0",
                "the engine's initial window is each flow's BDP: only 0 is taken",
            );
        }
        if self.eta != 1 {
            return refuse(
                "eta",
                "the engine halves a window below one packet (eta = 1/2): only 1 is taken",
            );
        }
        let alpha = match self.alpha {
            1..=128 => Fraction::from_bits((self.alpha as u32) << (Fraction::FRAC_BITS - 7)),
            _ => None,
        };
        let Some(alpha) = alpha else {
            return refuse(
                "alpha",
                "1 ..= 128 (1/128 packet; the draft's alpha is at most one packet)",
            );
        };
        let Some(gamma) = inverse_pow2(self.gamma).filter(|_| self.gamma >= 1) else {
            return refuse("gamma", "1 ..= 7: the smallest window is below one packet");
        };
        let Some(beta) = inverse_pow2(self.beta) else {
            return refuse("beta", "0 ..= 7");
        };
        let c = LdcpConfig {
            alpha,
            beta,
            gamma,
            ..*base
        };
        match c.invalid_field() {
            None => Ok(c),
            Some(f) => refuse(f, "out of the engine's range"),
        }
    }

    /// The block of a configuration, if the block can hold it.
    pub fn from_config(c: &LdcpConfig) -> Result<Self, BlockError> {
        let a = c.alpha.to_bits();
        let step = 1u32 << (Fraction::FRAC_BITS - 7);
        if a == 0 || !a.is_multiple_of(step) {
            return refuse("alpha", "not a multiple of 1/128 packet");
        }
        let Some(gamma) = shift_of(c.gamma, Self::SHIFT_MAX).filter(|&k| k >= 1) else {
            return refuse("gamma", "not 2^-k packet with k in 1 ..= 7");
        };
        let Some(beta) = shift_of(c.beta, Self::SHIFT_MAX) else {
            return refuse("beta", "not 2^-k packet with k in 0 ..= 7");
        };
        Ok(LdcpBlock {
            cwd0: 0,
            alpha: (a / step) as u8,
            gamma,
            beta,
            eta: 1,
        })
    }
}

/// The hns DCQCN block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DcqcnBlock {
    /// R_AI, Mb/s.
    pub ai: u16,
    /// F: fast-recovery steps.
    pub f: u8,
    /// Rate-increase timer, 2^tkp µs.
    pub tkp: u8,
    /// Decrease check period, 2^tmp µs.
    pub tmp: u16,
    /// Alpha update period, µs.
    pub alp: u16,
    /// The line rate `ai` is a part of, Mb/s.
    pub max_speed: u32,
    /// Alpha's gain, 2^-g.
    pub g: u8,
    /// Alpha at the first CNP is al · 2^-ashift.
    pub al: u8,
    /// The notification point's CNP interval, µs.
    pub cnp_time: u8,
    /// See `al`.
    pub ashift: u8,
}

impl DcqcnBlock {
    /// Largest `tkp` the driver takes.
    pub const TKP_MAX: u8 = 10;
    /// Largest `tmp`, `g` and `ashift` the driver takes.
    pub const SHIFT_MAX: u8 = 15;

    /// Reads a block; the driver's ranges are checked.
    pub fn parse(b: &[u8; BLOCK_LEN]) -> Result<Self, BlockError> {
        let block = DcqcnBlock {
            ai: u16_at(b, 0),
            f: b[2],
            tkp: b[3],
            tmp: u16_at(b, 4),
            alp: u16_at(b, 6),
            max_speed: u32_at(b, 8),
            g: b[12],
            al: b[13],
            cnp_time: b[14],
            ashift: b[15],
        };
        if block.tkp > Self::TKP_MAX {
            return refuse("tkp", "above the driver's largest, 10");
        }
        if block.tmp > Self::SHIFT_MAX as u16 {
            return refuse("tmp", "above the driver's largest, 15");
        }
        if block.g > Self::SHIFT_MAX {
            return refuse("g", "above the driver's largest, 15");
        }
        if block.ashift > Self::SHIFT_MAX {
            return refuse("ashift", "above the driver's largest, 15");
        }
        Ok(block)
    }

    /// The block's bytes.
    pub fn to_bytes(&self) -> [u8; BLOCK_LEN] {
        let mut b = [0; BLOCK_LEN];
        b[..2].copy_from_slice(&self.ai.to_le_bytes());
        b[2] = self.f;
        b[3] = self.tkp;
        b[4..6].copy_from_slice(&self.tmp.to_le_bytes());
        b[6..8].copy_from_slice(&self.alp.to_le_bytes());
        b[8..12].copy_from_slice(&self.max_speed.to_le_bytes());
        b[12] = self.g;
        b[13] = self.al;
        b[14] = self.cnp_time;
        b[15] = self.ashift;
        b
    }

    /// The engine's configuration: the block's fields, and the hyper
    /// increase, lowest rate, byte counter and target clamp of `base`
    /// (the block has none).
    pub fn to_config(&self, base: &DcqcnConfig) -> Result<DcqcnConfig, BlockError> {
        if self.max_speed == 0 {
            return refuse("max_speed", "0: the line rate R_AI is a part of");
        }
        let Some(rate_ai) = Fraction::ratio(self.ai as u32, self.max_speed) else {
            return refuse("ai", "above max_speed");
        };
        if self.alp == 0 {
            return refuse("alp", "0: alpha's period is at least 1 µs");
        }
        if (self.al as u32) != 1 << self.ashift {
            return refuse("al", "the engine's alpha at the first CNP is 1: al must be 2^ashift");
        }
        let Some(g) = inverse_pow2(self.g) else {
            return refuse("g", "0 ..= 15");
        };
        let c = DcqcnConfig {
            g,
            alpha_interval_ns: self.alp as u32 * 1000,
            decrease_interval_ns: 1000 << self.tmp,
            increase_interval_ns: 1000 << self.tkp,
            fast_recovery_steps: self.f,
            rate_ai,
            cnp_interval_ns: self.cnp_time as u32 * 1000,
            ..*base
        };
        match c.invalid_field() {
            None => Ok(c),
            Some("rate_ai") => refuse("ai", "0: the additive increase is above 0"),
            Some("fast_recovery_steps") => refuse("f", "above the engine's largest, 31"),
            Some("g") => refuse("g", "out of the engine's range"),
            // The block's other fields are in the engine's range by their
            // widths; these are `base`'s.
            Some(f) => refuse(f, "out of the engine's range (from the base configuration)"),
        }
    }

    /// The block of a configuration for flows at `line_rate_mbps`, if the
    /// block can hold it.
    pub fn from_config(c: &DcqcnConfig, line_rate_mbps: u32) -> Result<Self, BlockError> {
        // Rounded to nearest, as `Fraction::ratio` rounds the way back.
        let ai = (c.rate_ai.to_bits() as u64 * line_rate_mbps as u64 + (1 << (Fraction::FRAC_BITS - 1)))
            >> Fraction::FRAC_BITS;
        let Ok(ai) = u16::try_from(ai) else {
            return refuse("ai", "above 65 535 Mb/s");
        };
        // R_AI back through the block must give the same fraction.
        if line_rate_mbps == 0 || Fraction::ratio(ai as u32, line_rate_mbps) != Some(c.rate_ai) {
            return refuse(
                "ai",
                "the additive increase is no whole number of Mb/s at this line rate",
            );
        }
        let us = |ns: u32| ns.is_multiple_of(1000).then_some(ns / 1000);
        let Some(alp) = us(c.alpha_interval_ns).and_then(|v| u16::try_from(v).ok()) else {
            return refuse("alp", "alpha's period is no whole number of µs below 65 536");
        };
        let Some(cnp_time) = us(c.cnp_interval_ns).and_then(|v| u8::try_from(v).ok()) else {
            return refuse("cnp_time", "the CNP interval is no whole number of µs below 256");
        };
        let Some(tkp) = pow2_us(c.increase_interval_ns, Self::TKP_MAX) else {
            return refuse("tkp", "the increase timer is not 2^k µs with k in 0 ..= 10");
        };
        let Some(tmp) = pow2_us(c.decrease_interval_ns, Self::SHIFT_MAX) else {
            return refuse("tmp", "the decrease period is not 2^k µs with k in 0 ..= 15");
        };
        let Some(g) = shift_of(c.g, Self::SHIFT_MAX) else {
            return refuse("g", "the gain is not 2^-k with k in 0 ..= 15");
        };
        Ok(DcqcnBlock {
            ai,
            f: c.fast_recovery_steps,
            tkp,
            tmp: tmp as u16,
            alp,
            max_speed: line_rate_mbps,
            g,
            al: 1,
            cnp_time,
            ashift: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// An LDCP block as the driver lays it out: cwd0 (u32 LE) at 0, alpha
    /// at 4, gamma at 5, beta at 6, eta at 7, then 8 bytes of zero.
    fn ldcp_bytes(cwd0: u32, alpha: u8, gamma: u8, beta: u8, eta: u8) -> [u8; BLOCK_LEN] {
        let c = cwd0.to_le_bytes();
        [c[0], c[1], c[2], c[3], alpha, gamma, beta, eta, 0, 0, 0, 0, 0, 0, 0, 0]
    }

    /// A DCQCN block: ai (u16 LE) at 0, f at 2, tkp at 3, tmp (u16 LE) at
    /// 4, alp (u16 LE) at 6, max_speed (u32 LE) at 8, g at 12, al at 13,
    /// cnp_time at 14, ashift at 15.
    #[allow(clippy::too_many_arguments)]
    fn dcqcn_bytes(
        ai: u16,
        f: u8,
        tkp: u8,
        tmp: u16,
        alp: u16,
        max_speed: u32,
        g: u8,
        al: u8,
        cnp_time: u8,
        ashift: u8,
    ) -> [u8; BLOCK_LEN] {
        let (a, t, p, m) = (
            ai.to_le_bytes(),
            tmp.to_le_bytes(),
            alp.to_le_bytes(),
            max_speed.to_le_bytes(),
        );
        [
            a[0], a[1], f, tkp, t[0], t[1], p[0], p[1], m[0], m[1], m[2], m[3], g, al, cnp_time, ashift,
        ]
    }

    #[test]
    fn the_ldcp_drafts_defaults_are_one_block() {
        // alpha 1 packet = 128/128, gamma 1/8 = 2^-3, beta 1/2 = 2^-1, eta 1/2.
        let bytes = ldcp_bytes(0, 128, 3, 1, 1);
        let block = LdcpBlock::parse(&bytes).unwrap();
        let base = LdcpConfig::draft_default();
        assert_eq!(block.to_config(&base), Ok(base));
        assert_eq!(LdcpBlock::from_config(&base), Ok(block));
        assert_eq!(block.to_bytes(), bytes);
    }

    #[test]
    fn ldcp_blocks_out_of_range_name_their_field() {
        let base = LdcpConfig::draft_default();
        let field = |b: [u8; BLOCK_LEN]| LdcpBlock::parse(&b).and_then(|k| k.to_config(&base)).unwrap_err().field;
        assert_eq!(field(ldcp_bytes(0, 128, 8, 1, 1)), "gamma");
        assert_eq!(field(ldcp_bytes(0, 128, 3, 8, 1)), "beta");
        assert_eq!(field(ldcp_bytes(0, 128, 3, 1, 9)), "eta");
        assert_eq!(field(ldcp_bytes(0, 128, 3, 1, 2)), "eta");
        assert_eq!(field(ldcp_bytes(1500, 128, 3, 1, 1)), "cwd0");
        assert_eq!(field(ldcp_bytes(0, 0, 3, 1, 1)), "alpha");
        assert_eq!(field(ldcp_bytes(0, 129, 3, 1, 1)), "alpha");
        assert_eq!(field(ldcp_bytes(0, 128, 0, 1, 1)), "gamma");
        let mut b = ldcp_bytes(0, 128, 3, 1, 1);
        b[15] = 1;
        assert_eq!(field(b), "reserved");
        // A configuration the block cannot hold.
        let mut c = base;
        c.alpha = Fraction::ratio(1, 3).unwrap();
        assert_eq!(LdcpBlock::from_config(&c).unwrap_err().field, "alpha");
    }

    #[test]
    fn a_dcqcn_block_reads_as_the_hpcc_evaluations_settings() {
        // R_AI 20 Mb/s of 100 Gb/s, F 1, Ti 2^8 = 256 µs, Td 2^2 = 4 µs,
        // Ta 1 µs, g 2^-8, alpha 1 at the first CNP, a CNP per 4 µs.
        let bytes = dcqcn_bytes(20, 1, 8, 2, 1, 100_000, 8, 1, 4, 0);
        let block = DcqcnBlock::parse(&bytes).unwrap();
        let base = DcqcnConfig::hpcc_sim();
        let c = block.to_config(&base).unwrap();
        assert_eq!(
            c,
            DcqcnConfig {
                increase_interval_ns: 256_000,
                cnp_interval_ns: 4_000,
                ..base
            }
        );
        assert_eq!(DcqcnBlock::from_config(&c, 100_000), Ok(block));
        assert_eq!(block.to_bytes(), bytes);
        // hpcc_sim's 300 µs increase timer is no power of two µs.
        assert_eq!(DcqcnBlock::from_config(&base, 100_000).unwrap_err().field, "tkp");
    }

    #[test]
    fn dcqcn_blocks_out_of_range_name_their_field() {
        let base = DcqcnConfig::hpcc_sim();
        let field = |b: [u8; BLOCK_LEN]| {
            DcqcnBlock::parse(&b)
                .and_then(|k| k.to_config(&base))
                .unwrap_err()
                .field
        };
        assert_eq!(field(dcqcn_bytes(20, 1, 11, 2, 1, 100_000, 8, 1, 4, 0)), "tkp");
        assert_eq!(field(dcqcn_bytes(20, 1, 8, 16, 1, 100_000, 8, 1, 4, 0)), "tmp");
        assert_eq!(field(dcqcn_bytes(20, 1, 8, 2, 1, 100_000, 16, 1, 4, 0)), "g");
        assert_eq!(field(dcqcn_bytes(20, 1, 8, 2, 1, 100_000, 8, 1, 4, 16)), "ashift");
        assert_eq!(field(dcqcn_bytes(20, 1, 8, 2, 1, 0, 8, 1, 4, 0)), "max_speed");
        assert_eq!(field(dcqcn_bytes(20, 1, 8, 2, 1, 10, 8, 1, 4, 0)), "ai");
        assert_eq!(field(dcqcn_bytes(0, 1, 8, 2, 1, 100_000, 8, 1, 4, 0)), "ai");
        assert_eq!(field(dcqcn_bytes(20, 1, 8, 2, 0, 100_000, 8, 1, 4, 0)), "alp");
        assert_eq!(field(dcqcn_bytes(20, 1, 8, 2, 1, 100_000, 8, 3, 4, 1)), "al");
        assert_eq!(field(dcqcn_bytes(20, 32, 8, 2, 1, 100_000, 8, 1, 4, 0)), "f");
        // al · 2^-ashift = 1 in any form is taken.
        assert!(DcqcnBlock::parse(&dcqcn_bytes(20, 1, 8, 2, 1, 100_000, 8, 4, 4, 2))
            .unwrap()
            .to_config(&base)
            .is_ok());
    }

    proptest! {
        /// Every LDCP block the engine takes comes back from its
        /// configuration unchanged, and every block's bytes parse back to it.
        #[test]
        fn ldcp_blocks_round_trip(alpha in 1u8..=128, gamma in 1u8..=7, beta in 0u8..=7) {
            let b = LdcpBlock { cwd0: 0, alpha, gamma, beta, eta: 1 };
            prop_assert_eq!(LdcpBlock::parse(&b.to_bytes()), Ok(b));
            let c = b.to_config(&LdcpConfig::draft_default()).unwrap();
            prop_assert_eq!(LdcpBlock::from_config(&c), Ok(b));
        }

        /// The same for DCQCN: a block whose R_AI is a whole number of
        /// Mb/s at its line rate round-trips through the configuration.
        #[test]
        fn dcqcn_blocks_round_trip(
            ai in 1u16..=65_535,
            f in 0u8..=31,
            tkp in 0u8..=10,
            tmp in 0u16..=15,
            alp in 1u16..=65_535,
            max_speed in 1_000u32..=1_600_000,
            g in 1u8..=15,
            cnp_time in 0u8..=255,
        ) {
            let b = DcqcnBlock { ai, f, tkp, tmp, alp, max_speed, g, al: 1, cnp_time, ashift: 0 };
            prop_assert_eq!(DcqcnBlock::parse(&b.to_bytes()), Ok(b));
            prop_assume!(ai as u32 <= max_speed);
            let c = b.to_config(&DcqcnConfig::hpcc_sim()).unwrap();
            // R_AI is kept as a fraction of the line rate in 2^-24: at
            // 1.6 Tb/s a step is 0.095 Mb/s, under half of one, so the way
            // back, rounded to nearest, finds the block's ai.
            prop_assert_eq!(DcqcnBlock::from_config(&c, max_speed), Ok(b));
        }
    }
}
