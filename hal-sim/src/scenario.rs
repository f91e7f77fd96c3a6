//! Scenario files (TOML). Every field is checked while it is read, so a bad
//! file is refused with its path, line and field:
//!
//! ```text
//! scenarios/x.toml:7: topology.link_gbps: must be in 1 ..= 1600 (got 0)
//! ```

use std::fmt;
use std::path::Path;

use serde::Deserialize;

use crate::telemetry::TelFormat;

/// A number that must lie in a range; refused while parsing otherwise.
macro_rules! ranged {
    ($name:ident, $t:ty, $lo:expr, $hi:expr, $doc:literal) => {
        #[doc = $doc]
        #[derive(Clone, Copy, Debug, PartialEq, PartialOrd, serde::Serialize)]
        pub struct $name(pub $t);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let v = <$t>::deserialize(d)?;
                if !(($lo as $t)..=($hi as $t)).contains(&v) {
                    return Err(serde::de::Error::custom(format!(
                        "must be in {} ..= {} (got {})",
                        $lo as $t, $hi as $t, v
                    )));
                }
                Ok($name(v))
            }
        }
    };
}

ranged!(Gbps, u32, 1, 1600, "Link speed in Gb/s.");
ranged!(DelayNs, u64, 0, 1_000_000_000, "A propagation delay in ns.");
ranged!(Count, u32, 1, 100_000, "A count of hosts, switches or flows.");
ranged!(Bytes, u64, 0, 1u64 << 40, "A byte count.");
ranged!(Prob, f64, 0.0, 1.0, "A probability or ratio in [0, 1].");
ranged!(Payload, u32, 64, 9000, "Payload bytes per packet.");
ranged!(Stage, u8, 0, 15, "HPCC++ maxStage.");
ranged!(Gamma, f64, 0.0009765625, 0.5, "LDCP gamma (2^-10 ..= 1/2).");
ranged!(TimeMs, f64, 0.001, 100_000.0, "A simulated time in ms.");
ranged!(TimeNs, u64, 1, 1_000_000_000_000, "A simulated time in ns.");

/// A whole scenario.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Name shown in reports.
    pub name: String,
    /// What it shows.
    #[serde(default)]
    pub description: String,
    /// Seed of every random choice.
    #[serde(default = "one")]
    pub seed: u64,
    /// Simulated time after which the run stops even if flows remain.
    pub stop_ms: TimeMs,
    /// The network.
    pub topology: Topology,
    /// Switch buffers and AQM.
    #[serde(default)]
    pub switch: SwitchCfg,
    /// NIC behaviour.
    #[serde(default)]
    pub nic: NicCfg,
    /// Congestion control.
    pub cc: CcCfg,
    /// The flows.
    pub workload: Workload,
    /// What to measure.
    #[serde(default)]
    pub metrics: MetricsCfg,
}

fn one() -> u64 {
    1
}

/// Topology kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopoKind {
    /// `hosts` hosts on one switch.
    Star,
    /// `senders` hosts and one receiver (host 0) on one switch.
    Incast,
    /// `left` hosts on one switch, `right` on another, one link between.
    Dumbbell,
    /// Two tiers: every leaf to every spine.
    LeafSpine,
}

/// The network's shape; which fields apply depends on `kind`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// The shape.
    pub kind: TopoKind,
    /// Star: hosts.
    pub hosts: Option<Count>,
    /// Incast: senders.
    pub senders: Option<Count>,
    /// Dumbbell: hosts on the left switch.
    pub left: Option<Count>,
    /// Dumbbell: hosts on the right switch.
    pub right: Option<Count>,
    /// Leaf-spine: leaves.
    pub leaves: Option<Count>,
    /// Leaf-spine: spines.
    pub spines: Option<Count>,
    /// Leaf-spine: hosts per leaf.
    pub hosts_per_leaf: Option<Count>,
    /// Host link speed.
    pub link_gbps: Gbps,
    /// Dumbbell: switch-to-switch speed (default: link_gbps).
    pub bottleneck_gbps: Option<Gbps>,
    /// Leaf-spine: fabric speed (default: link_gbps).
    pub fabric_gbps: Option<Gbps>,
    /// Per-link propagation delay.
    pub link_delay_ns: DelayNs,
}

/// Switch buffers and marking (LDCP §2.1).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchCfg {
    /// Shared buffer per switch.
    pub buffer_bytes: Bytes,
    /// buf_max: tail drop above this per-port queue.
    pub port_buffer_bytes: Bytes,
    /// WRED/ECN K_min (ECN-capable packets).
    pub ecn_kmin_bytes: Bytes,
    /// WRED/ECN K_max.
    pub ecn_kmax_bytes: Bytes,
    /// WRED/ECN P_max.
    pub ecn_pmax: Prob,
    /// K of eq. (3): ECN-incapable packets are dropped at or above it.
    pub drop_k_bytes: Bytes,
}

impl Default for SwitchCfg {
    fn default() -> Self {
        SwitchCfg {
            buffer_bytes: Bytes(32 << 20),
            port_buffer_bytes: Bytes(8 << 20),
            ecn_kmin_bytes: Bytes(u64::MAX >> 24),
            ecn_kmax_bytes: Bytes(u64::MAX >> 24),
            ecn_pmax: Prob(0.0),
            drop_k_bytes: Bytes(u64::MAX >> 24),
        }
    }
}

/// NIC behaviour.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicCfg {
    /// Payload per data packet.
    pub payload_bytes: Payload,
    /// Header bytes per data packet (Ethernet, IP, UDP, transport).
    pub header_bytes: u32,
    /// ACK/control packet size before telemetry.
    pub ack_bytes: u32,
    /// Acknowledge every n packets (a CE mark is acknowledged at once).
    pub ack_every: Count,
    /// Retransmission timeout (go-back-N), µs.
    pub rto_us: TimeNs,
    /// Telemetry header the Tx pipeline requests.
    pub telemetry: TelFormat,
    /// IOAM nodes the sender pre-allocates.
    pub ioam_prealloc: u8,
    /// Tag notifications with SipHash (HPCC++ §9.1) and verify them.
    pub integrity: bool,
    /// Latency variation of the NIC's Tx path (DMA, PCIe, PHY), ns: each
    /// packet a host sends reaches the far end of its link up to this much
    /// later, uniformly drawn, in order. 0 makes every host a perfect clock.
    pub tx_jitter_ns: DelayNs,
    /// Probe replies lost on the way back, as a probability (HPCC++ probe
    /// mode), drawn from a random stream of its own. 0: none.
    pub probe_loss: Prob,
}

impl Default for NicCfg {
    fn default() -> Self {
        NicCfg {
            payload_bytes: Payload(1000),
            header_bytes: 48,
            ack_bytes: 64,
            ack_every: Count(1),
            rto_us: TimeNs(200),
            telemetry: TelFormat::Compact,
            ioam_prealloc: 5,
            integrity: true,
            tx_jitter_ns: DelayNs(0),
            probe_loss: Prob(0.0),
        }
    }
}

/// Congestion-control algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Algo {
    /// HPCC++.
    Hpcc,
    /// LDCP, window-based (programmable NIC).
    Ldcp,
    /// LDCP, rate-based (commercial NIC): CNP and RTT probes.
    LdcpRate,
}

/// Which algorithm and its parameters (HPCC++ fields or LDCP fields).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcCfg {
    /// The algorithm.
    pub algorithm: Algo,
    /// Base RTT T for every flow; default: each flow's path base RTT.
    pub base_rtt_ns: Option<TimeNs>,
    /// HPCC++ eta.
    #[serde(default = "eta_default")]
    pub eta: Prob,
    /// HPCC++ maxStage.
    #[serde(default = "stage_default")]
    pub max_stage: Stage,
    /// HPCC++ W_ai = rate · T, Mb/s (SIGCOMM'19: 50); or `wai_flows`.
    pub wai_mbps: Option<u32>,
    /// HPCC++ W_ai = W_init·(1−eta)/N.
    pub wai_flows: Option<u16>,
    /// HPCC++ W_min in bytes.
    #[serde(default = "wmin_default")]
    pub w_min_bytes: u32,
    /// HPCC++ placement and telemetry source.
    #[serde(default)]
    pub mode: HpccMode,
    /// HPCC++ sojourn time instead of queue length (§9.3).
    #[serde(default)]
    pub sojourn: bool,
    /// LDCP alpha.
    #[serde(default = "alpha_default")]
    pub alpha: Prob,
    /// LDCP beta.
    #[serde(default = "beta_default")]
    pub beta: Prob,
    /// LDCP gamma.
    #[serde(default = "gamma_default")]
    pub gamma: Gamma,
    /// LDCP zero-RTT fast start.
    #[serde(default = "yes")]
    pub fast_start: bool,
}

/// HPCC++ placement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HpccMode {
    /// Sender-based, telemetry on every data packet, echoed on ACKs.
    #[default]
    Sender,
    /// Receiver-based Rx-HPCC: window feedback once per T.
    RxHpcc,
    /// Sender-based with one probe per RTT; the responder reports one hop.
    Probe,
}

fn eta_default() -> Prob {
    Prob(0.95)
}
fn stage_default() -> Stage {
    Stage(5)
}
fn wmin_default() -> u32 {
    16
}
fn alpha_default() -> Prob {
    Prob(1.0)
}
fn beta_default() -> Prob {
    Prob(0.5)
}
fn gamma_default() -> Gamma {
    Gamma(0.125)
}
fn yes() -> bool {
    true
}

/// Workload kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkKind {
    /// An explicit list (`flows`).
    List,
    /// Every host but `receiver` sends `bytes` to it at `start_ns`.
    Incast,
    /// Poisson arrivals between random host pairs, sizes from `distribution`,
    /// at `load` of the host links, `flows` of them.
    Cdf,
    /// Flows from the CSV file `path`: src,dst,bytes,start_ns (relative to the scenario).
    Csv,
}

/// Where flows come from; which fields apply depends on `kind`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    /// The kind.
    pub kind: WorkKind,
    /// List: the flows.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Incast: receiving host.
    #[serde(default)]
    pub receiver: u32,
    /// Incast: bytes per sender.
    pub bytes: Option<Bytes>,
    /// Incast: start time.
    #[serde(default)]
    pub start_ns: u64,
    /// Cdf: the distribution.
    pub distribution: Option<Distribution>,
    /// Cdf: offered load of each host link, payload only.
    pub load: Option<Prob>,
    /// Cdf: number of flows.
    pub count: Option<Count>,
    /// Csv: the file.
    pub path: Option<String>,
    /// Any kind: each flow's application hands over its bytes in bursts,
    /// the next one an idle time after the previous is acknowledged.
    pub on_off: Option<OnOff>,
}

/// Bursts with idle time between them: a flow's sender has `burst_bytes`
/// to send, then waits `idle_ns` after all of it is acknowledged before the
/// next burst (a request-response application, or a flow that goes quiet
/// longer than its telemetry's timestamps take to wrap).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnOff {
    /// Bytes per burst.
    pub burst_bytes: Bytes,
    /// Idle time after a burst is acknowledged, ns.
    pub idle_ns: DelayNs,
}

/// One flow.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Source host index.
    pub src: u32,
    /// Destination host index.
    pub dst: u32,
    /// Bytes to send.
    pub bytes: u64,
    /// Start time.
    #[serde(default)]
    pub start_ns: u64,
}

/// Flow-size distributions of the HPCC evaluation.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// DCTCP's WebSearch.
    Websearch,
    /// Facebook Hadoop.
    FbHadoop,
}

/// Measurement settings.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsCfg {
    /// Queue and rate sampling period.
    pub sample_ns: TimeNs,
    /// Figures "after the first …" start here.
    pub warmup_ns: u64,
    /// Window for Jain fairness and utilization series.
    pub window_ns: TimeNs,
    /// Flows whose window/rate is recorded over time (first n).
    pub trace_flows: u32,
}

impl Default for MetricsCfg {
    fn default() -> Self {
        MetricsCfg {
            sample_ns: TimeNs(1_000),
            warmup_ns: 1_000_000,
            window_ns: TimeNs(100_000),
            trace_flows: 4,
        }
    }
}

/// A scenario file that could not be used.
#[derive(Debug)]
pub struct ScenarioError {
    /// The file.
    pub file: String,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// Dotted path of the field, if known.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: ", self.file, l)?,
            None => write!(f, "{}: ", self.file)?,
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Parses scenario text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::parse(text).map_err(|e| ScenarioError {
        file: file.into(),
        line: e.span().map(|s| line_of(text, s.start)),
        field: String::new(),
        message: e.message().trim().to_string(),
    })?;
    let s: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        ScenarioError {
            file: file.into(),
            line: inner.span().map(|s| line_of(text, s.start)),
            field: if field == "." { String::new() } else { field },
            message: inner.message().trim().to_string(),
        }
    })?;
    validate(&s, text, file)?;
    Ok(s)
}

/// Reads and parses a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        line: None,
        field: String::new(),
        message: e.to_string(),
    })?;
    parse(&text, &file)
}

fn kind_name(k: TopoKind) -> &'static str {
    match k {
        TopoKind::Star => "star",
        TopoKind::Incast => "incast",
        TopoKind::Dumbbell => "dumbbell",
        TopoKind::LeafSpine => "leaf_spine",
    }
}

/// Cross-field checks, reported at the field's line.
fn validate(s: &Scenario, text: &str, file: &str) -> Result<(), ScenarioError> {
    let err = |field: &str, message: String| {
        let key = field.rsplit('.').next().unwrap_or(field);
        let line = text
            .lines()
            .position(|l| l.trim_start().starts_with(key))
            .map(|i| i + 1);
        Err(ScenarioError {
            file: file.into(),
            line,
            field: field.into(),
            message,
        })
    };
    if s.cc.wai_mbps.is_some() && s.cc.wai_flows.is_some() {
        return err("cc.wai_flows", "give wai_mbps or wai_flows, not both".into());
    }
    if s.cc.algorithm == Algo::Hpcc && s.nic.telemetry == TelFormat::None {
        return err(
            "nic.telemetry",
            "HPCC++ needs in-band telemetry: compact, int_md, ioam or ifa".into(),
        );
    }
    if s.workload.on_off.is_some_and(|o| o.burst_bytes.0 == 0) {
        return err("workload.on_off.burst_bytes", "a burst needs at least one byte".into());
    }
    let t = &s.topology;
    let need = |present: bool, field: &str| {
        if present {
            Ok(())
        } else {
            err(field, format!("required for kind = \"{}\"", kind_name(t.kind)))
        }
    };
    match t.kind {
        TopoKind::Star => need(t.hosts.is_some(), "topology.hosts")?,
        TopoKind::Incast => need(t.senders.is_some(), "topology.senders")?,
        TopoKind::Dumbbell => {
            need(t.left.is_some(), "topology.left")?;
            need(t.right.is_some(), "topology.right")?;
        }
        TopoKind::LeafSpine => {
            need(t.leaves.is_some(), "topology.leaves")?;
            need(t.spines.is_some(), "topology.spines")?;
            need(t.hosts_per_leaf.is_some(), "topology.hosts_per_leaf")?;
        }
    }
    let w = &s.workload;
    let wneed = |present: bool, field: &str| {
        if present {
            Ok(())
        } else {
            err(field, "required for this workload kind".into())
        }
    };
    match w.kind {
        WorkKind::List => wneed(!w.flows.is_empty(), "workload.flows")?,
        WorkKind::Incast => wneed(w.bytes.is_some(), "workload.bytes")?,
        WorkKind::Cdf => {
            wneed(w.distribution.is_some(), "workload.distribution")?;
            wneed(w.load.is_some(), "workload.load")?;
            wneed(w.count.is_some(), "workload.count")?;
        }
        WorkKind::Csv => wneed(w.path.is_some(), "workload.path")?,
    }
    if s.switch.ecn_kmin_bytes > s.switch.ecn_kmax_bytes {
        return err("switch.ecn_kmin_bytes", "must not exceed ecn_kmax_bytes".into());
    }
    if !(1..=8).contains(&s.nic.ioam_prealloc) {
        return err(
            "nic.ioam_prealloc",
            format!("must be in 1 ..= 8 (got {})", s.nic.ioam_prealloc),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
stop_ms = 1.0
[topology]
kind = "incast"
senders = 2
link_gbps = 100
link_delay_ns = 1000
[cc]
algorithm = "hpcc"
[workload]
kind = "incast"
bytes = 1000000
"#;

    #[test]
    fn a_good_file_parses() {
        let s = parse(GOOD, "good.toml").unwrap();
        assert_eq!(
            (s.topology.kind, s.topology.senders),
            (TopoKind::Incast, Some(Count(2)))
        );
        assert_eq!((s.cc.algorithm, s.cc.eta), (Algo::Hpcc, Prob(0.95)));
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let bad = GOOD.replace("link_gbps = 100", "link_gbps = 0");
        let e = parse(&bad, "bad.toml").unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert_eq!(e.field, "topology.link_gbps", "{e}");
        assert!(
            e.to_string()
                .starts_with("bad.toml:7: topology.link_gbps: must be in 1 ..= 1600"),
            "{e}"
        );

        let e = parse(&GOOD.replace("senders = 2", "senders = 2\nsendrs = 3"), "typo.toml").unwrap_err();
        assert_eq!(e.line, Some(7), "{e}");
        assert!(e.message.contains("sendrs"), "{e}");

        let e = parse(&GOOD.replace("algorithm = \"hpcc\"", "algorithm = \"dctcp\""), "x.toml").unwrap_err();
        assert_eq!(e.field, "cc.algorithm", "{e}");

        let e = parse("name = \"t\"\nstop_ms = [", "syntax.toml").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");

        let e = parse(&GOOD.replace("senders = 2\n", ""), "missing.toml").unwrap_err();
        assert_eq!(e.field, "topology.senders", "{e}");

        let e = parse(
            &GOOD.replace(
                "[cc]\nalgorithm = \"hpcc\"",
                "[cc]\nalgorithm = \"hpcc\"\nwai_mbps = 50\nwai_flows = 4",
            ),
            "both.toml",
        )
        .unwrap_err();
        assert_eq!(e.field, "cc.wai_flows", "{e}");
        assert!(e.line.is_some());
    }
}
