//! Firmware event codec: reading, resyncing and decoding never panic; a
//! decoded event or answer re-encodes to a frame that decodes to the same;
//! a decoded configuration re-encodes to a canonical frame of the same
//! configuration (HPCC++'s reciprocal table may list its keys in another
//! order).
#![no_main]
use cc_core::algorithms::AnyConfig;
use cc_core::codec::{
    decode_answer, decode_config, decode_event, encode_answer, encode_config, encode_event, read_frame, resync,
    FrameKind, MAX_FRAME,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while at < data.len() {
        let Ok(frame) = read_frame(&data[at..]) else {
            at += resync(&data[at..]);
            continue;
        };
        at += frame.len;
        let mut buf = [0u8; MAX_FRAME];
        match frame.kind {
            FrameKind::Event => {
                let Ok(ev) = decode_event(&frame) else { continue };
                let n = encode_event(ev.now, &ev.event(), &mut buf).expect("a decoded event re-encodes");
                let again = read_frame(&buf[..n]).and_then(|f| decode_event(&f));
                assert_eq!(again.as_ref(), Ok(&ev));
            }
            FrameKind::Decision | FrameKind::Refusal => {
                let Ok((flow, answer)) = decode_answer(&frame) else {
                    continue;
                };
                let n = encode_answer(flow, &answer, &mut buf).expect("a decoded answer re-encodes");
                let again = read_frame(&buf[..n]).and_then(|f| decode_answer(&f));
                assert_eq!(again, Ok((flow, answer)));
            }
            FrameKind::Config => {
                let Ok(cfg) = decode_config::<AnyConfig>(&frame) else {
                    continue;
                };
                let n = encode_config(&cfg, &mut buf).expect("a decoded config re-encodes");
                // HPCC++'s reciprocal table writes its keys in its slots'
                // order, which hangs on the order they were added in: a frame
                // listing them otherwise is the same table written another
                // way. Its encoding is canonical from the first re-encoding on.
                let again = read_frame(&buf[..n])
                    .and_then(|f| decode_config::<AnyConfig>(&f))
                    .expect("it decodes");
                let mut buf2 = [0u8; MAX_FRAME];
                let m = encode_config(&again, &mut buf2).expect("and re-encodes");
                assert_eq!(&buf2[..m], &buf[..n], "a re-encoded config frame is canonical");
                let original = &data[at - frame.len..at];
                if buf[..n] != *original {
                    let keys = |c: &cc_core::AnyConfig| {
                        let mut s: Vec<u32> = c.hpcc.reciprocals.speeds().map(|b| b.as_mbps()).collect();
                        let mut t: Vec<u32> = c.hpcc.reciprocals.rtts().map(|t| t.as_nanos()).collect();
                        s.sort_unstable();
                        t.sort_unstable();
                        (s, t)
                    };
                    // Only the tables' order may differ: the same keys, and
                    // every other field the same.
                    assert_eq!(keys(&cfg), keys(&again));
                    let mut a = again;
                    a.hpcc.reciprocals = cfg.hpcc.reciprocals;
                    assert_eq!(a, cfg, "only the reciprocal table's order differs");
                }
            }
            FrameKind::Halt => assert!(frame.payload.len() <= MAX_FRAME),
        }
    }
});
