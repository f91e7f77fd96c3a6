//! The engine configuration a scenario asks for.

use cc_core::prelude::*;

use crate::scenario::{CcCfg, HpccMode};

/// cc-core's configuration for every NIC; `mtu` is the data payload, the
/// unit LDCP counts its window in.
pub fn engine_config(c: &CcCfg, mtu: u32) -> Result<AnyConfig, String> {
    let ratio = |x: f64| {
        Fraction::from_bits((x * (1u64 << 24) as f64).round() as u32).ok_or_else(|| format!("{x} is not in [0, 1]"))
    };
    let hpcc = HpccConfig {
        eta: ratio(c.eta.0)?,
        max_stage: c.max_stage.0,
        additive_increase: match (c.wai_mbps, c.wai_flows) {
            (Some(m), _) => AdditiveIncrease::RateTimesRtt(Rate::from_bps(m as u64 * 1_000_000)),
            (None, Some(n)) => AdditiveIncrease::PerFlows { n },
            (None, None) => AdditiveIncrease::PerFlows { n: 64 },
        },
        w_min: Window::from_bytes(c.w_min_bytes.max(1)),
        queue_signal: if c.sojourn {
            QueueSignal::Sojourn
        } else {
            QueueSignal::Length
        },
        telemetry: match c.mode {
            HpccMode::Probe => TelemetrySource::Probe { timeout_rtts: 4 },
            HpccMode::Sender | HpccMode::RxHpcc => TelemetrySource::Inband,
        },
    };
    let ldcp = LdcpConfig {
        mtu,
        alpha: ratio(c.alpha.0)?,
        beta: ratio(c.beta.0)?,
        gamma: ratio(c.gamma.0)?,
        fast_start: if c.fast_start {
            FastStart::Enabled
        } else {
            FastStart::Disabled
        },
        probe_timeout_rtts: 4,
    };
    let cfg = AnyConfig { hpcc, ldcp };
    cfg.hpcc.validate().map_err(|e| format!("HPCC++ parameters: {e}"))?;
    cfg.ldcp.validate().map_err(|e| format!("LDCP parameters: {e}"))?;
    Ok(cfg)
}
