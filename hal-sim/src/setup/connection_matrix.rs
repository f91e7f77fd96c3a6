//! htsim's connection matrices (`.cm`), as uet-htsim (the Ultra Ethernet
//! consortium's simulator) and its generators (`gen_allreduce.py`,
//! `gen_serial_alltoall.py`, the permutation and incast generators) write
//! them, read into flows and the triggers that start them.
//!
//! ```text
//! Nodes 16                              the hosts the matrix names (0 ..< N)
//! Connections 3                         connection lines that follow
//! Triggers 2                            trigger lines that follow (optional)
//! 0->13 start 0 size 2000000            src->dst, start in µs, payload bytes
//! 1->2 id 1 start 0 size 4096 send_done_trigger 1
//! 2->3 id 2 trigger 1 size 4096 recv_done_trigger 2
//! trigger id 1 oneshot                  oneshot | multishot | barrier count K
//! ```
//!
//! The grammar and its meaning are uet-htsim's (`connection_matrix.cpp`
//! `ConnectionMatrix::load`, `trigger.cpp`, `main_uec.cpp`): a flow starts
//! at its `start` (µs; uet-htsim truncates it to whole microseconds, and
//! so does this reader) or when the trigger it names fires; a flow names
//! a trigger to activate when it finishes sending (`send_done_trigger`:
//! its last byte acknowledged) or receiving (`recv_done_trigger`). A
//! one-shot trigger starts all its flows at its first activation, a
//! multi-shot one the next of its flows (in file order) at each, a barrier
//! all of them at its `count`-th. Flows that use triggers carry a non-zero
//! `id`. What hal-sim does not model is refused by name: `Failures` and
//! `failure` lines (its `-failed` links are a topology's business), `msg`
//! (connection reuse) and `prio`.

use std::collections::BTreeMap;

use crate::setup::scenario::{FlowSpec, ScenarioError};

/// How a trigger fires (uet-htsim's `trigger.cpp`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TriggerKind {
    /// Its first activation starts every flow waiting on it; later ones
    /// do nothing (uet-htsim asserts there are none).
    OneShot,
    /// Each activation starts the next of its flows, in file order.
    MultiShot,
    /// The `count`-th activation starts every flow waiting on it.
    Barrier {
        /// Activations needed (≥ 1).
        count: u32,
    },
}

/// What triggers a flow takes part in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowTriggers {
    /// The trigger that starts it (its start time is then unused).
    pub start_on: Option<u32>,
    /// The trigger its last byte's acknowledgement activates.
    pub send_done: Option<u32>,
    /// The trigger the receiver's last byte activates. hal-sim activates
    /// it when the flow finishes, as `send_done` (docs/design-notes.md).
    pub recv_done: Option<u32>,
}

/// A workload's triggers: per flow (empty when none uses any) and by id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Triggers {
    /// Indexed as the workload's flows; empty if no flow uses a trigger.
    pub per_flow: Vec<FlowTriggers>,
    /// Each trigger's kind, by id.
    pub kinds: BTreeMap<u32, TriggerKind>,
}

impl Triggers {
    /// Whether flow `i` waits for a trigger to start.
    pub fn waits(&self, i: usize) -> bool {
        self.per_flow.get(i).is_some_and(|t| t.start_on.is_some())
    }
}

/// A connection matrix: its node count, flows and triggers.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    /// `Nodes`: the matrix's hosts are 0 ..< nodes.
    pub nodes: u32,
    /// Every connection, in file order.
    pub flows: Vec<FlowSpec>,
    /// Their triggers.
    pub triggers: Triggers,
}

/// Reads the matrix `text` (from `file`, for messages).
pub fn parse(text: &str, file: &str) -> Result<Matrix, ScenarioError> {
    let at = |line: usize, field: &str, message: String| ScenarioError {
        file: file.into(),
        line: Some(line),
        field: field.into(),
        message,
    };
    let mut nodes = None;
    let (mut declared_conns, mut declared_triggers) = (None, 0usize);
    let mut flows = Vec::new();
    let mut per_flow = Vec::new();
    let mut kinds = BTreeMap::new();
    // Flow ids, and which flows wait on each trigger, for the checks.
    let mut ids = BTreeMap::new();
    let mut used = BTreeMap::<u32, usize>::new();
    let mut n_trigger_lines = 0;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let tokens: Vec<&str> = raw.split_whitespace().collect();
        let Some(&first) = tokens.first() else { continue };
        if first.starts_with('#') {
            continue;
        }
        let number = |field: &str, v: Option<&&str>| -> Result<u64, ScenarioError> {
            let v = v.ok_or_else(|| at(line, field, format!("`{field}` needs a value")))?;
            v.parse()
                .map_err(|_| at(line, field, format!("`{field}` takes an unsigned integer, got {v:?}")))
        };
        let id32 = |field: &str, v: u64| -> Result<u32, ScenarioError> {
            match u32::try_from(v) {
                Ok(0) | Err(_) => Err(at(line, field, format!("`{field}` must be in 1 ..= 2^32 - 1, got {v}"))),
                Ok(x) => Ok(x),
            }
        };
        match first {
            "Nodes" => nodes = Some(id32("Nodes", number("Nodes", tokens.get(1))?)?),
            "Connections" => declared_conns = Some(number("Connections", tokens.get(1))? as usize),
            "Triggers" => declared_triggers = number("Triggers", tokens.get(1))? as usize,
            "Failures" => {
                if number("Failures", tokens.get(1))? != 0 {
                    return Err(at(
                        line,
                        "Failures",
                        "failure lines are not modelled (degrade links with the topology instead)".into(),
                    ));
                }
            }
            "failure" => {
                return Err(at(
                    line,
                    "failure",
                    "failure lines are not modelled (degrade links with the topology instead)".into(),
                ))
            }
            "trigger" => {
                n_trigger_lines += 1;
                let (mut id, mut kind, mut count) = (None, None, None);
                let mut k = 1;
                while let Some(&t) = tokens.get(k) {
                    match t {
                        "id" => {
                            id = Some(id32("id", number("id", tokens.get(k + 1))?)?);
                            k += 1;
                        }
                        "count" => {
                            count = Some(number("count", tokens.get(k + 1))?);
                            k += 1;
                        }
                        "oneshot" | "multishot" | "barrier" if kind.is_some() => {
                            return Err(at(line, t, "a trigger has one kind".into()));
                        }
                        "oneshot" | "multishot" | "barrier" => kind = Some(t),
                        other => return Err(at(line, other, format!("unknown trigger attribute {other:?}"))),
                    }
                    k += 1;
                }
                let id = id.ok_or_else(|| at(line, "id", "a trigger needs an `id`".into()))?;
                let kind = match kind {
                    Some("oneshot") => TriggerKind::OneShot,
                    Some("multishot") => TriggerKind::MultiShot,
                    Some(_) => match count {
                        Some(c @ 1..=0xffff_ffff) => TriggerKind::Barrier { count: c as u32 },
                        _ => return Err(at(line, "count", "a barrier needs a `count` of 1 or more".into())),
                    },
                    None => {
                        return Err(at(
                            line,
                            "trigger",
                            "a trigger needs a kind: oneshot, multishot or barrier".into(),
                        ))
                    }
                };
                if kinds.insert(id, kind).is_some() {
                    return Err(at(line, "id", format!("trigger {id} is declared twice")));
                }
            }
            conn if conn.contains("->") => {
                let (s, d) = conn.split_once("->").unwrap_or_default();
                let (Ok(src), Ok(dst)) = (s.parse::<u32>(), d.parse::<u32>()) else {
                    return Err(at(line, "src->dst", format!("expected two host numbers, got {conn:?}")));
                };
                if src == dst {
                    return Err(at(line, "src->dst", format!("a connection from host {src} to itself")));
                }
                let (mut start_us, mut bytes, mut id, mut t) = (None, None, None, FlowTriggers::default());
                let mut k = 1;
                while let Some(&tok) = tokens.get(k) {
                    let v = tokens.get(k + 1);
                    match tok {
                        "start" => {
                            let s = v.ok_or_else(|| at(line, "start", "`start` needs a value".into()))?;
                            let us: f64 = s
                                .parse()
                                .ok()
                                .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                                .ok_or_else(|| at(line, "start", format!("`start` takes µs ≥ 0, got {s:?}")))?;
                            start_us = Some(us.trunc().min(u32::MAX as f64) as u64);
                        }
                        "size" => bytes = Some(number("size", v)?),
                        "id" => id = Some(id32("id", number("id", v)?)?),
                        "trigger" => t.start_on = Some(id32("trigger", number("trigger", v)?)?),
                        "send_done_trigger" => {
                            t.send_done = Some(id32("send_done_trigger", number("send_done_trigger", v)?)?)
                        }
                        "recv_done_trigger" => {
                            t.recv_done = Some(id32("recv_done_trigger", number("recv_done_trigger", v)?)?)
                        }
                        "msg" | "prio" => {
                            return Err(at(
                                line,
                                tok,
                                format!("`{tok}` is not modelled (connection reuse and priorities)"),
                            ))
                        }
                        other => return Err(at(line, other, format!("unknown connection attribute {other:?}"))),
                    }
                    k += 2;
                }
                let bytes = bytes.ok_or_else(|| at(line, "size", "a connection needs a `size` in bytes".into()))?;
                let start_ns = match (start_us, t.start_on) {
                    (Some(_), Some(_)) => {
                        return Err(at(
                            line,
                            "trigger",
                            "a connection has a start time or a trigger, not both".into(),
                        ))
                    }
                    (None, None) => {
                        return Err(at(
                            line,
                            "start",
                            "a connection needs a `start` time or a `trigger`".into(),
                        ))
                    }
                    (Some(us), None) => us * 1_000,
                    (None, Some(_)) => 0,
                };
                let uses_triggers = t != FlowTriggers::default();
                if uses_triggers && id.is_none() {
                    return Err(at(line, "id", "a connection that uses a trigger needs an `id`".into()));
                }
                if let Some(id) = id {
                    if ids.insert(id, line).is_some() {
                        return Err(at(line, "id", format!("connection id {id} is used twice")));
                    }
                }
                for tr in [t.start_on, t.send_done, t.recv_done].into_iter().flatten() {
                    used.entry(tr).or_insert(line);
                }
                flows.push(FlowSpec {
                    src,
                    dst,
                    bytes,
                    start_ns,
                    dport: 100,
                });
                per_flow.push(t);
            }
            other => return Err(at(line, other, format!("unknown line kind {other:?}"))),
        }
    }
    let whole = |field: &str, message: String| ScenarioError {
        file: file.into(),
        line: None,
        field: field.into(),
        message,
    };
    let nodes = nodes.ok_or_else(|| whole("Nodes", "the matrix needs a `Nodes` line".into()))?;
    if let Some(n) = declared_conns {
        if n != flows.len() {
            return Err(whole(
                "Connections",
                format!("{n} connections declared, {} given", flows.len()),
            ));
        }
    }
    if declared_triggers != n_trigger_lines {
        return Err(whole(
            "Triggers",
            format!("{declared_triggers} triggers declared, {n_trigger_lines} given"),
        ));
    }
    for (&tr, &line) in &used {
        if !kinds.contains_key(&tr) {
            return Err(at(line, "trigger", format!("trigger {tr} is used but never declared")));
        }
    }
    for (i, f) in flows.iter().enumerate() {
        if f.src >= nodes || f.dst >= nodes {
            return Err(whole(
                "src->dst",
                format!(
                    "connection {} ({}->{}) names a host past Nodes {nodes}",
                    i + 1,
                    f.src,
                    f.dst
                ),
            ));
        }
    }
    if per_flow.iter().all(|t| *t == FlowTriggers::default()) {
        per_flow.clear();
    }
    Ok(Matrix {
        nodes,
        flows,
        triggers: Triggers { per_flow, kinds },
    })
}

/// A trigger's run: which flows it starts and how far it got.
#[derive(Clone, Debug)]
struct Armed {
    kind: TriggerKind,
    /// The flows waiting on it, in file order.
    targets: Vec<u32>,
    /// Activations so far.
    activations: u32,
}

/// The triggers of a run: [`Runtime::finished`] on a flow's finish gives
/// the flows to start now.
#[derive(Clone, Debug, Default)]
pub struct Runtime {
    triggers: Triggers,
    armed: BTreeMap<u32, Armed>,
}

impl Runtime {
    /// The run of `triggers`, its flows numbered as the workload's.
    pub fn new(triggers: Triggers) -> Runtime {
        let mut armed: BTreeMap<u32, Armed> = triggers
            .kinds
            .iter()
            .map(|(&id, &kind)| {
                (
                    id,
                    Armed {
                        kind,
                        targets: Vec::new(),
                        activations: 0,
                    },
                )
            })
            .collect();
        for (i, ft) in triggers.per_flow.iter().enumerate() {
            if let Some(a) = ft.start_on.and_then(|id| armed.get_mut(&id)) {
                a.targets.push(i as u32);
            }
        }
        Runtime { triggers, armed }
    }

    /// Whether any flow uses a trigger.
    pub fn is_empty(&self) -> bool {
        self.triggers.per_flow.is_empty()
    }

    /// Whether `flow` waits for a trigger to start.
    pub fn waits(&self, flow: u32) -> bool {
        self.triggers.waits(flow as usize)
    }

    /// `flow` finished: its done triggers activate; the flows they start
    /// now are appended to `start`.
    pub fn finished(&mut self, flow: u32, start: &mut Vec<u32>) {
        let Some(&t) = self.triggers.per_flow.get(flow as usize) else {
            return;
        };
        for id in [t.send_done, t.recv_done].into_iter().flatten() {
            self.activate(id, start);
        }
    }

    fn activate(&mut self, id: u32, start: &mut Vec<u32>) {
        let Some(a) = self.armed.get_mut(&id) else { return };
        a.activations = a.activations.saturating_add(1);
        match a.kind {
            TriggerKind::OneShot if a.activations == 1 => start.extend(&a.targets),
            TriggerKind::OneShot => {}
            TriggerKind::MultiShot => start.extend(a.targets.get(a.activations as usize - 1)),
            TriggerKind::Barrier { count } if a.activations == count => start.extend(&a.targets),
            TriggerKind::Barrier { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// uet-htsim's `connection_matrices/one.cm`, as its validation plans run it.
    const ONE: &str = "Nodes 16\nConnections 1\n0->13 start 0 size 2000000\n";

    #[test]
    fn a_plain_matrix_reads_as_timed_flows() {
        let m = parse(ONE, "one.cm").unwrap();
        assert_eq!(m.nodes, 16);
        assert_eq!(
            m.flows,
            vec![FlowSpec {
                src: 0,
                dst: 13,
                bytes: 2_000_000,
                start_ns: 0,
                dport: 100
            }]
        );
        assert!(m.triggers.per_flow.is_empty());
        // Start times are µs, truncated to whole µs as uet-htsim does.
        let m = parse("Nodes 4\nConnections 1\n1->2 start 12.9 size 10\n", "t").unwrap();
        assert_eq!(m.flows[0].start_ns, 12_000);
    }

    /// uet-htsim's own matrices (kept in `scenarios/reference/uet-htsim/`,
    /// from its `connection_matrices/` at 40ccb05), as its validation
    /// plans run them: nodes, connections, sizes and start times.
    #[test]
    fn uet_htsims_own_matrices_read() {
        let read = |name: &str, text: &str| parse(text, name).unwrap_or_else(|e| panic!("{e}"));
        let cases: [(&str, &str, u32, usize, u64); 6] = [
            (
                "one.cm",
                include_str!("../../../scenarios/reference/uet-htsim/one.cm"),
                16,
                1,
                2_000_000,
            ),
            (
                "incast.cm",
                include_str!("../../../scenarios/reference/uet-htsim/incast.cm"),
                16,
                15,
                2_000_000,
            ),
            (
                "incast_128.cm",
                include_str!("../../../scenarios/reference/uet-htsim/incast_128.cm"),
                128,
                127,
                2_000_000,
            ),
            (
                "perm_16n_16c_2MB.cm",
                include_str!("../../../scenarios/reference/uet-htsim/perm_16n_16c_2MB.cm"),
                16,
                16,
                2_000_000,
            ),
            (
                "outcast_incast.cm",
                include_str!("../../../scenarios/reference/uet-htsim/outcast_incast.cm"),
                128,
                21,
                2_000_000,
            ),
            (
                "incast_3-1_overlapped.tm",
                include_str!("../../../scenarios/reference/uet-htsim/incast_3-1_overlapped.tm"),
                128,
                3,
                2_000_000,
            ),
        ];
        for (name, text, nodes, conns, first_bytes) in cases {
            let m = read(name, text);
            assert_eq!(
                (m.nodes, m.flows.len(), m.flows[0].bytes),
                (nodes, conns, first_bytes),
                "{name}"
            );
            assert!(m.triggers.per_flow.is_empty(), "{name} uses no trigger");
        }
        // The 3-to-1's two late flows start at 40 µs.
        let m = read("incast_3-1_overlapped.tm", cases[5].1);
        assert_eq!(
            m.flows.iter().map(|f| (f.src, f.start_ns, f.bytes)).collect::<Vec<_>>(),
            [(127, 0, 2_000_000), (95, 40_000, 250_000), (61, 40_000, 250_000)]
        );
        // A permutation: every host sends once and receives once.
        let m = read("perm_16n_16c_2MB.cm", cases[3].1);
        let mut srcs: Vec<u32> = m.flows.iter().map(|f| f.src).collect();
        let mut dsts: Vec<u32> = m.flows.iter().map(|f| f.dst).collect();
        srcs.sort_unstable();
        dsts.sort_unstable();
        assert_eq!((srcs.clone(), dsts), ((0..16).collect(), (0..16).collect::<Vec<u32>>()));
    }

    /// A ring all-reduce of three hosts in the shape `gen_allreduce.py`
    /// writes (2·3 − 1 steps a host, each step's flow starting on the one
    /// before it sent its last byte), and the runtime firing it.
    #[test]
    fn triggers_chain_flows_as_the_generators_write_them() {
        let text = "Nodes 8\nConnections 4\nTriggers 3\n\
            5->2 id 1 start 0 size 1000 send_done_trigger 1\n\
            2->7 id 2 trigger 1 size 1000 send_done_trigger 2\n\
            7->5 id 3 trigger 2 size 1000 send_done_trigger 3\n\
            5->2 id 4 trigger 3 size 1000\n\
            trigger id 1 oneshot\ntrigger id 2 oneshot\ntrigger id 3 oneshot\n";
        let m = parse(text, "ring.cm").unwrap();
        assert_eq!(m.flows.len(), 4);
        assert!(!m.triggers.waits(0) && m.triggers.waits(1) && m.triggers.waits(3));
        let mut r = Runtime::new(m.triggers.clone());
        let mut start = Vec::new();
        for (flow, next) in [(0, 1), (1, 2), (2, 3)] {
            start.clear();
            r.finished(flow, &mut start);
            assert_eq!(start, vec![next]);
        }
        start.clear();
        r.finished(3, &mut start);
        assert!(start.is_empty());
        // A one-shot trigger fires once.
        r.finished(0, &mut start);
        assert!(start.is_empty());
    }

    #[test]
    fn barriers_wait_for_their_count_and_multishots_start_one_each() {
        let text = "Nodes 4\nConnections 5\nTriggers 2\n\
            0->1 id 1 start 0 size 10 send_done_trigger 1\n\
            2->1 id 2 start 0 size 10 recv_done_trigger 1\n\
            1->3 id 3 trigger 1 size 10 send_done_trigger 2\n\
            3->0 id 4 trigger 2 size 10\n\
            3->2 id 5 trigger 2 size 10\n\
            trigger id 1 barrier count 2\ntrigger id 2 multishot\n";
        let m = parse(text, "t").unwrap();
        assert_eq!(m.triggers.kinds[&1], TriggerKind::Barrier { count: 2 });
        let mut r = Runtime::new(m.triggers.clone());
        let mut start = Vec::new();
        r.finished(0, &mut start);
        assert!(start.is_empty(), "one of two activations");
        r.finished(1, &mut start);
        assert_eq!(start, vec![2]);
        start.clear();
        r.finished(2, &mut start);
        assert_eq!(start, vec![3], "a multishot starts its first flow");
        start.clear();
        r.finished(2, &mut start);
        assert_eq!(start, vec![4], "then its next");
        start.clear();
        r.finished(2, &mut start);
        assert!(start.is_empty(), "and no more than it has");
    }

    /// Each malformed line is refused with its line and the token named.
    #[test]
    fn bad_matrices_are_refused_by_line_and_token() {
        let cases: [(&str, Option<usize>, &str); 14] = [
            ("Nodes 4\n0->1 start 0 size 10 prio 3\n", Some(2), "prio"),
            // The fuzz target's find: a flow from a host to itself.
            ("Nodes 4\nConnections 1\n2->2 start 0 size 10\n", Some(3), "src->dst"),
            ("Nodes 4\n0->1 start 0 size 10 msg 1\n", Some(2), "msg"),
            ("Nodes 4\n0->1 start 0 size 10 colour blue\n", Some(2), "colour"),
            ("Nodes 4\n0->1 start 0\n", Some(2), "size"),
            ("Nodes 4\n0->1 size 10\n", Some(2), "start"),
            ("Nodes 4\n0->x start 0 size 10\n", Some(2), "src->dst"),
            (
                "Nodes 4\n0->1 id 1 start 0 trigger 1 size 10\ntrigger id 1 oneshot\n",
                Some(2),
                "trigger",
            ),
            ("Nodes 4\n0->1 start 0 size 10 send_done_trigger 1\n", Some(2), "id"),
            (
                "Nodes 4\n0->1 id 1 start 0 size 10 send_done_trigger 9\n",
                Some(2),
                "trigger",
            ),
            ("Nodes 4\nConnections 2\n0->1 start 0 size 10\n", None, "Connections"),
            ("Nodes 4\n0->7 start 0 size 10\n", None, "src->dst"),
            (
                "Nodes 4\nFailures 1\nfailure switch_type TOR switch_id 0 link_id 0\n",
                Some(2),
                "Failures",
            ),
            ("Nodes 4\ntrigger id 1 barrier\n", Some(2), "count"),
        ];
        for (text, line, field) in cases {
            let e = parse(text, "bad.cm").unwrap_err();
            assert_eq!((e.line, e.field.as_str()), (line, field), "{text:?}: {e}");
            assert_eq!(e.file, "bad.cm");
        }
    }
}
