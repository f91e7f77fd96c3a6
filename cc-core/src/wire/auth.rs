//! Feedback integrity (HPCC++ §9.1: "It is therefore RECOMMENDED that the
//! notification feedback message is at least integrity checked").
//!
//! The receiver appends an 8-byte SipHash-2-4 tag, keyed with a 128-bit key
//! the two NICs share, over the flow id and the notification bytes:
//!
//! ```text
//! | notification (telemetry, window feedback, …) | tag = SipHash-2-4(key, flow id ‖ notification) |
//! ```
//!
//! The sender checks the tag before the engine sees the data. Binding the
//! flow id keeps a notification for one flow from being replayed onto
//! another. A mismatch is refused with [`WireError::BadTag`] and counted.
//! (Replays within the same flow are the engine's business: stale telemetry
//! is refused by its timestamps.)

use core::hash::Hasher;

use siphasher::sip::SipHasher24;

use super::{Result, WireError};
use crate::event::FlowId;

/// Bytes of the tag.
pub const TAG_LEN: usize = 8;

/// A 128-bit SipHash key shared by the two ends of a flow.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FeedbackKey {
    k0: u64,
    k1: u64,
}

impl FeedbackKey {
    /// The key from 16 bytes (little-endian halves, as SipHash defines).
    pub const fn from_bytes(b: [u8; 16]) -> Self {
        let mut lo = [0u8; 8];
        let mut hi = [0u8; 8];
        let mut i = 0;
        while i < 8 {
            lo[i] = b[i];
            hi[i] = b[8 + i];
            i += 1;
        }
        FeedbackKey { k0: u64::from_le_bytes(lo), k1: u64::from_le_bytes(hi) }
    }
}

impl core::fmt::Debug for FeedbackKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FeedbackKey(..)")
    }
}

/// The tag of `msg` for `flow`.
pub fn tag(key: &FeedbackKey, flow: FlowId, msg: &[u8]) -> [u8; TAG_LEN] {
    let mut h = SipHasher24::new_with_keys(key.k0, key.k1);
    h.write(&flow.0.to_be_bytes());
    h.write(msg);
    h.finish().to_be_bytes()
}

/// Writes `msg ‖ tag` into `out`; returns the bytes written.
pub fn seal(key: &FeedbackKey, flow: FlowId, msg: &[u8], out: &mut [u8]) -> Result<usize> {
    let n = msg.len() + TAG_LEN;
    let out = out.get_mut(..n).ok_or(WireError::BufferTooSmall)?;
    out[..msg.len()].copy_from_slice(msg);
    out[msg.len()..].copy_from_slice(&tag(key, flow, msg));
    Ok(n)
}

/// Checks tags and counts the outcome.
#[derive(Clone, Debug)]
pub struct Verifier {
    key: FeedbackKey,
    accepted: u32,
    rejected: u32,
}

impl Verifier {
    /// A verifier with `key`.
    pub const fn new(key: FeedbackKey) -> Self {
        Verifier { key, accepted: 0, rejected: 0 }
    }

    /// The notification inside `sealed` if its tag is right for `flow`;
    /// `BadTag` (counted) if not, `Truncated` (counted) if there is no tag.
    /// The comparison takes the same time wherever the tags differ.
    pub fn open<'a>(&mut self, flow: FlowId, sealed: &'a [u8]) -> Result<&'a [u8]> {
        let Some(split) = sealed.len().checked_sub(TAG_LEN) else {
            self.rejected = self.rejected.saturating_add(1);
            return Err(WireError::Truncated);
        };
        let (msg, got) = sealed.split_at(split);
        let want = tag(&self.key, flow, msg);
        let diff = want.iter().zip(got).fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 {
            self.rejected = self.rejected.saturating_add(1);
            return Err(WireError::BadTag);
        }
        self.accepted = self.accepted.saturating_add(1);
        Ok(msg)
    }

    /// Notifications accepted.
    pub fn accepted(&self) -> u32 {
        self.accepted
    }

    /// Notifications refused (forged, tampered or truncated).
    pub fn rejected(&self) -> u32 {
        self.rejected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: FeedbackKey = FeedbackKey::from_bytes(*b"0123456789abcdef");

    #[test]
    fn sealed_notification_opens() {
        let mut buf = [0u8; 64];
        let n = seal(&KEY, FlowId(7), b"window=1234", &mut buf).unwrap();
        let mut v = Verifier::new(KEY);
        assert_eq!(v.open(FlowId(7), &buf[..n]).unwrap(), b"window=1234");
        assert_eq!((v.accepted(), v.rejected()), (1, 0));
    }

    #[test]
    fn every_single_bit_flip_is_rejected_and_counted() {
        let mut buf = [0u8; 64];
        let n = seal(&KEY, FlowId(7), b"telemetry bytes", &mut buf).unwrap();
        let mut v = Verifier::new(KEY);
        for bit in 0..n * 8 {
            let mut t = buf;
            t[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(v.open(FlowId(7), &t[..n]), Err(WireError::BadTag), "bit {bit}");
        }
        assert_eq!(v.rejected() as usize, n * 8);
    }

    #[test]
    fn wrong_flow_wrong_key_and_truncation_are_rejected() {
        let mut buf = [0u8; 64];
        let n = seal(&KEY, FlowId(7), b"x", &mut buf).unwrap();
        let mut v = Verifier::new(KEY);
        assert_eq!(v.open(FlowId(8), &buf[..n]), Err(WireError::BadTag));
        let mut other = Verifier::new(FeedbackKey::from_bytes([0; 16]));
        assert_eq!(other.open(FlowId(7), &buf[..n]), Err(WireError::BadTag));
        assert_eq!(v.open(FlowId(7), &buf[..5]), Err(WireError::Truncated));
        assert_eq!(seal(&KEY, FlowId(7), b"too long", &mut [0u8; 8]), Err(WireError::BufferTooSmall));
    }

    /// SipHash-2-4 test vector (the SipHash paper, Appendix A): key 00..0f,
    /// message 00..0e → 0xa129ca6149be45e5 (bytes e5 45 be 49 61 ca 29 a1
    /// in the reference implementation's vector table).
    #[test]
    fn siphash_reference_vector() {
        let key = FeedbackKey::from_bytes([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
        let mut h = SipHasher24::new_with_keys(key.k0, key.k1);
        h.write(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
        assert_eq!(h.finish(), 0xa129_ca61_49be_45e5);
    }
}
