//! HPCC-PINT's code: parsing either width never panics, what parses
//! re-emits to the same bytes, decoding rises with the code, and the
//! encoder, on any utilization and random draw, gives a code the width
//! holds, one of the two whose decoded values bracket ⌈U·512⌉/512.
#![no_main]
use cc_core::units::Utilization;
use cc_core::wire::pint::{PintCode, PintRepr, PintWidth};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for width in [PintWidth::One, PintWidth::Two] {
        let Ok(view) = PintCode::new_checked(data, width) else {
            assert!(data.len() < width.bytes());
            continue;
        };
        let Ok(repr) = PintRepr::parse(&view) else {
            assert!(view.code() > width.max_code());
            continue;
        };
        let mut buf = [0u8; 2];
        repr.emit(&mut PintCode::new_unchecked(&mut buf[..], width))
            .expect("a parsed code re-emits");
        assert_eq!(&buf[..width.bytes()], &data[..width.bytes()]);
        let u = repr.utilization();
        if repr.code > 0 {
            assert!(width.decode(repr.code - 1).unwrap() < u);
        }
        // The encoder on arbitrary bits of U and of the draw.
        if data.len() >= 12 {
            let bits = u64::from_le_bytes(data[2..10].try_into().unwrap()) >> 20;
            let r = u16::from_le_bytes([data[data.len() - 2], data[data.len() - 1]]);
            let u = Utilization::from_bits(bits);
            let p = width.encode(u, r);
            assert!(p <= width.max_code());
            let n = ((u.to_bits() << 9) + (1 << 24) - 1) >> 24;
            let lo = width.decode(p.saturating_sub(1)).unwrap();
            let at = width.decode(p).unwrap();
            // b^p brackets n from above or below by one step (at the ends,
            // the table's first or last entry).
            let scaled = |x: Utilization| x.to_bits() << 9;
            let n24 = n.max(1) << 24;
            assert!(
                p == width.max_code()
                    || p == 0
                    || (scaled(lo) <= n24 && n24 <= scaled(width.decode(p + 1).unwrap_or(at))),
                "U {} r {r}: code {p}",
                u.to_bits()
            );
        }
    }
});
