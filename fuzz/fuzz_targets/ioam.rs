//! IOAM trace option in an IPv6 hop-by-hop option: parsing never panics,
//! and what parses re-emits to bytes that parse to the same Repr. The
//! hop-by-hop search never panics either.
#![no_main]
use cc_core::wire::ioam::{find_in_hop_by_hop, IoamOption, IoamRepr};
use cc_core::wire::{PortSpeedStack, UnitsProfile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = find_in_hop_by_hop(data);
    let Ok(opt) = IoamOption::new_checked(data) else { return };
    let Ok(repr) = IoamRepr::parse(&opt) else { return };
    let mut buf = [0u8; 300];
    repr.emit(&mut IoamOption::new_unchecked(&mut buf[..]))
        .expect("a parsed option re-emits");
    let len = repr.buffer_len();
    let opt2 = IoamOption::new_checked(&buf[..len]).expect("emitted option checks");
    let again = IoamRepr::parse(&opt2).expect("emitted option parses");
    assert_eq!(again, repr);
    let _ = repr.hop_samples(&UnitsProfile::default_100g());
});
