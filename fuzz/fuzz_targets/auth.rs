//! Feedback integrity: opening arbitrary bytes never panics and never
//! accepts a forgery; a sealed message always opens, and any one-bit change
//! to it is rejected and counted; a sequenced message opens once and its
//! replay is refused.
#![no_main]
use cc_core::event::FlowId;
use cc_core::wire::auth::{seal, seal_sequenced, FeedbackKey, ReplayGuard, Verifier, SEQ_LEN, TAG_LEN};
use cc_core::wire::WireError;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ([u8; 16], u32, u16, &[u8])| {
    let (key, flow, flip, msg) = input;
    let key = FeedbackKey::from_bytes(key);
    let mut v = Verifier::new(key);
    // Arbitrary bytes as a sealed notification: accepted only if the tag
    // is genuinely right.
    if let Ok(inner) = v.open(FlowId(flow), msg) {
        let mut buf = vec![0u8; inner.len() + TAG_LEN];
        seal(&key, FlowId(flow), inner, &mut buf).unwrap();
        assert_eq!(&buf[..], msg, "accepted bytes whose tag is not the seal");
    }
    let mut buf = vec![0u8; msg.len() + TAG_LEN];
    let n = seal(&key, FlowId(flow), msg, &mut buf).unwrap();
    assert_eq!(v.open(FlowId(flow), &buf[..n]), Ok(msg));
    let bit = flip as usize % (n * 8);
    buf[bit / 8] ^= 1 << (bit % 8);
    let before = v.rejected();
    assert_eq!(v.open(FlowId(flow), &buf[..n]), Err(WireError::BadTag));
    assert_eq!(v.rejected(), before + 1);
    // Sequenced: arbitrary bytes never panic; a fresh seal opens once.
    let mut guard = ReplayGuard::default();
    let _ = v.open_sequenced(FlowId(flow), &mut guard, msg);
    let mut guard = ReplayGuard::default();
    let mut buf = vec![0u8; msg.len() + SEQ_LEN + TAG_LEN];
    let n = seal_sequenced(&key, FlowId(flow), flip as u32, msg, &mut buf).unwrap();
    assert_eq!(
        v.open_sequenced(FlowId(flow), &mut guard, &buf[..n]),
        Ok((msg, flip as u32))
    );
    assert_eq!(
        v.open_sequenced(FlowId(flow), &mut guard, &buf[..n]),
        Err(WireError::Replayed)
    );
});
