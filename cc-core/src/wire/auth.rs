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
//!
//! Within a flow, a notification that carries nothing that moves (Rx-HPCC
//! window feedback, a flow count) would verify again if captured and sent
//! later. Those are sealed with a per-flow sequence number inside the tag
//! ([`seal_sequenced`]):
//!
//! ```text
//! | notification | seq (4 bytes) | tag = SipHash-2-4(key, flow id ‖ notification ‖ seq) |
//! ```
//!
//! and the receiving NIC keeps a [`ReplayGuard`] per flow: a sequence
//! number not after the last accepted one (serial-number order) is refused
//! with [`WireError::Replayed`] and counted. Telemetry on ACKs needs no
//! number of its own: its tag covers the cumulative ACK, and stale
//! telemetry is refused by its timestamps.

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
        FeedbackKey {
            k0: u64::from_le_bytes(lo),
            k1: u64::from_le_bytes(hi),
        }
    }
}

impl core::fmt::Debug for FeedbackKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("FeedbackKey(..)")
    }
}

/// The tag of `msg` for `flow`.
pub fn tag(key: &FeedbackKey, flow: FlowId, msg: &[u8]) -> [u8; TAG_LEN] {
    tag_parts(key, flow, &[msg])
}

/// The tag for `flow` of the notification made of `parts` end to end (a
/// header and a field kept apart, say), without copying them together:
/// the same tag as [`tag`] of the joined bytes.
pub fn tag_parts(key: &FeedbackKey, flow: FlowId, parts: &[&[u8]]) -> [u8; TAG_LEN] {
    let mut h = SipHasher24::new_with_keys(key.k0, key.k1);
    h.write(&flow.0.to_be_bytes());
    for part in parts {
        h.write(part);
    }
    h.finish().to_be_bytes()
}

/// Whether two tags are equal, in the same time wherever they differ.
fn same_tag(a: &[u8; TAG_LEN], b: &[u8]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0 && b.len() == TAG_LEN
}

/// Writes `msg ‖ tag` into `out`; returns the bytes written.
pub fn seal(key: &FeedbackKey, flow: FlowId, msg: &[u8], out: &mut [u8]) -> Result<usize> {
    let n = msg.len() + TAG_LEN;
    let out = out.get_mut(..n).ok_or(WireError::BufferTooSmall)?;
    out[..msg.len()].copy_from_slice(msg);
    out[msg.len()..].copy_from_slice(&tag(key, flow, msg));
    Ok(n)
}

/// Bytes of the sequence number in a sequenced notification.
pub const SEQ_LEN: usize = 4;

/// Writes `msg ‖ seq ‖ tag` into `out`, the tag covering the sequence
/// number; returns the bytes written. The sender of the notification
/// numbers its notifications for a flow 0, 1, 2, … (wrapping).
pub fn seal_sequenced(key: &FeedbackKey, flow: FlowId, seq: u32, msg: &[u8], out: &mut [u8]) -> Result<usize> {
    let n = msg.len() + SEQ_LEN;
    let body = out.get_mut(..n).ok_or(WireError::BufferTooSmall)?;
    body[..msg.len()].copy_from_slice(msg);
    body[msg.len()..].copy_from_slice(&seq.to_be_bytes());
    let t = tag(key, flow, body);
    out.get_mut(n..n + TAG_LEN)
        .ok_or(WireError::BufferTooSmall)?
        .copy_from_slice(&t);
    Ok(n + TAG_LEN)
}

/// The last sequence number accepted from one flow's notifications: the
/// receiving NIC keeps one per flow (8 bytes) beside its flow context.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ReplayGuard {
    last: Option<u32>,
}

impl ReplayGuard {
    /// The last sequence number accepted, if any.
    pub const fn last(&self) -> Option<u32> {
        self.last
    }
}

/// Checks tags and counts the outcome.
#[derive(Clone, Debug)]
pub struct Verifier {
    key: FeedbackKey,
    accepted: u32,
    rejected: u32,
    replayed: u32,
}

impl Verifier {
    /// A verifier with `key`.
    pub const fn new(key: FeedbackKey) -> Self {
        Verifier {
            key,
            accepted: 0,
            rejected: 0,
            replayed: 0,
        }
    }

    /// The message and tag of `sealed` if the tag is right for `flow`;
    /// `BadTag` or `Truncated` (counted as rejected) if not. The comparison
    /// takes the same time wherever the tags differ.
    fn check<'a>(&mut self, flow: FlowId, sealed: &'a [u8]) -> Result<&'a [u8]> {
        let Some(split) = sealed.len().checked_sub(TAG_LEN) else {
            self.rejected = self.rejected.saturating_add(1);
            return Err(WireError::Truncated);
        };
        let (msg, got) = sealed.split_at(split);
        if !same_tag(&tag(&self.key, flow, msg), got) {
            self.rejected = self.rejected.saturating_add(1);
            return Err(WireError::BadTag);
        }
        Ok(msg)
    }

    /// Whether `got` is the tag for `flow` of the notification made of
    /// `parts` end to end ([`tag_parts`]), as [`Verifier::open`] checks a
    /// sealed message whose parts lie apart; `BadTag` (counted) if not.
    pub fn open_parts(&mut self, flow: FlowId, parts: &[&[u8]], got: &[u8; TAG_LEN]) -> Result<()> {
        if !same_tag(&tag_parts(&self.key, flow, parts), got) {
            self.rejected = self.rejected.saturating_add(1);
            return Err(WireError::BadTag);
        }
        self.accepted = self.accepted.saturating_add(1);
        Ok(())
    }

    /// The notification inside `sealed` if its tag is right for `flow`;
    /// `BadTag` (counted) if not, `Truncated` (counted) if there is no tag.
    pub fn open<'a>(&mut self, flow: FlowId, sealed: &'a [u8]) -> Result<&'a [u8]> {
        let msg = self.check(flow, sealed)?;
        self.accepted = self.accepted.saturating_add(1);
        Ok(msg)
    }

    /// The notification and its sequence number inside a
    /// [`seal_sequenced`] message, if the tag is right for `flow` and the
    /// number comes after the last one `guard` accepted (serial-number
    /// order, RFC 1982); then `guard` moves to it. A right tag on an old
    /// number is a replay: `Replayed`, counted, `guard` unchanged.
    pub fn open_sequenced<'a>(
        &mut self,
        flow: FlowId,
        guard: &mut ReplayGuard,
        sealed: &'a [u8],
    ) -> Result<(&'a [u8], u32)> {
        let body = self.check(flow, sealed)?;
        let Some(split) = body.len().checked_sub(SEQ_LEN) else {
            self.rejected = self.rejected.saturating_add(1);
            return Err(WireError::Truncated);
        };
        let (msg, seq_bytes) = body.split_at(split);
        let seq = u32::from_be_bytes([seq_bytes[0], seq_bytes[1], seq_bytes[2], seq_bytes[3]]);
        if let Some(last) = guard.last {
            let d = seq.wrapping_sub(last);
            if d == 0 || d >= 1 << 31 {
                self.replayed = self.replayed.saturating_add(1);
                return Err(WireError::Replayed);
            }
        }
        guard.last = Some(seq);
        self.accepted = self.accepted.saturating_add(1);
        Ok((msg, seq))
    }

    /// Notifications accepted.
    pub fn accepted(&self) -> u32 {
        self.accepted
    }

    /// Notifications refused (forged, tampered or truncated).
    pub fn rejected(&self) -> u32 {
        self.rejected
    }

    /// Sequenced notifications refused as replays.
    pub fn replayed(&self) -> u32 {
        self.replayed
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

    /// A notification in parts has the tag of its joined bytes, and is
    /// checked as the joined message would be.
    #[test]
    fn parts_seal_and_open_as_the_joined_message() {
        let (head, field) = (&b"telemetry"[..], &7u64.to_be_bytes()[..]);
        let mut joined = [0u8; 17];
        joined[..9].copy_from_slice(head);
        joined[9..].copy_from_slice(field);
        let t = tag_parts(&KEY, FlowId(3), &[head, field]);
        assert_eq!(t, tag(&KEY, FlowId(3), &joined));
        let mut v = Verifier::new(KEY);
        assert_eq!(v.open_parts(FlowId(3), &[head, field], &t), Ok(()));
        assert_eq!(v.open_parts(FlowId(3), &[&joined[..], &[][..]], &t), Ok(()));
        assert_eq!(v.open_parts(FlowId(4), &[head, field], &t), Err(WireError::BadTag));
        assert_eq!(v.open_parts(FlowId(3), &[field, head], &t), Err(WireError::BadTag));
        let mut bad = t;
        bad[7] ^= 1;
        assert_eq!(v.open_parts(FlowId(3), &[head, field], &bad), Err(WireError::BadTag));
        assert_eq!((v.accepted(), v.rejected()), (2, 3));
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
        assert_eq!(
            seal(&KEY, FlowId(7), b"too long", &mut [0u8; 8]),
            Err(WireError::BufferTooSmall)
        );
    }

    /// Issue: the tag covered (flow, window) only, so a captured Rx-HPCC
    /// feedback verified again later (HPCC++ §9.1). Sequenced, a replay of
    /// an accepted notification, or an older one, is refused and counted.
    #[test]
    fn a_replayed_feedback_is_refused_and_counted() {
        let mut v = Verifier::new(KEY);
        let mut guard = ReplayGuard::default();
        let mut first = [0u8; 32];
        let n1 = seal_sequenced(&KEY, FlowId(7), 0, &75_000u32.to_be_bytes(), &mut first).unwrap();
        assert_eq!(n1, 4 + SEQ_LEN + TAG_LEN);
        let (msg, seq) = v.open_sequenced(FlowId(7), &mut guard, &first[..n1]).unwrap();
        assert_eq!((msg, seq), (&75_000u32.to_be_bytes()[..], 0));
        let mut second = [0u8; 32];
        let n2 = seal_sequenced(&KEY, FlowId(7), 1, &60_000u32.to_be_bytes(), &mut second).unwrap();
        v.open_sequenced(FlowId(7), &mut guard, &second[..n2]).unwrap();
        // The first, captured and sent again: its tag is right, its number old.
        assert_eq!(
            v.open_sequenced(FlowId(7), &mut guard, &first[..n1]),
            Err(WireError::Replayed)
        );
        assert_eq!(
            v.open_sequenced(FlowId(7), &mut guard, &second[..n2]),
            Err(WireError::Replayed)
        );
        assert_eq!(guard.last(), Some(1));
        assert_eq!((v.accepted(), v.rejected(), v.replayed()), (2, 0, 2));
        // A changed number breaks the tag.
        let mut forged = first;
        forged[4 + 3] = 9;
        assert_eq!(
            v.open_sequenced(FlowId(7), &mut guard, &forged[..n1]),
            Err(WireError::BadTag)
        );
        // Numbers wrap: u32::MAX is followed by 0.
        let mut g = ReplayGuard { last: Some(u32::MAX) };
        let n = seal_sequenced(&KEY, FlowId(7), 0, b"w", &mut first).unwrap();
        assert!(v.open_sequenced(FlowId(7), &mut g, &first[..n]).is_ok());
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
