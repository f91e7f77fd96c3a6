//! The file format: TOML read into flat tables (so every error keeps its
//! line and field), then turned into the typed [`Scenario`], refusing any
//! field that does not apply to the kind chosen and any required one that
//! is missing.

use std::borrow::Cow;

use serde::Deserialize;

use super::*;
use cc_core::params::TelemetryKind;
use cc_core::Algorithm;

/// A scenario file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "one")]
    seed: u64,
    stop_ms: TimeMs,
    topology: RawTopology,
    #[serde(default)]
    switch: SwitchCfg,
    #[serde(default)]
    nic: NicCfg,
    cc: toml::Table,
    workload: RawWorkload,
    #[serde(default)]
    metrics: MetricsCfg,
}

fn one() -> u64 {
    1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum TopoKind {
    Star,
    Incast,
    Dumbbell,
    LeafSpine,
    FatTree,
    KAryFatTree,
    Ns3,
    Htsim,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    kind: TopoKind,
    hosts: Option<Count>,
    senders: Option<Count>,
    left: Option<Count>,
    right: Option<Count>,
    leaves: Option<Count>,
    spines: Option<Count>,
    hosts_per_leaf: Option<Count>,
    pods: Option<Count>,
    tors_per_pod: Option<Count>,
    hosts_per_tor: Option<Count>,
    aggs_per_pod: Option<Count>,
    cores_per_agg: Option<Count>,
    k: Option<Count>,
    link_gbps: Gbps,
    bottleneck_gbps: Option<Gbps>,
    fabric_gbps: Option<Gbps>,
    link_delay_ns: Option<DelayNs>,
    path: Option<String>,
    failed_links: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Algo {
    Hpcc,
    Ldcp,
    LdcpRate,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCc {
    algorithm: Algo,
    base_rtt_ns: Option<TimeNs>,
    eta: Option<Prob>,
    max_stage: Option<Stage>,
    wai_mbps: Option<u32>,
    wai_flows: Option<u16>,
    w_min_bytes: Option<u32>,
    mode: Option<HpccMode>,
    sojourn: Option<bool>,
    alpha: Option<Prob>,
    beta: Option<Prob>,
    gamma: Option<Gamma>,
    fast_start: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum WorkKind {
    List,
    Incast,
    Cdf,
    Csv,
    Ns3,
    ConnectionMatrix,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    kind: WorkKind,
    flows: Option<Vec<FlowSpec>>,
    receiver: Option<u32>,
    bytes: Option<Bytes>,
    start_ns: Option<u64>,
    distribution: Option<Distribution>,
    load: Option<Prob>,
    count: Option<FlowCount>,
    path: Option<String>,
    on_off: Option<OnOff>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// The line of `key = …` in table `[table]` (or a dotted `table.key`), if
/// written.
fn line_of_key(text: &str, table: &str, key: &str) -> Option<usize> {
    let mut in_table = false;
    for (i, l) in text.lines().enumerate() {
        let l = l.trim_start();
        if let Some(h) = l.strip_prefix('[') {
            in_table = h.trim_start_matches('[').split(']').next().map(str::trim) == Some(table);
            continue;
        }
        let name = if in_table {
            l
        } else if let Some(rest) = l.strip_prefix(table).and_then(|r| r.strip_prefix('.')) {
            rest
        } else {
            continue;
        };
        if name.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('=')) {
            return Some(i + 1);
        }
    }
    None
}

/// The line of the dotted `field` (`cc.eta`, `seed`) in scenario `text`,
/// if written there.
pub fn line_of_field(text: &str, field: &str) -> Option<usize> {
    let (table, key) = field.rsplit_once('.').unwrap_or(("", field));
    line_of_key(text, table, key)
}

/// Parses scenario text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::parse(text).map_err(|e| {
        let line = e.span().map(|s| line_of(text, s.start));
        let message = e.message().trim();
        ScenarioError {
            file: file.into(),
            line,
            field: String::new(),
            message: match line.filter(|_| message == "duplicate key") {
                Some(l) => duplicate_key(text, l),
                None => message.to_string(),
            },
        }
    })?;
    let f: File = serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        let field = if field == "." { String::new() } else { field };
        let message = inner.message().trim();
        let (field, message) = match unknown_field(text, &field, message) {
            Some((name, hint)) => (name, hint),
            None => (field, message.to_string()),
        };
        ScenarioError {
            file: file.into(),
            line: inner.span().map(|s| line_of(text, s.start)),
            field,
            message,
        }
    })?;
    let err = |field: &str, message: String| {
        let (table, key) = field.rsplit_once('.').unwrap_or(("", field));
        ScenarioError {
            file: file.into(),
            line: line_of_key(text, table, key),
            field: field.into(),
            message,
        }
    };
    let mut s = Scenario {
        name: f.name,
        description: f.description,
        seed: f.seed,
        stop_ms: f.stop_ms,
        topology: topology(f.topology).map_err(|(k, m)| err(&format!("topology.{k}"), m))?,
        switch: f.switch,
        nic: f.nic,
        cc: cc_table(f.cc, text).map_err(|(k, m)| err(&format!("cc.{k}"), m))?,
        workload: workload(f.workload).map_err(|(k, m)| err(&format!("workload.{k}"), m))?,
        metrics: f.metrics,
    };
    // An algorithm that reads the switches' PINT code gets it unless the
    // file names a format.
    if let Cc::Registered { algorithm, .. } = &s.cc.algorithm {
        if algorithm.network().telemetry == TelemetryKind::Pint && line_of_key(text, "nic", "telemetry").is_none() {
            s.nic.telemetry = TelFormat::Pint;
        }
    }
    validate(&s).map_err(|(k, m)| err(k, m))?;
    Ok(s)
}

/// The key written at `line` (a duplicate), named with the line of its
/// first appearance in the same table.
fn duplicate_key(text: &str, line: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let key_of = |l: &str| l.split('=').next().map(|k| k.trim().trim_matches('"').to_string());
    let Some(key) = lines.get(line - 1).and_then(|l| key_of(l)) else {
        return "duplicate key".into();
    };
    let first = lines[..line - 1]
        .iter()
        .enumerate()
        .rev()
        .take_while(|(_, l)| !l.trim_start().starts_with('['))
        .filter(|(_, l)| key_of(l).as_deref() == Some(key.as_str()))
        .map(|(i, _)| i + 1)
        .last();
    match first {
        Some(f) => format!("duplicate key `{key}` (first written at line {f})"),
        None => format!("duplicate key `{key}`"),
    }
}

/// For serde's "unknown field `x`, expected one of …" at `path`:
/// the field's dotted name and a message listing only the fields that
/// the table's `kind` or `algorithm` takes, with the nearest of them as a
/// suggestion.
fn unknown_field(text: &str, path: &str, message: &str) -> Option<(String, String)> {
    let rest = message.strip_prefix("unknown field `")?;
    let (name, rest) = rest.split_once('`')?;
    // The path names the unknown field itself, after its table.
    let table = match path.strip_suffix(name) {
        Some(t) => t.strip_suffix('.').unwrap_or(t),
        None => path,
    };
    let expected: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    let kinds = match table {
        "topology" => Some(("kind", TOPOLOGY_KINDS)),
        "cc" => Some(("algorithm", cc_kinds())),
        "workload" => Some(("kind", WORKLOAD_KINDS)),
        _ => None,
    };
    let chosen = kinds.and_then(|(key, kinds)| {
        let t: toml::Table = text.parse().ok()?;
        let kind = t.get(table)?.get(key)?.as_str()?.to_string();
        Some((key, kinds, kind))
    });
    let allowed: Vec<&str> = match &chosen {
        Some((_, kinds, kind)) => {
            let of_any = |f: &&str| kinds.iter().any(|(_, fs)| fs.contains(f));
            let own = fields_of(kinds, kind);
            expected
                .iter()
                .copied()
                .filter(|f| !of_any(f) || own.contains(f))
                .collect()
        }
        None => expected.clone(),
    };
    let near = |fields: &[&str]| {
        fields
            .iter()
            .map(|f| (edit_distance(name, f), f.to_string()))
            .filter(|(d, f)| *d <= 2.max(f.len() / 3))
            .min()
            .map(|(_, f)| f)
    };
    let mut hint = format!("unknown field `{name}`");
    match (near(&allowed), near(&expected), &chosen) {
        (Some(f), _, _) => hint.push_str(&format!("; did you mean `{f}`?")),
        // Near a field of another kind only: say whose.
        (None, Some(f), Some((key, kinds, _))) => {
            hint.push_str(&format!(
                "; did you mean `{f}` (a field of {key} = {})?",
                takers(kinds, &f)
            ));
        }
        _ => {}
    }
    match &chosen {
        Some((key, _, kind)) => hint.push_str(&format!(" ({key} = \"{kind}\" takes {})", list_or_none(&allowed))),
        None => hint.push_str(&format!(" (the table takes {})", list_or_none(&allowed))),
    }
    let dotted = if table.is_empty() {
        name.to_string()
    } else {
        format!("{table}.{name}")
    };
    Some((dotted, hint))
}

/// Levenshtein distance, for "did you mean".
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + (ca != *cb) as usize).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// A field error: the field's name in its table, and what is wrong. The
/// name is the file's own where the file named a field hal-sim does not
/// know, so it is owned there (not leaked: a process that reads many
/// files, as a sweep or a fuzzer, keeps nothing of the bad ones).
type FieldError = (Cow<'static, str>, String);

/// A [`FieldError`].
fn fe(field: impl Into<Cow<'static, str>>, message: String) -> FieldError {
    (field.into(), message)
}

/// The fields each `kind` of `[topology]` takes, beyond `kind`,
/// `link_gbps` and `link_delay_ns`.
const TOPOLOGY_KINDS: &[(&str, &[&str])] = &[
    ("star", &["hosts"]),
    ("incast", &["senders"]),
    ("dumbbell", &["left", "right", "bottleneck_gbps"]),
    ("leaf_spine", &["leaves", "spines", "hosts_per_leaf", "fabric_gbps"]),
    (
        "fat_tree",
        &[
            "pods",
            "tors_per_pod",
            "hosts_per_tor",
            "aggs_per_pod",
            "cores_per_agg",
            "fabric_gbps",
        ],
    ),
    ("k_ary_fat_tree", &["k", "fabric_gbps"]),
    ("ns3", &["path"]),
    ("htsim", &["path"]),
];

/// The fields each `algorithm` of `[cc]` takes, beyond `algorithm` and
/// `base_rtt_ns`.
const BY_HAND_KINDS: &[(&str, &[&str])] = &[
    (
        "hpcc",
        &[
            "eta",
            "max_stage",
            "wai_mbps",
            "wai_flows",
            "w_min_bytes",
            "mode",
            "sojourn",
        ],
    ),
    ("ldcp", &["alpha", "beta", "gamma", "fast_start"]),
    ("ldcp_rate", &["alpha", "beta", "gamma"]),
];

/// The fields each `kind` of `[workload]` takes, beyond `kind` and
/// `on_off`.
const WORKLOAD_KINDS: &[(&str, &[&str])] = &[
    ("list", &["flows"]),
    ("incast", &["receiver", "bytes", "start_ns"]),
    ("cdf", &["distribution", "load", "count"]),
    ("csv", &["path"]),
    ("ns3", &["path"]),
    ("connection_matrix", &["path"]),
];

/// The fields `kind` takes, from one of the tables above.
fn fields_of(kinds: &[(&str, &'static [&'static str])], kind: &str) -> &'static [&'static str] {
    kinds.iter().find(|(k, _)| *k == kind).map_or(&[], |(_, f)| f)
}

/// Refuses the first of `given` (field, written) that `kind` (of the
/// table's `key`, `kind` or `algorithm`) has no use for.
fn only_in(
    key: &str,
    kinds: &[(&str, &'static [&'static str])],
    kind: &str,
    given: &[(&'static str, bool)],
) -> Result<(), FieldError> {
    let applies = fields_of(kinds, kind);
    match given.iter().find(|(k, written)| *written && !applies.contains(k)) {
        Some((k, _)) => Err(fe(
            *k,
            format!(
                "does not apply to {key} = \"{kind}\" (it is a field of {}; {kind} takes {})",
                takers(kinds, k),
                list_or_none(applies)
            ),
        )),
        None => Ok(()),
    }
}

/// The kinds of `kinds` that take `field`, comma-separated.
fn takers(kinds: &[(&str, &[&str])], field: &str) -> String {
    let names: Vec<&str> = kinds
        .iter()
        .filter(|(_, f)| f.contains(&field))
        .map(|(n, _)| *n)
        .collect();
    names.join(", ")
}

fn list_or_none(fields: &[&str]) -> String {
    if fields.is_empty() {
        "none".into()
    } else {
        fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
    }
}

/// A field `kind` requires.
fn need<T>(v: Option<T>, key: &'static str, kind: &str) -> Result<T, FieldError> {
    v.ok_or_else(|| fe(key, format!("required for kind = \"{kind}\"")))
}

fn topology(t: RawTopology) -> Result<Topology, FieldError> {
    let given = [
        ("hosts", t.hosts.is_some()),
        ("senders", t.senders.is_some()),
        ("left", t.left.is_some()),
        ("right", t.right.is_some()),
        ("leaves", t.leaves.is_some()),
        ("spines", t.spines.is_some()),
        ("hosts_per_leaf", t.hosts_per_leaf.is_some()),
        ("pods", t.pods.is_some()),
        ("tors_per_pod", t.tors_per_pod.is_some()),
        ("hosts_per_tor", t.hosts_per_tor.is_some()),
        ("aggs_per_pod", t.aggs_per_pod.is_some()),
        ("cores_per_agg", t.cores_per_agg.is_some()),
        ("k", t.k.is_some()),
        ("bottleneck_gbps", t.bottleneck_gbps.is_some()),
        ("fabric_gbps", t.fabric_gbps.is_some()),
        ("path", t.path.is_some()),
    ];
    // Every shape's links take link_delay_ns but a file's, which gives
    // each link its own.
    let delay = match (t.kind, t.link_delay_ns) {
        (TopoKind::Ns3 | TopoKind::Htsim, None) => DelayNs(0),
        (TopoKind::Ns3 | TopoKind::Htsim, Some(_)) => {
            return Err(fe(
                "link_delay_ns",
                "does not apply to kind = \"ns3\" or \"htsim\" (the file gives the links' delays)".into(),
            ))
        }
        (_, d) => d.ok_or(fe(
            "link_delay_ns",
            "required for every kind but \"ns3\" and \"htsim\"".to_string(),
        ))?,
    };
    let shape = match t.kind {
        TopoKind::Star => {
            only_in("kind", TOPOLOGY_KINDS, "star", &given)?;
            Shape::Star {
                hosts: need(t.hosts, "hosts", "star")?,
            }
        }
        TopoKind::Incast => {
            only_in("kind", TOPOLOGY_KINDS, "incast", &given)?;
            Shape::Incast {
                senders: need(t.senders, "senders", "incast")?,
            }
        }
        TopoKind::Dumbbell => {
            only_in("kind", TOPOLOGY_KINDS, "dumbbell", &given)?;
            Shape::Dumbbell {
                left: need(t.left, "left", "dumbbell")?,
                right: need(t.right, "right", "dumbbell")?,
                bottleneck_gbps: t.bottleneck_gbps,
            }
        }
        TopoKind::LeafSpine => {
            only_in("kind", TOPOLOGY_KINDS, "leaf_spine", &given)?;
            Shape::LeafSpine {
                leaves: need(t.leaves, "leaves", "leaf_spine")?,
                spines: need(t.spines, "spines", "leaf_spine")?,
                hosts_per_leaf: need(t.hosts_per_leaf, "hosts_per_leaf", "leaf_spine")?,
                fabric_gbps: t.fabric_gbps,
            }
        }
        TopoKind::FatTree => {
            only_in("kind", TOPOLOGY_KINDS, "fat_tree", &given)?;
            Shape::FatTree {
                pods: need(t.pods, "pods", "fat_tree")?,
                tors_per_pod: need(t.tors_per_pod, "tors_per_pod", "fat_tree")?,
                hosts_per_tor: need(t.hosts_per_tor, "hosts_per_tor", "fat_tree")?,
                aggs_per_pod: need(t.aggs_per_pod, "aggs_per_pod", "fat_tree")?,
                cores_per_agg: need(t.cores_per_agg, "cores_per_agg", "fat_tree")?,
                fabric_gbps: t.fabric_gbps,
            }
        }
        TopoKind::Ns3 => {
            only_in("kind", TOPOLOGY_KINDS, "ns3", &given)?;
            Shape::Ns3 {
                path: need(t.path, "path", "ns3")?,
            }
        }
        TopoKind::Htsim => {
            only_in("kind", TOPOLOGY_KINDS, "htsim", &given)?;
            Shape::Htsim {
                path: need(t.path, "path", "htsim")?,
            }
        }
        TopoKind::KAryFatTree => {
            only_in("kind", TOPOLOGY_KINDS, "k_ary_fat_tree", &given)?;
            let k = need(t.k, "k", "k_ary_fat_tree")?.0;
            if k % 2 != 0 || k < 2 {
                return Err(fe("k", format!("must be even and at least 2 (got {k})")));
            }
            let half = Count(k / 2);
            Shape::FatTree {
                pods: Count(k),
                tors_per_pod: half,
                hosts_per_tor: half,
                aggs_per_pod: half,
                cores_per_agg: half,
                fabric_gbps: t.fabric_gbps,
            }
        }
    };
    if let Some((hosts, switches)) = shape.size() {
        super::check_size(hosts, switches).map_err(|m| fe("kind", m))?;
    }
    Ok(Topology {
        shape,
        link_gbps: t.link_gbps,
        link_delay_ns: delay,
        failed_links: t.failed_links.unwrap_or(0),
    })
}

/// The fields each `algorithm` of `[cc]` takes: hal-sim's own
/// ([`BY_HAND_KINDS`]), then each other algorithm of cc-core's registry
/// with its parameter table's names.
fn cc_kinds() -> &'static [(&'static str, &'static [&'static str])] {
    static KINDS: std::sync::OnceLock<Vec<(&'static str, &'static [&'static str])>> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        let mut k = BY_HAND_KINDS.to_vec();
        for a in Algorithm::ALL.into_iter().filter(|a| Cc::registered(*a).is_some()) {
            let names: Vec<&'static str> = a.params().map(|p| p.name).collect();
            k.push((a.name(), names.leak()));
        }
        k
    })
}

/// A name of a `[cc]` key, for an error (the table's keys are the file's).
fn owned(key: &str) -> Cow<'static, str> {
    Cow::Owned(key.to_string())
}

/// `[cc]`: its `algorithm` first, then the fields it takes.
fn cc_table(t: toml::Table, text: &str) -> Result<CcCfg, FieldError> {
    let name = match t.get("algorithm") {
        Some(toml::Value::String(n)) => n.clone(),
        Some(v) => return Err(fe("algorithm", format!("must be a string (got {v})"))),
        None => return Err(fe("algorithm", "missing field `algorithm`".into())),
    };
    let registered = Algorithm::from_name(&name).and_then(Cc::registered);
    let kinds = cc_kinds();
    if registered.is_none() && !BY_HAND_KINDS.iter().any(|(k, _)| *k == name) {
        let names: Vec<&str> = kinds.iter().map(|(k, _)| *k).collect();
        return Err(fe(
            "algorithm",
            format!("unknown algorithm `{name}`; expected one of {}", list_or_none(&names)),
        ));
    }
    // A field of another algorithm is named as such.
    let own = fields_of(kinds, &name);
    for key in t.keys().filter(|k| !["algorithm", "base_rtt_ns"].contains(&k.as_str())) {
        if !own.contains(&key.as_str()) && !takers(kinds, key).is_empty() {
            // Another algorithm's field: its name as the tables spell it.
            if let Some(&field) = kinds.iter().flat_map(|(_, f)| f.iter()).find(|f| **f == key.as_str()) {
                only_in("algorithm", kinds, &name, &[(field, true)])?;
            }
        }
    }
    if let Some(Cc::Registered { algorithm, .. }) = registered {
        return registered_cc(algorithm, t, text);
    }
    let raw: RawCc = serde_path_to_error::deserialize(toml::Value::Table(t)).map_err(|e| {
        let path = e.path().to_string();
        let message = e.inner().message().trim().to_string();
        match unknown_field(text, &format!("cc.{path}"), &message) {
            Some((dotted, hint)) => (owned(dotted.trim_start_matches("cc.")), hint),
            None => (owned(&path), message),
        }
    })?;
    cc(raw)
}

/// The `[cc]` of an algorithm of cc-core's registry: each key a parameter
/// of its table (cc-core's `AlgorithmConfig::PARAMS`) in the table's unit,
/// the whole judged by its configuration's own ranges.
fn registered_cc(algorithm: Algorithm, mut t: toml::Table, text: &str) -> Result<CcCfg, FieldError> {
    use cc_core::params::Unit;
    t.remove("algorithm");
    let base_rtt_ns = match t.remove("base_rtt_ns") {
        None => None,
        Some(v) => Some(TimeNs::deserialize(v).map_err(|e| fe("base_rtt_ns", e.message().trim().to_string()))?),
    };
    check_base_rtt(base_rtt_ns)?;
    let mut engine = cc_core::AnyConfig::DEFAULT;
    let mut given = 0u64;
    // A preset first: it sets every field, the others then over it.
    let mut t: Vec<(String, toml::Value)> = t.into_iter().collect();
    t.sort_by_key(|(key, _)| !algorithm.params().any(|p| p.preset && p.name == key));
    for (key, v) in t {
        let Some((i, p)) = algorithm.params().enumerate().find(|(_, p)| p.name == key) else {
            let all: Vec<String> = algorithm.params().map(|p| format!("`{}`", p.name)).collect();
            let message = format!("unknown field `{key}`, expected one of {}", all.join(", "));
            let (dotted, hint) = unknown_field(text, &format!("cc.{key}"), &message).unwrap_or((key.clone(), message));
            return Err((owned(dotted.trim_start_matches("cc.")), hint));
        };
        let n = match (p.unit, &v) {
            (Unit::Flag, toml::Value::Boolean(b)) => Some(*b as u32),
            (Unit::Choice(_), toml::Value::String(c)) => p.unit.choice(c),
            (Unit::Flag | Unit::Choice(_), _) => None,
            (u, toml::Value::Integer(x)) => engine_number(u, *x as f64),
            (u, toml::Value::Float(x)) => engine_number(u, *x),
            _ => None,
        };
        let unit = match p.unit {
            Unit::Fraction => "a ratio".to_string(),
            Unit::Micros => "µs".to_string(),
            Unit::Packets => "packets".to_string(),
            Unit::Mbps => "Mb/s".to_string(),
            Unit::Bytes => "bytes".to_string(),
            Unit::Count => "a count".to_string(),
            Unit::Flag => "true or false".to_string(),
            Unit::Choice(c) => format!(
                "one of {}",
                c.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ")
            ),
        };
        let Some(n) = n else {
            // A flag's or a choice's unit already says its range.
            let message = match p.unit {
                Unit::Flag | Unit::Choice(_) => format!("must be {unit} (got {v})"),
                _ => format!("must be {unit}, {} (got {v})", p.range),
            };
            return Err(fe(p.name, message));
        };
        engine.set_param(algorithm, i, n);
        given |= 1 << (i & 63);
    }
    if let Some(f) = engine.invalid_field(algorithm) {
        return Err(match algorithm.params().find(|p| p.field == f) {
            Some(p) => fe(p.name, format!("must be {}", p.range)),
            None => fe(
                "algorithm",
                format!("{} parameters: {f} out of range", algorithm.title()),
            ),
        });
    }
    Ok(CcCfg {
        algorithm: Cc::Registered {
            algorithm,
            engine: Box::new(engine),
            given,
        },
        base_rtt_ns,
    })
}

/// The engine's number for a table's decimal `x` in `unit`
/// ([`cc_core::params::Unit::scale`] of it, rounded half up): `None` if `x`
/// is negative, not a number, not whole where the unit counts, above 1
/// for a fraction, or beyond a `u32`. Only for the numeric units (flags
/// and choices are written as words: `None`).
pub(super) fn engine_number(unit: cc_core::params::Unit, x: f64) -> Option<u32> {
    use cc_core::params::Unit;
    // NaN is neither negative nor not: refused with them.
    if x.is_nan() || x < 0.0 {
        return None;
    }
    let ok = match unit {
        Unit::Fraction => x <= 1.0,
        Unit::Micros | Unit::Packets => true,
        Unit::Mbps | Unit::Bytes | Unit::Count => x == (x as u64) as f64,
        Unit::Flag | Unit::Choice(_) => false,
    };
    // Round half up; `as` would saturate, so the range is checked first.
    let r = x * unit.scale() as f64 + 0.5;
    (ok && r < 4_294_967_296.0).then_some(r as u32)
}

/// `base_rtt_ns` within the engine's range of T.
fn check_base_rtt(t: Option<TimeNs>) -> Result<(), FieldError> {
    let (min, max) = (
        cc_core::units::BaseRtt::MIN_NS as u64,
        cc_core::units::BaseRtt::MAX_NS as u64,
    );
    match t {
        Some(t) if !(min..=max).contains(&t.0) => Err(fe(
            "base_rtt_ns",
            format!("must be in {min} ..= {max} ns, the engine's range of T (got {})", t.0),
        )),
        _ => Ok(()),
    }
}

fn cc(c: RawCc) -> Result<CcCfg, FieldError> {
    let given = [
        ("eta", c.eta.is_some()),
        ("max_stage", c.max_stage.is_some()),
        ("wai_mbps", c.wai_mbps.is_some()),
        ("wai_flows", c.wai_flows.is_some()),
        ("w_min_bytes", c.w_min_bytes.is_some()),
        ("mode", c.mode.is_some()),
        ("sojourn", c.sojourn.is_some()),
        ("alpha", c.alpha.is_some()),
        ("beta", c.beta.is_some()),
        ("gamma", c.gamma.is_some()),
        ("fast_start", c.fast_start.is_some()),
    ];
    let ldcp = |kind: &str| -> Result<LdcpCfg, FieldError> {
        only_in("algorithm", cc_kinds(), kind, &given)?;
        let d = LdcpCfg::default();
        Ok(LdcpCfg {
            alpha: c.alpha.unwrap_or(d.alpha),
            beta: c.beta.unwrap_or(d.beta),
            gamma: c.gamma.unwrap_or(d.gamma),
        })
    };
    // Ranges the engine needs beyond the fields' types: a gain, constant
    // or target of 0 leaves the algorithm nothing to do.
    let positive: [(&'static str, Option<f64>); 3] = [
        ("eta", c.eta.map(|p| p.0)),
        ("alpha", c.alpha.map(|p| p.0)),
        ("beta", c.beta.map(|p| p.0)),
    ];
    check_base_rtt(c.base_rtt_ns)?;
    let algorithm = match c.algorithm {
        Algo::Hpcc => {
            only_in("algorithm", cc_kinds(), "hpcc", &given)?;
            let d = HpccCfg::default();
            Cc::Hpcc(HpccCfg {
                eta: c.eta.unwrap_or(d.eta),
                max_stage: c.max_stage.unwrap_or(d.max_stage),
                additive_increase: match (c.wai_mbps, c.wai_flows) {
                    (Some(_), Some(_)) => return Err(fe("wai_flows", "give wai_mbps or wai_flows, not both".into())),
                    (Some(m), None) => Wai::RateMbps(m),
                    (None, Some(n)) => Wai::Flows(n),
                    (None, None) => d.additive_increase,
                },
                w_min_bytes: c.w_min_bytes.unwrap_or(d.w_min_bytes),
                mode: c.mode.unwrap_or(d.mode),
                sojourn: c.sojourn.unwrap_or(d.sojourn),
            })
        }
        Algo::Ldcp => Cc::Ldcp {
            params: ldcp("ldcp")?,
            fast_start: c.fast_start.unwrap_or(true),
        },
        // The rate variant has no fast start (its first RTT is the NIC's).
        Algo::LdcpRate => Cc::LdcpRate(ldcp("ldcp_rate")?),
    };
    // After the kind's check: a field of another algorithm is named as such.
    if let Some((k, Some(v))) = positive.iter().find(|(_, v)| v.is_some_and(|v| v <= 0.0)) {
        return Err(fe(*k, format!("must be in (0, 1] (got {v})")));
    }
    Ok(CcCfg {
        algorithm,
        base_rtt_ns: c.base_rtt_ns,
    })
}

fn workload(w: RawWorkload) -> Result<Workload, FieldError> {
    let given = [
        ("flows", w.flows.is_some()),
        ("receiver", w.receiver.is_some()),
        ("bytes", w.bytes.is_some()),
        ("start_ns", w.start_ns.is_some()),
        ("distribution", w.distribution.is_some()),
        ("load", w.load.is_some()),
        ("count", w.count.is_some()),
        ("path", w.path.is_some()),
    ];
    let flows = match w.kind {
        WorkKind::List => {
            only_in("kind", WORKLOAD_KINDS, "list", &given)?;
            let flows = need(w.flows, "flows", "list")?;
            if flows.is_empty() {
                return Err(fe("flows", "required for kind = \"list\"".into()));
            }
            Flows::List(flows)
        }
        WorkKind::Incast => {
            only_in("kind", WORKLOAD_KINDS, "incast", &given)?;
            Flows::Incast {
                receiver: w.receiver.unwrap_or(0),
                bytes: need(w.bytes, "bytes", "incast")?,
                start_ns: w.start_ns.unwrap_or(0),
            }
        }
        WorkKind::Cdf => {
            only_in("kind", WORKLOAD_KINDS, "cdf", &given)?;
            let load = need(w.load, "load", "cdf")?;
            if load.0 <= 0.0 {
                return Err(fe(
                    "load",
                    format!("must be in (0, 1]: no flow arrives at a load of {}", load.0),
                ));
            }
            Flows::Cdf {
                distribution: need(w.distribution, "distribution", "cdf")?,
                load,
                count: need(w.count, "count", "cdf")?,
            }
        }
        WorkKind::Csv => {
            only_in("kind", WORKLOAD_KINDS, "csv", &given)?;
            Flows::Csv {
                path: need(w.path, "path", "csv")?,
            }
        }
        WorkKind::Ns3 => {
            only_in("kind", WORKLOAD_KINDS, "ns3", &given)?;
            Flows::Ns3 {
                path: need(w.path, "path", "ns3")?,
            }
        }
        WorkKind::ConnectionMatrix => {
            only_in("kind", WORKLOAD_KINDS, "connection_matrix", &given)?;
            Flows::ConnectionMatrix {
                path: need(w.path, "path", "connection_matrix")?,
            }
        }
    };
    if w.on_off.is_some_and(|o| o.burst_bytes.0 == 0) {
        return Err(fe("on_off.burst_bytes", "a burst needs at least one byte".into()));
    }
    Ok(Workload {
        flows,
        on_off: w.on_off,
    })
}

/// Checks across tables.
fn validate(s: &Scenario) -> Result<(), (&'static str, String)> {
    let (title, reads) = match &s.cc.algorithm {
        Cc::Hpcc(_) => ("HPCC++", TelemetryKind::Stack),
        Cc::Registered { algorithm, .. } => (algorithm.title(), algorithm.network().telemetry),
        _ => ("", TelemetryKind::None),
    };
    match (reads, s.nic.telemetry) {
        (TelemetryKind::Stack, TelFormat::None | TelFormat::Pint) => {
            return Err((
                "nic.telemetry",
                format!("{title} needs in-band telemetry: compact, int_md, ioam or ifa"),
            ))
        }
        (TelemetryKind::Pint, f) if f != TelFormat::Pint => {
            return Err(("nic.telemetry", format!("{title} reads the switches' PINT code: pint")))
        }
        _ => {}
    }
    if !(s.nic.pint_sampling.0 > 0.0 && s.nic.pint_sampling.0 <= 1.0) {
        return Err((
            "nic.pint_sampling",
            format!("must be in (0, 1] (got {})", s.nic.pint_sampling.0),
        ));
    }
    s.switch.check_ecmp()?;
    // The switches' egress parts check themselves (PFC's thresholds, the
    // marking line, trimming's needs), here as the file is read and again
    // where the switches are built.
    crate::model::switch::Egress::from_scenario(s, s.topology.link_gbps.0 as u64 * 1_000_000_000, s.nic.telemetry)?;
    if let Some(p) = &s.nic.cc_processor {
        match (&p.costs_from, p.core, &p.costs) {
            (Some(_), Some(_), None) | (None, None, Some(_)) => {}
            (Some(_), None, None) => {
                return Err((
                    "nic.cc_processor.core",
                    "costs_from needs the core whose column to read: rv32imac, rv64imac or rv64imac_zbb".into(),
                ))
            }
            _ => {
                return Err((
                    "nic.cc_processor",
                    "give costs_from and core (a benchmark table), or [nic.cc_processor.costs], one of them".into(),
                ))
            }
        }
        if p.coalescing != CoalescingCfg::Thinning {
            let given = [
                ("nic.cc_processor.thin_every_acks", p.thin_every_acks.is_some()),
                ("nic.cc_processor.thin_interval_ns", p.thin_interval_ns.is_some()),
            ];
            if let Some((field, _)) = given.iter().find(|g| g.1) {
                return Err((field, "applies only to coalescing = \"thinning\"".into()));
            }
        }
    }
    if !(1..=2).contains(&s.nic.pint_bytes) {
        return Err(("nic.pint_bytes", format!("must be 1 or 2 (got {})", s.nic.pint_bytes)));
    }
    if !(1..=8).contains(&s.nic.ioam_prealloc) {
        return Err((
            "nic.ioam_prealloc",
            format!("must be in 1 ..= 8 (got {})", s.nic.ioam_prealloc),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
