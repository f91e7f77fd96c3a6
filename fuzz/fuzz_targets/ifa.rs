//! IFA 2.0: parsing never panics under any namespace profile table, and
//! what parses re-emits to bytes that parse to the same Repr.
#![no_main]
use cc_core::wire::ifa::{HopLayout, IfaPacket, IfaRepr, NamespaceProfiles};
use cc_core::wire::UnitsProfile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (u32, &[u8])| {
    let (table, data) = input;
    // Two bits per LNS: none, Standard, TxBytes.
    let mut profiles = NamespaceProfiles { layouts: [None; 16] };
    for (lns, slot) in profiles.layouts.iter_mut().enumerate() {
        *slot = match table >> (2 * lns) & 3 {
            1 => Some(HopLayout::Standard),
            2 | 3 => Some(HopLayout::TxBytes),
            _ => None,
        };
    }
    let Ok(p) = IfaPacket::new_checked(data, &profiles) else {
        return;
    };
    let Ok(repr) = IfaRepr::parse(&p, &profiles) else {
        return;
    };
    let mut buf = [0u8; 8 + cc_core::wire::ifa::MAX_L4_LEN + 32 * cc_core::wire::MAX_HOPS];
    repr.emit(&mut IfaPacket::new_unchecked(&mut buf[..]))
        .expect("a parsed stack re-emits");
    let again =
        IfaPacket::new_checked(&buf[..repr.buffer_len()], &profiles).and_then(|p| IfaRepr::parse(&p, &profiles));
    assert_eq!(again.as_ref(), Ok(&repr));
    let _ = repr.hop_samples(&profiles, &UnitsProfile::default_100g());
});
