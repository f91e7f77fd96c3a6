//! Where flows come from: an explicit list, a CSV file, an N-to-1 incast,
//! or Poisson arrivals with sizes from the HPCC evaluation's CDFs.

use std::path::Path;

use rand_chacha::rand_core::Rng;
use rand_chacha::ChaCha8Rng;

use crate::setup::connection_matrix::{self, Triggers};
use crate::setup::scenario::{Distribution, FlowSpec, Flows, ScenarioError, Workload};

const WEBSEARCH: &str = include_str!("../../data/websearch_flow_sizes.csv");
const FB_HADOOP: &str = include_str!("../../data/fb_hadoop_flow_sizes.csv");

/// A piecewise-linear CDF of flow sizes.
#[derive(Clone, Debug)]
pub struct SizeCdf {
    /// (bytes, cumulative fraction) points, increasing.
    pub points: Vec<(f64, f64)>,
}

impl SizeCdf {
    /// Parses "bytes,percent" lines (# comments allowed).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut points = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut it = line.split(',');
            let (Some(b), Some(p), None) = (it.next(), it.next(), it.next()) else {
                return Err(format!("line {}: expected bytes,percent", i + 1));
            };
            let b: f64 = b.trim().parse().map_err(|_| format!("line {}: bad bytes", i + 1))?;
            let p: f64 = p.trim().parse().map_err(|_| format!("line {}: bad percent", i + 1))?;
            if !(b.is_finite() && b >= 0.0 && (0.0..=100.0).contains(&p)) {
                return Err(format!("line {}: bytes ≥ 0 and a percent in 0 ..= 100", i + 1));
            }
            points.push((b, p / 100.0));
        }
        if points.len() < 2
            || points.windows(2).any(|w| w[1].0 < w[0].0 || w[1].1 < w[0].1)
            || points.last().map(|p| p.1) != Some(1.0)
        {
            return Err("points must increase and end at 100 %".into());
        }
        Ok(SizeCdf { points })
    }

    /// One of the built-in distributions.
    pub fn builtin(d: Distribution) -> Self {
        Self::parse(match d {
            Distribution::Websearch => WEBSEARCH,
            Distribution::FbHadoop => FB_HADOOP,
        })
        .expect("built-in CDFs are well formed")
    }

    /// Inverse CDF at u in [0, 1), at least 1 byte. Below the first
    /// point's fraction, the first point's size (a CDF that starts above
    /// 0 % starts with that many flows of that size).
    pub fn sample(&self, u: f64) -> u64 {
        for w in self.points.windows(2) {
            let ((b0, p0), (b1, p1)) = (w[0], w[1]);
            if u <= p1 {
                let f = if p1 > p0 { ((u - p0) / (p1 - p0)).max(0.0) } else { 0.0 };
                return (b0 + f * (b1 - b0)).round().max(1.0) as u64;
            }
        }
        self.points.last().map_or(1, |p| p.0 as u64)
    }

    /// Mean flow size in bytes (exact for the piecewise-linear CDF).
    pub fn mean(&self) -> f64 {
        self.points
            .windows(2)
            .map(|w| (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0)
            .sum()
    }
}

/// A uniform sample in [0, 1).
pub fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// The flows of a workload on `hosts` hosts with links of `link_bps`,
/// and the triggers that start some of them (a connection matrix's; none
/// for the other kinds).
pub fn flows(
    w: &Workload,
    hosts: u32,
    link_bps: u64,
    rng: &mut ChaCha8Rng,
    scenario_dir: &Path,
    file: &str,
) -> Result<(Vec<FlowSpec>, Triggers), ScenarioError> {
    let err = |field: &str, message: String| ScenarioError {
        file: file.into(),
        line: None,
        field: field.into(),
        message,
    };
    let check = |f: &FlowSpec| -> Result<(), ScenarioError> {
        if f.src >= hosts || f.dst >= hosts || f.src == f.dst {
            return Err(err(
                "workload.flows",
                format!("flow {}→{}: hosts are 0..{} and src ≠ dst", f.src, f.dst, hosts),
            ));
        }
        if f.bytes == 0 || f.bytes >= 1 << 31 {
            return Err(err(
                "workload.flows",
                format!("flow {}→{}: bytes must be in 1 ..< 2^31", f.src, f.dst),
            ));
        }
        Ok(())
    };
    let mut triggers = Triggers::default();
    let out = match w.flows {
        Flows::List(ref flows) => flows.clone(),
        Flows::ConnectionMatrix { ref path } => {
            let path = scenario_dir.join(path);
            let name = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|e| err("workload.path", format!("{name}: {e}")))?;
            let m = connection_matrix::parse(&text, &name)?;
            if m.nodes > hosts {
                return Err(err(
                    "workload.path",
                    format!("{name} has {} nodes; the topology has {hosts} hosts", m.nodes),
                ));
            }
            triggers = m.triggers;
            m.flows
        }
        Flows::Incast {
            receiver,
            bytes,
            start_ns,
        } => (0..hosts)
            .filter(|&h| h != receiver)
            .map(|src| FlowSpec {
                src,
                dst: receiver,
                bytes: bytes.0,
                start_ns,
                dport: 100,
            })
            .collect(),
        Flows::Ns3 { ref path } => ns3_flows(&scenario_dir.join(path), &check)?,
        Flows::Csv { ref path } => {
            let path = scenario_dir.join(path);
            let text =
                std::fs::read_to_string(&path).map_err(|e| err("workload.path", format!("{}: {e}", path.display())))?;
            csv_flows(&text, &path.display().to_string(), &check)?
        }
        Flows::Cdf {
            distribution,
            load,
            count,
        } => {
            let cdf = SizeCdf::builtin(distribution);
            let load = load.0.max(1e-6);
            let n = count.0;
            // Each host link offered `load`: aggregate arrival rate
            // λ = load · hosts · link_bps / (8 · mean size), in flows per ns.
            let lambda = load * hosts as f64 * link_bps as f64 / 8.0 / cdf.mean() / 1e9;
            let mut t = 0.0f64;
            let mut v = Vec::with_capacity(n as usize);
            for _ in 0..n {
                t += -(1.0 - unit(rng)).ln() / lambda;
                let src = (rng.next_u64() % hosts as u64) as u32;
                let mut dst = (rng.next_u64() % (hosts as u64 - 1)) as u32;
                if dst >= src {
                    dst += 1;
                }
                v.push(FlowSpec {
                    src,
                    dst,
                    bytes: cdf.sample(unit(rng)).min((1 << 31) - 1),
                    start_ns: t as u64,
                    dport: 100,
                });
            }
            v
        }
    };
    out.iter().try_for_each(check)?;
    Ok((out, triggers))
}

/// Reads a flow file of the HPCC reference simulator at `path`
/// ([`ns3_flow_text`]).
fn ns3_flows(
    path: &Path,
    check: &dyn Fn(&FlowSpec) -> Result<(), ScenarioError>,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        line: None,
        field: "workload.path".into(),
        message: e.to_string(),
    })?;
    ns3_flow_text(&text, &file, check)
}

/// `check` of a flow read from `file` at `line`, its refusal named there.
fn check_at(
    check: &dyn Fn(&FlowSpec) -> Result<(), ScenarioError>,
    f: &FlowSpec,
    file: &str,
    line: usize,
) -> Result<(), ScenarioError> {
    check(f).map_err(|e| ScenarioError {
        file: file.into(),
        line: Some(line),
        ..e
    })
}

/// A flow list in CSV (`kind = "csv"`): `src,dst,bytes,start_ns` lines, a
/// header line `src…` and `#` comments allowed; each flow as `check`
/// takes it. Errors name `file` and the line.
pub fn csv_flows(
    text: &str,
    file: &str,
    check: &dyn Fn(&FlowSpec) -> Result<(), ScenarioError>,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let mut v = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') || (i == 0 && l.starts_with("src")) {
            continue;
        }
        let fields: Vec<&str> = l.split(',').map(str::trim).collect();
        let bad = || ScenarioError {
            file: file.into(),
            line: Some(i + 1),
            field: "src,dst,bytes,start_ns".into(),
            message: format!("expected four unsigned integers, got {l:?}"),
        };
        let [src, dst, bytes, start] = fields[..] else {
            return Err(bad());
        };
        let (Ok(src), Ok(dst), Ok(bytes), Ok(start_ns)) = (src.parse(), dst.parse(), bytes.parse(), start.parse())
        else {
            return Err(bad());
        };
        let f = FlowSpec {
            src,
            dst,
            bytes,
            start_ns,
            dport: 100,
        };
        check_at(check, &f, file, i + 1)?;
        v.push(f);
    }
    Ok(v)
}

/// The text of a flow file of the HPCC reference simulator: the flow
/// count N on the first line, then N lines `src dst pg dport bytes
/// start_s` (start in seconds); each flow as `check` takes it. Errors name
/// `file` and the line.
pub fn ns3_flow_text(
    text: &str,
    file: &str,
    check: &dyn Fn(&FlowSpec) -> Result<(), ScenarioError>,
) -> Result<Vec<FlowSpec>, ScenarioError> {
    let at = |line: usize, message: String| ScenarioError {
        file: file.into(),
        line: Some(line),
        field: "src dst pg dport bytes start_s".into(),
        message,
    };
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let Some((i, first)) = lines.next() else {
        return Err(at(1, "empty file: the first line is the flow count".into()));
    };
    let n: usize = first
        .trim()
        .parse()
        .map_err(|_| at(i + 1, format!("the first line is the flow count, got {first:?}")))?;
    // The count is the file's word, not yet its lines: room for a few
    // thousand at first, the rest as they come.
    let mut v = Vec::with_capacity(n.min(1 << 12));
    for (i, l) in lines.by_ref().take(n) {
        let f: Vec<&str> = l.split_whitespace().collect();
        let bad = || at(i + 1, format!("expected src dst pg dport bytes start_s, got {l:?}"));
        let [src, dst, _pg, dport, bytes, start] = f[..] else {
            return Err(bad());
        };
        let (Ok(src), Ok(dst), Ok(dport), Ok(bytes), Ok(start)) = (
            src.parse(),
            dst.parse(),
            dport.parse(),
            bytes.parse(),
            start.parse::<f64>(),
        ) else {
            return Err(bad());
        };
        if !(start.is_finite() && start >= 0.0) {
            return Err(bad());
        }
        let spec = FlowSpec {
            src,
            dst,
            bytes,
            start_ns: (start * 1e9).round() as u64,
            dport,
        };
        check_at(check, &spec, file, i + 1)?;
        v.push(spec);
    }
    if v.len() < n {
        return Err(at(
            text.lines().count(),
            format!("the file announces {n} flows and has {}", v.len()),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_chacha::rand_core::SeedableRng;

    #[test]
    fn cdfs_parse_and_sample_within_range() {
        for d in [Distribution::Websearch, Distribution::FbHadoop] {
            let c = SizeCdf::builtin(d);
            assert_eq!(c.sample(0.0), 1);
            assert!(c.sample(0.999_999) <= c.points.last().unwrap().0 as u64);
            assert!(c.mean() > 10_000.0);
        }
        // A CDF that starts above 0 %: that many flows of its first size.
        let c = SizeCdf::parse("100,50\n200,100").unwrap();
        assert_eq!((c.sample(0.0), c.sample(0.5), c.sample(0.75)), (100, 100, 150));
        for bad in ["0,0\nNaN,100", "0,0\n100,inf", "-5,0\n100,100", "0,0\n100,150"] {
            assert!(SizeCdf::parse(bad).is_err(), "{bad}");
        }
        // FB_Hadoop: 50 % of flows are at most 700 bytes.
        assert_eq!(SizeCdf::builtin(Distribution::FbHadoop).sample(0.5), 700);
    }

    #[test]
    fn poisson_load_matches_target() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let w = Workload {
            flows: Flows::Cdf {
                distribution: Distribution::Websearch,
                load: crate::setup::scenario::Prob(0.5),
                count: crate::setup::scenario::FlowCount(20_000),
            },
            on_off: None,
        };
        let (f, _) = flows(&w, 16, 100_000_000_000, &mut rng, Path::new("."), "t").unwrap();
        let bytes: u64 = f.iter().map(|x| x.bytes).sum();
        let span_ns = f.last().unwrap().start_ns as f64;
        let offered = bytes as f64 * 8.0 / span_ns / (16.0 * 100.0); // per host, Gb/s over 100
        assert!((offered - 0.5).abs() < 0.05, "offered load {offered}");
    }
}
