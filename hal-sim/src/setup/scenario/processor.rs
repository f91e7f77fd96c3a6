//! A NIC's congestion-control processor as the run models it: the
//! scenario's `[nic.cc_processor]` with its costs resolved, either given
//! or read from the firmware benchmark's table
//! (`nic-firmware/scripts/bench.sh --json`, whose checked-in copy is
//! `nic-firmware/bench.json`).

use std::borrow::Cow;
use std::path::Path;

use cc_core::event::Algorithm;
use serde::Deserialize;

use super::{CcProcessorCfg, CoalescingCfg, CoreKind, CostsCfg};
use crate::model::nic::processor::{Coalescing, Costs, Params};
use crate::run::event::Ps;

/// The benchmark's JSON: a row per event, a column per core.
#[derive(Deserialize)]
struct Table {
    rows: Vec<Row>,
}

#[derive(Deserialize)]
struct Row {
    event: String,
    rv32imac: Option<Cell>,
    rv64imac: Option<Cell>,
    rv64imac_zbb: Option<Cell>,
}

#[derive(Deserialize)]
struct Cell {
    mean: f64,
}

/// The benchmark rows each algorithm's events cost, by event: an ACK,
/// HPCC++ ACKs of two and five hops (the general walk's, whose cost a
/// hop past the second is a third of their difference), the engine's
/// timer, a CNP, a probe reply; `None` takes the ACK's.
struct Rows {
    ack: Cow<'static, str>,
    ack_2_and_5_hops: Option<(&'static str, &'static str)>,
    /// Whether a one-hop ACK is the general walk's, one hop's step below
    /// the 2-hop row, rather than the 1-hop row: the Rx-HPCC receiver has
    /// no path of its own for one hop, as the sender has.
    one_hop_by_walk: bool,
    timer: Option<&'static str>,
    cnp: Option<&'static str>,
    probe_response: Option<&'static str>,
}

fn rows(algorithm: Algorithm) -> Rows {
    match algorithm {
        Algorithm::Hpcc | Algorithm::HpccReceiver => Rows {
            ack: Cow::Borrowed("HPCC++ ACK, 1 hop"),
            ack_2_and_5_hops: Some(("HPCC++ ACK, 2 hops", "HPCC++ ACK, 5 hops")),
            one_hop_by_walk: algorithm == Algorithm::HpccReceiver,
            timer: None,
            cnp: None,
            probe_response: Some("HPCC++ probe response"),
        },
        Algorithm::Ldcp | Algorithm::LdcpRate => Rows {
            ack: Cow::Borrowed("LDCP ACK (PAWA)"),
            ack_2_and_5_hops: None,
            one_hop_by_walk: false,
            timer: Some("LDCP timer (cw < 1)"),
            cnp: None,
            probe_response: None,
        },
        // Every other algorithm of the registry: the rows its module names
        // (cc-core's `AlgorithmConfig::ACK_BENCH` and `CNP_BENCH`, which
        // nic-firmware's benchmark measures). One without an ACK row
        // answers ACKs and timers with what its CNP costs (DCQCN's engine,
        // whose one row is its CNP's), else "<title> ACK".
        _ => Rows {
            ack: match (algorithm.ack_bench(), algorithm.cnp_bench()) {
                (Some(b), _) => Cow::Borrowed(b.row),
                (None, Some(c)) => Cow::Borrowed(c.row),
                (None, None) => Cow::Owned(format!("{} ACK", algorithm.title())),
            },
            ack_2_and_5_hops: None,
            one_hop_by_walk: false,
            timer: None,
            cnp: algorithm.cnp_bench().map(|c| c.row),
            probe_response: None,
        },
    }
}

/// The costs in a benchmark table's `core` column for `algorithm`'s events.
fn from_table(text: &str, core: CoreKind, algorithm: Algorithm) -> Result<Costs, String> {
    let table: Table = serde_json::from_str(text).map_err(|e| format!("not a benchmark table: {e}"))?;
    let cell = |event: &str| -> Result<u32, String> {
        let row = table
            .rows
            .iter()
            .find(|r| r.event == event)
            .ok_or_else(|| format!("has no row {event:?}"))?;
        let cell = match core {
            CoreKind::Rv32imac => &row.rv32imac,
            CoreKind::Rv64imac => &row.rv64imac,
            CoreKind::Rv64imacZbb => &row.rv64imac_zbb,
        };
        let mean = cell
            .as_ref()
            .ok_or_else(|| format!("row {event:?} has no {} column", core.key()))?
            .mean;
        if !(mean >= 1.0 && mean <= u32::MAX as f64) {
            return Err(format!("row {event:?}: {} instructions is no cost", mean));
        }
        Ok(mean.round() as u32)
    };
    let r = rows(algorithm);
    let one_hop = cell(&r.ack)?;
    let (ack_2_hops, ack_per_hop) = match r.ack_2_and_5_hops {
        Some((two, five)) => {
            let two = cell(two)?;
            (two, cell(five)?.saturating_sub(two) / 3)
        }
        None => (one_hop, 0),
    };
    let ack = if r.one_hop_by_walk {
        ack_2_hops.saturating_sub(ack_per_hop)
    } else {
        one_hop
    };
    let or_ack = |row: Option<&str>| row.map_or(Ok(ack), cell);
    Ok(Costs {
        ack,
        ack_2_hops,
        ack_per_hop,
        timer: or_ack(r.timer)?,
        cnp: or_ack(r.cnp)?,
        probe_response: or_ack(r.probe_response)?,
        other: ack,
    })
}

fn given(c: &CostsCfg) -> Costs {
    let per_hop = c.ack_per_hop.unwrap_or(0);
    Costs {
        ack: c.ack,
        ack_2_hops: c.ack.saturating_add(per_hop),
        ack_per_hop: per_hop,
        timer: c.timer.unwrap_or(c.ack),
        cnp: c.cnp.unwrap_or(c.ack),
        probe_response: c.probe_response.unwrap_or(c.ack),
        other: c.other.unwrap_or(c.ack),
    }
}

/// The processor of `cfg` for NICs whose senders run `algorithm`; `dir`
/// resolves `costs_from`. A refusal names its field.
pub fn params(cfg: &CcProcessorCfg, algorithm: Algorithm, dir: &Path) -> Result<Params, (&'static str, String)> {
    let costs = match (&cfg.costs, &cfg.costs_from, cfg.core) {
        (Some(c), _, _) => given(c),
        (None, Some(file), Some(core)) => {
            let path = dir.join(file);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| ("nic.cc_processor.costs_from", format!("{}: {e}", path.display())))?;
            from_table(&text, core, algorithm)
                .map_err(|m| ("nic.cc_processor.costs_from", format!("{}: {m}", path.display())))?
        }
        _ => return Err(("nic.cc_processor", "no costs (costs_from and core, or costs)".into())),
    };
    let coalescing = match cfg.coalescing {
        CoalescingCfg::None => Coalescing::None,
        CoalescingCfg::Latest => Coalescing::Latest,
        CoalescingCfg::Thinning => Coalescing::Thinning {
            every_acks: cfg.thin_every_acks.map_or(4, |c| c.0),
            interval: cfg.thin_interval_ns.map_or(Ps::ZERO, |t| Ps::from_ns(t.0)),
        },
    };
    Ok(Params {
        cores: cfg.cores.0,
        ps_per_instruction: 1000.0 / (cfg.clock_ghz.0 * cfg.ipc.0),
        queue_depth: cfg.queue_depth.0,
        coalescing,
        costs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of a benchmark table as bench.sh writes it.
    const TABLE: &str = r#"{"rows": [
      {"event": "HPCC++ ACK, 1 hop", "rv32imac": {"mean": 559, "max": 583, "divisions": 0.5},
       "rv64imac": {"mean": 478, "max": 500, "divisions": 0.5}},
      {"event": "HPCC++ ACK, 2 hops", "rv32imac": {"mean": 770, "max": 793, "divisions": 0.5},
       "rv64imac": {"mean": 669, "max": 691, "divisions": 0.5}},
      {"event": "HPCC++ ACK, 5 hops", "rv32imac": {"mean": 1444, "max": 1469, "divisions": 0.5},
       "rv64imac": {"mean": 1188, "max": 1211, "divisions": 0.5}},
      {"event": "HPCC++ probe response", "rv32imac": {"mean": 588, "max": 596, "divisions": 0.5}}
    ]}"#;

    #[test]
    fn costs_come_from_the_benchmarks_column() {
        let c = from_table(TABLE, CoreKind::Rv32imac, Algorithm::Hpcc).unwrap();
        // One hop its own row; (1444 − 770) / 3 = 224.7 a hop past the
        // second, rounded down.
        assert_eq!(
            (c.ack, c.ack_2_hops, c.ack_per_hop, c.probe_response, c.timer),
            (559, 770, 224, 588, 559)
        );
        // The Rx-HPCC receiver's one hop is the general walk's, a step
        // below two hops: 770 − 224.
        let c = from_table(TABLE, CoreKind::Rv32imac, Algorithm::HpccReceiver).unwrap();
        assert_eq!((c.ack, c.ack_2_hops, c.ack_per_hop), (546, 770, 224));
        let e = from_table(TABLE, CoreKind::Rv64imac, Algorithm::Hpcc).unwrap_err();
        assert!(e.contains("\"HPCC++ probe response\" has no rv64imac column"), "{e}");
        let e = from_table(TABLE, CoreKind::Rv32imac, Algorithm::Ldcp).unwrap_err();
        assert!(e.contains("no row \"LDCP ACK (PAWA)\""), "{e}");
        assert!(from_table("{}", CoreKind::Rv32imac, Algorithm::Hpcc).is_err());
    }
}
