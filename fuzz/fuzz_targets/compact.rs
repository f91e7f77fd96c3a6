//! Compact HPCC stack: parsing never panics, reading the samples straight
//! from the records gives what parse then samples give, what parses re-emits to
//! bytes that parse to the same Repr; a switch's in-place push never panics
//! on any buffer, and on a stack that parses writes what parse, push and
//! emit would.
#![no_main]
use cc_core::wire::compact::{CompactHop, CompactRepr, CompactStack, CompactUnits, SpeedCode};
use cc_core::wire::Hops;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let hop = CompactHop {
        speed: SpeedCode::G100,
        ts: data.len() as u32,
        tx: 0x12345,
        qlen: 7,
    };
    let mut pushed = data.to_vec();
    let push = CompactStack::new_unchecked(&mut pushed[..]).push_hop(&hop);
    let units = CompactUnits {
        tx_unit_bytes: data.len() as u16,
        qlen_unit_bytes: data.len() as u32,
    };
    // A NIC reads an ACK's stack straight into its samples, whatever the
    // bytes: the same answer as parse then samples, errors included.
    let mut hops = Hops::new();
    let direct = CompactStack::new_unchecked(data)
        .hop_samples_into(&units, &mut hops)
        .map(|()| hops);
    let two_steps = CompactRepr::parse(&CompactStack::new_unchecked(data)).map(|r| r.hop_samples(&units));
    assert_eq!(direct, two_steps);
    let Ok(stack) = CompactStack::new_checked(data) else {
        return;
    };
    let Ok(repr) = CompactRepr::parse(&stack) else { return };
    let mut buf = [0u8; 2 + 8 * cc_core::wire::MAX_HOPS];
    repr.emit(&mut CompactStack::new_unchecked(&mut buf[..]))
        .expect("a parsed stack re-emits");
    let again = CompactStack::new_checked(&buf[..repr.buffer_len()]).and_then(|s| CompactRepr::parse(&s));
    assert_eq!(again.as_ref(), Ok(&repr));
    let _ = repr.hop_samples(&units);
    // The push against parse, push and emit, where the buffer had room.
    if let Ok(true) = push {
        let mut r = repr.clone();
        assert!(r.hops.push(hop).is_ok());
        let mut buf = data.to_vec();
        r.emit(&mut CompactStack::new_unchecked(&mut buf[..]))
            .expect("room was checked");
        assert_eq!(pushed, buf);
    }
});
