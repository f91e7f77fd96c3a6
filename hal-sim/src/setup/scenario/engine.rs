//! The engine configuration a scenario asks for: cc-core's configuration
//! from the scenario's `[cc]` table (`cc.rs`).

use cc_core::prelude::*;

use super::{Cc, CcCfg, HpccCfg, HpccMode, LdcpCfg, Wai};

/// A scenario's decimal ratio, to a billionth, rounded to nearest.
fn ratio(x: f64) -> Result<Fraction, String> {
    Fraction::ratio((x * 1e9).round() as u32, 1_000_000_000).ok_or_else(|| format!("{x} is not in [0, 1]"))
}

/// cc-core's configuration for every NIC; `mtu` is the data payload, the
/// unit LDCP counts its window in. The algorithm not chosen keeps its
/// defaults (a NIC's mixed table holds both), and so does the fast start
/// of the rate variant, which has none.
pub fn engine_config(c: &CcCfg, mtu: u32) -> Result<AnyConfig, String> {
    let (h, l, fast_start) = match &c.algorithm {
        Cc::Hpcc(h) => (h.clone(), LdcpCfg::default(), true),
        Cc::Ldcp { params, fast_start } => (HpccCfg::default(), params.clone(), *fast_start),
        Cc::LdcpRate(l) => (HpccCfg::default(), l.clone(), true),
        Cc::Registered { .. } => (HpccCfg::default(), LdcpCfg::default(), true),
    };
    let hpcc = HpccConfig {
        eta: ratio(h.eta.0)?,
        max_stage: h.max_stage.0,
        additive_increase: match h.additive_increase {
            Wai::RateMbps(m) => AdditiveIncrease::RateTimesRtt(Rate::from_bps(m as u64 * 1_000_000)),
            Wai::Flows(n) => AdditiveIncrease::PerFlows { n },
        },
        w_min: Window::from_bytes(h.w_min_bytes.max(1)),
        queue_signal: if h.sojourn {
            QueueSignal::Sojourn
        } else {
            QueueSignal::Length
        },
        telemetry: match h.mode {
            HpccMode::Probe => TelemetrySource::Probe { timeout_rtts: 4 },
            HpccMode::Sender | HpccMode::RxHpcc => TelemetrySource::Inband,
        },
        reciprocals: Reciprocals::compact(),
    };
    let ldcp = LdcpConfig {
        mtu: Mtu::new(mtu)
            .ok_or_else(|| format!("an MTU of {mtu} B is outside LDCP's {} ..= {} B", Mtu::MIN, Mtu::MAX))?,
        alpha: ratio(l.alpha.0)?,
        beta: ratio(l.beta.0)?,
        gamma: ratio(l.gamma.0)?,
        fast_start: if fast_start {
            FastStart::Enabled
        } else {
            FastStart::Disabled
        },
        probe_timeout_rtts: 4,
    };
    // A registered algorithm's own field is set, its parameters that follow
    // the payload to the payload unless the scenario gave them; every other
    // field is its default.
    let base = match &c.algorithm {
        Cc::Registered {
            algorithm,
            engine,
            given,
            ..
        } => {
            let mut e = **engine;
            for (i, p) in algorithm.params().enumerate() {
                if p.follows_payload && given >> (i & 63) & 1 == 0 {
                    e.set_param(*algorithm, i, mtu);
                }
            }
            e
        }
        _ => AnyConfig::DEFAULT,
    };
    let cfg = AnyConfig { hpcc, ldcp, ..base };
    cfg.hpcc.validate().map_err(|e| format!("HPCC++ parameters: {e}"))?;
    cfg.ldcp.validate().map_err(|e| format!("LDCP parameters: {e}"))?;
    if let Cc::Registered { algorithm: a, .. } = &c.algorithm {
        if let Some(f) = cfg.invalid_field(*a) {
            let p = a.params().find(|p| p.field == f);
            return Err(match p {
                Some(p) => format!("{} parameters: {} must be {}", a.title(), p.name, p.range),
                None => format!("{} parameters: {f} out of range", a.title()),
            });
        }
    }
    Ok(cfg)
}
