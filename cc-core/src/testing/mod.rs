//! Fixtures for tests, in one place: unit tests (`cfg(test)`), integration
//! tests, the on-target tests and fuzz targets (feature `test-support`).
//! Never part of a firmware image's logic.

use crate::event::{Algorithm, FlowParams};
use crate::telemetry::{CounterWidths, HopSample};
use crate::units::{BaseRtt, LinkSpeed, Seq};

/// A small deterministic generator for test traces (Knuth's MMIX
/// constants), the high 31 bits of its 64-bit state per draw.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next draw.
    pub fn draw(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) as u32
    }
}

/// The base RTT the fixtures use: 12 µs (a few hops of 1 µs links at
/// 100 Gb/s; BDP 150 kB).
pub const T_NS: u32 = 12_000;

/// Flow parameters: `algorithm` on a path of `gbps` with base RTT `t_ns`,
/// sequence numbers from 0.
pub fn flow(algorithm: Algorithm, t_ns: u32, gbps: u32) -> FlowParams {
    FlowParams {
        algorithm,
        base_rtt: BaseRtt::from_nanos(t_ns).unwrap_or(BaseRtt::from_nanos(BaseRtt::MIN_NS).expect("in range")),
        line_rate: LinkSpeed::from_gbps(gbps),
        start_seq: Seq(0),
    }
}

/// One 100 Gb/s hop of switch `id`, with 32-bit ns timestamps and byte
/// counters: `ts` ns, `tx` bytes sent, `qlen` bytes queued.
pub fn hop_of(id: u32, ts: u32, tx: u32, qlen: u32) -> HopSample {
    HopSample {
        ts,
        tx,
        qlen_bytes: qlen,
        sojourn_ns: 0,
        bandwidth: LinkSpeed::from_gbps(100),
        id,
        widths: CounterWidths::FULL,
        tx_utilization: crate::telemetry::TxUtilization::NONE,
    }
}

/// [`hop_of`] switch 1.
pub fn hop(ts: u32, tx: u32, qlen: u32) -> HopSample {
    hop_of(1, ts, tx, qlen)
}

pub mod model;
