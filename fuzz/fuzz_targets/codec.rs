//! Firmware event codec: reading, resyncing and decoding never panic; a
//! decoded event, answer or configuration re-encodes to a frame that decodes to the same.
#![no_main]
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
                let Ok(cfg) = decode_config(&frame) else { continue };
                let n = encode_config(&cfg, &mut buf).expect("a decoded config re-encodes");
                assert_eq!(&buf[..n], &data[at - frame.len..at], "config frames are canonical");
            }
            FrameKind::Halt => assert!(frame.payload.len() <= MAX_FRAME),
        }
    }
});
