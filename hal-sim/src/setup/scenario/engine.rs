//! The engine configuration a scenario asks for: cc-core's configuration
//! from the scenario's `[cc]` table (`cc.rs`).

use cc_core::prelude::*;

use super::{Cc, CcCfg, DcqcnCfg, DcqcnPreset, HpccCfg, HpccMode, LdcpCfg, Wai};

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
        Cc::Dcqcn(_) | Cc::Registered { .. } => (HpccCfg::default(), LdcpCfg::default(), true),
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
    let cfg = AnyConfig {
        hpcc,
        ldcp,
        dcqcn: match &c.algorithm {
            Cc::Dcqcn(d) => dcqcn_config(d)?,
            _ => DcqcnConfig::default(),
        },
        ..base
    };
    cfg.hpcc.validate().map_err(|e| format!("HPCC++ parameters: {e}"))?;
    cfg.ldcp.validate().map_err(|e| format!("LDCP parameters: {e}"))?;
    cfg.dcqcn.validate().map_err(|e| format!("DCQCN parameters: {e}"))?;
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

/// A scenario's DCQCN parameters over its preset's (checked with the rest
/// of the configuration by [`engine_config`]).
fn dcqcn_config(d: &DcqcnCfg) -> Result<DcqcnConfig, String> {
    let mut q = match d.preset {
        DcqcnPreset::HpccSim => DcqcnConfig::hpcc_sim(),
        DcqcnPreset::Paper => DcqcnConfig::paper(),
    };
    let ns = |us: f64| {
        let ns = (us * 1000.0).round();
        if (0.0..=(1u64 << 30) as f64).contains(&ns) {
            Ok(ns as u32)
        } else {
            Err(format!("{us} µs is out of range"))
        }
    };
    if let Some(g) = d.g {
        q.g = ratio(g.0)?;
    }
    if let Some(t) = d.ta_us {
        q.alpha_interval_ns = ns(t)?;
    }
    if let Some(t) = d.td_us {
        q.decrease_interval_ns = ns(t)?;
    }
    if let Some(t) = d.ti_us {
        q.increase_interval_ns = ns(t)?;
    }
    if let Some(f) = d.fast_recovery {
        q.fast_recovery_steps = f;
    }
    if let Some(r) = d.rate_ai {
        q.rate_ai = ratio(r.0)?;
    }
    if let Some(r) = d.rate_hai {
        q.rate_hai = ratio(r.0)?;
    }
    if let Some(m) = d.min_rate_mbps {
        q.min_rate_mbps = m;
    }
    if let Some(b) = d.byte_counter {
        q.byte_counter = b;
    }
    if let Some(c) = d.clamp_target {
        q.clamp_target = c;
    }
    if let Some(t) = d.cnp_interval_us {
        q.cnp_interval_ns = ns(t)?;
    }
    Ok(q)
}
