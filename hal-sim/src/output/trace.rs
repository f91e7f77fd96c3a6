//! Event traces: every event the simulator hands to the engine for chosen
//! flows, in the firmware codec (`cc_core::codec`), so the same
//! events can be replayed into the RISC-V firmware and its answers compared
//! with the simulator's (`nic-firmware`, `tests/tests/firmware.rs`).
//!
//! A trace is of one host's engine (a flow has state at its sender and, for
//! Rx-HPCC and probe mode, at its receiver, under the same flow id). It
//! starts with the engine's configuration frame and ends with a halt frame;
//! in between, event frames in the order the engine saw them. Flows of a
//! host share the engine but no per-flow state, so a trace of some of its
//! flows replays to the same answers as the run that recorded it.

use cc_core::codec::{self, MAX_FRAME};
use cc_core::prelude::*;

/// Which engine events: those of `flows` (all if `None`) at `host` (every
/// host if `None`: right only when no flow has state at two hosts, as with
/// LDCP or HPCC++ with telemetry on data packets).
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// The host whose engine, or all.
    pub host: Option<u32>,
    /// The flows, or all.
    pub flows: Option<Vec<u32>>,
}

impl Selection {
    /// Whether events of `flow` at `host` are selected.
    pub fn wants(&self, host: u32, flow: u32) -> bool {
        self.host.is_none_or(|h| h == host) && self.flows.as_ref().is_none_or(|f| f.contains(&flow))
    }
}

/// Which events to record, and the bytes so far.
#[derive(Clone, Debug)]
pub struct TraceRecorder {
    /// What is recorded.
    pub selection: Selection,
    bytes: Vec<u8>,
    events: u64,
}

impl TraceRecorder {
    /// Records the selected events of engines configured with `cfg`;
    /// `Err` if the configuration does not fit the codec's one frame (its
    /// values go in 1 to 5 bytes each, every algorithm's block in one
    /// frame of at most `MAX_FRAME` bytes: the defaults take 243).
    pub fn new(cfg: &AnyConfig, selection: Selection) -> Result<Self, String> {
        let mut buf = [0u8; MAX_FRAME];
        let n = codec::encode_config(cfg, &mut buf)
            .map_err(|e| format!("the engine configuration does not fit one trace frame of {MAX_FRAME} bytes ({e})"))?;
        Ok(TraceRecorder {
            selection,
            bytes: buf[..n].to_vec(),
            events: 0,
        })
    }

    /// Appends one event.
    pub fn record(&mut self, now: Instant, event: &Event<'_>) {
        let mut buf = [0u8; MAX_FRAME];
        // Events from the simulator carry at most MAX_HOPS hops (the
        // telemetry formats enforce it), so they always encode.
        if let Ok(n) = codec::encode_event(now, event, &mut buf) {
            self.bytes.extend_from_slice(&buf[..n]);
            self.events += 1;
        }
    }

    /// Events recorded.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The trace: configuration, events, halt.
    pub fn finish(mut self) -> Vec<u8> {
        let mut buf = [0u8; MAX_FRAME];
        let n = codec::encode_halt(&mut buf).expect("a halt frame fits");
        self.bytes.extend_from_slice(&buf[..n]);
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario sets the engine's configuration through the algorithms'
    /// tables alone, each checked against its ranges: with the defaults,
    /// and with every table parameter at the largest of a ladder of values
    /// (u32::MAX down to 1) that it keeps and its algorithm accepts, the
    /// configuration fits a trace's frame.
    #[test]
    fn every_configuration_a_scenario_can_set_fits_a_frame() {
        let all = || Selection {
            host: None,
            flows: None,
        };
        assert!(TraceRecorder::new(&AnyConfig::DEFAULT, all()).is_ok());
        let mut big = AnyConfig::DEFAULT;
        for a in Algorithm::ALL {
            for i in 0..a.params().count() {
                for v in [u32::MAX, 1 << 30, 1 << 28, 1 << 24, 1 << 20, 65_535, 255, 1] {
                    let mut c = big;
                    if c.set_param(a, i, v) && c.get_param(a, i) == Some(v) && c.invalid_field(a).is_none() {
                        big = c;
                        break;
                    }
                }
            }
        }
        assert_ne!(big, AnyConfig::DEFAULT);
        let t = TraceRecorder::new(&big, all()).expect("fits one frame");
        assert!(t.bytes.len() <= MAX_FRAME);
    }
}
