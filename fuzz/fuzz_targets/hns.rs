//! The hns driver's parameter blocks: any 16 bytes parse or are refused
//! without a panic; a block that parses writes back to the same bytes;
//! a block the engine takes comes back from its configuration (alpha at
//! the first CNP in its one form, al = 1 and ashift = 0), and a refusal
//! names one of the block's fields or the base configuration's.
#![no_main]
use cc_core::dcqcn::DcqcnConfig;
use cc_core::hns::{DcqcnBlock, LdcpBlock, BLOCK_LEN};
use cc_core::ldcp::LdcpConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: ([u8; BLOCK_LEN], [u8; BLOCK_LEN])| {
    let (ldcp, dcqcn) = input;
    if let Ok(b) = LdcpBlock::parse(&ldcp) {
        assert_eq!(b.to_bytes(), ldcp);
        if let Ok(c) = b.to_config(&LdcpConfig::draft_default()) {
            assert_eq!(c.validate(), Ok(()));
            assert_eq!(LdcpBlock::from_config(&c), Ok(b));
        }
    }
    if let Ok(b) = DcqcnBlock::parse(&dcqcn) {
        assert_eq!(b.to_bytes(), dcqcn);
        match b.to_config(&DcqcnConfig::hpcc_sim()) {
            Ok(c) => {
                assert_eq!(c.validate(), Ok(()));
                let one = DcqcnBlock { al: 1, ashift: 0, ..b };
                // R_AI is a fraction in 2^-24 of max_speed: exact back
                // while a step is under half a Mb/s.
                if b.max_speed < 1 << 23 {
                    assert_eq!(DcqcnBlock::from_config(&c, b.max_speed), Ok(one));
                }
            }
            Err(e) => assert!(!e.field.is_empty()),
        }
    }
});
