//! INT-MD v2.0: parsing never panics, and what parses re-emits to bytes
//! that parse to the same Repr.
#![no_main]
use cc_core::wire::int_md::{IntMdPacket, IntMdRepr};
use cc_core::wire::{PortSpeedStack, UnitsProfile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(p) = IntMdPacket::new_checked(data) else { return };
    let Ok(repr) = IntMdRepr::parse(&p) else { return };
    let mut buf = [0u8; 1024];
    repr.emit(&mut IntMdPacket::new_unchecked(&mut buf[..]))
        .expect("a parsed stack re-emits");
    let again = IntMdPacket::new_checked(&buf[..repr.buffer_len()]).and_then(|p| IntMdRepr::parse(&p));
    assert_eq!(again.as_ref(), Ok(&repr));
    let mut profile = UnitsProfile::default_100g();
    profile.tx_util_full_scale = data.first().copied().unwrap_or(0) as u32;
    let _ = repr.hop_samples(&profile);
});
