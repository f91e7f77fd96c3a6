//! Compact HPCC stack: parsing never panics, and what parses re-emits to
//! bytes that parse to the same Repr.
#![no_main]
use cc_core::wire::compact::{CompactRepr, CompactStack, CompactUnits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(stack) = CompactStack::new_checked(data) else {
        return;
    };
    let Ok(repr) = CompactRepr::parse(&stack) else { return };
    let mut buf = [0u8; 2 + 8 * cc_core::wire::MAX_HOPS];
    repr.emit(&mut CompactStack::new_unchecked(&mut buf[..]))
        .expect("a parsed stack re-emits");
    let again = CompactStack::new_checked(&buf[..repr.buffer_len()]).and_then(|s| CompactRepr::parse(&s));
    assert_eq!(again.as_ref(), Ok(&repr));
    let units = CompactUnits {
        tx_unit_bytes: data.len() as u16,
        qlen_unit_bytes: data.len() as u32,
    };
    let _ = repr.hop_samples(&units);
});
