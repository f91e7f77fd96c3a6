//! How a scenario becomes a world: the topology, the flows and their
//! base RTTs, the run's settings, a NIC per host and a switch per switch
//! node, and the ports whose queues the run monitors.

use std::path::Path;

use cc_core::hpcc::{MAX_RTTS, MAX_SPEEDS};
use cc_core::prelude::*;
use cc_core::wire::auth::{FeedbackKey, Verifier};
use cc_core::wire::pint::PintWidth;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Component, Rngs, RunCfg, Tap, World};
use crate::model::flow::{FlowRecord, NOWHERE};
use crate::model::net::{salted_flow_hash, Ecmp, NodeKind};
use crate::model::nic::processor::Processor;
use crate::model::nic::{Nic, NicEngine, Profile};
use crate::model::packet::Slab;
use crate::model::switch::{Egress, Switch};
use crate::model::telemetry::Telemetry;
use crate::output::metrics::{Metrics, PortSeries};
use crate::run::event::{ser_ps, Ev, EventQueue, Ps};
use crate::setup::scenario::{Scenario, ScenarioError, Transport};
use crate::setup::workload;

impl World {
    /// Builds the world of a scenario; `dir` resolves relative paths.
    pub fn new(s: &Scenario, dir: &Path, file: &str) -> Result<Self, ScenarioError> {
        let err = |field: &str, message: String| ScenarioError {
            file: file.into(),
            line: None,
            field: field.into(),
            message,
        };
        let mut net =
            crate::setup::topo::build(&s.topology, dir).map_err(|m| match m.strip_prefix("failed_links: ") {
                Some(why) => err("topology.failed_links", why.into()),
                // A built-in shape's error is its size ([`check_size`]).
                None if s.topology.shape.size().is_some() => err("topology.kind", m),
                None => err("topology.path", m),
            })?;
        s.switch.check_ecmp().map_err(|(f, m)| err(f, m))?;
        net.set_ecmp(s.switch.ecmp);
        let link_bps = s.topology.link_gbps.0 as u64 * 1_000_000_000;
        let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
        let (specs, triggers) = workload::flows(&s.workload, net.hosts.len() as u32, link_bps, &mut rng, dir, file)?;
        let uniform = crate::setup::topo::uniform_speed(&net);
        let mut tel = Telemetry::new(
            s.nic.telemetry,
            LinkSpeed::from_mbps((uniform.unwrap_or(link_bps) / 1_000_000) as u32),
            s.nic.ioam_prealloc,
        );
        tel.pint = if s.nic.pint_bytes == 1 {
            PintWidth::One
        } else {
            PintWidth::Two
        };
        tel.pint_sampling = s.nic.pint_sampling.0;
        let marking = s.switch.marking(&s.cc.algorithm, s.topology.link_gbps.0);
        // The switches' egress parts, each checked as it is read.
        let egress = Egress::from_scenario(s, link_bps, tel.format).map_err(|(field, why)| err(field, why))?;
        let control_priority = egress.control.is_some();
        let mut cfg = RunCfg {
            payload: s.nic.payload_bytes.0,
            header: s.nic.header_bytes.0,
            ack_bytes: s.nic.ack_bytes.0,
            ack_every: s.nic.ack_every.0,
            rto_ps: match s.nic.transport {
                Transport::GoBackN => Ps::from_ns(
                    s.nic
                        .rto_us_for(s.switch.port_buffer_bytes.0, s.topology.link_gbps.0)
                        .saturating_mul(1_000),
                ),
                Transport::Sack => Ps::from_ps(s.nic.sack_rto_ps(s.switch.port_buffer_bytes.0, s.topology.link_gbps.0)),
            },
            tel,
            port_speeds: crate::model::telemetry::port_speeds(&net),
            integrity: s.nic.integrity,
            control_priority,
            marking,
            algorithm: s.cc.algorithm.label(),
            stop_ps: Ps::from_ms_f64(s.stop_ms.0),
            sample_ps: Ps::from_ns(s.metrics.sample_ns.0),
            window_ps: Ps::from_ns(s.metrics.window_ns.0),
            warmup_ps: Ps::from_ns(s.metrics.warmup_ns),
            trace_flows: s.metrics.trace_flows,
            // Set with the senders' profile below.
            ack_cases: &[],
            sender_name: "",
            tx_jitter_ps: Ps::from_ns(s.nic.tx_jitter_ns.0),
            probe_loss: s.nic.probe_loss.0,
            on_off: s.workload.on_off.map(|o| (o.burst_bytes.0, Ps::from_ns(o.idle_ns.0))),
            rx_buffer: s.nic.rx_drain_gbps.map(|g| (g.0, s.nic.rx_buffer_bytes.0)),
            sack_bytes: (s.nic.transport == Transport::Sack).then(|| s.nic.sack_bytes.map_or(16_384, |b| b.0)),
            sleek: s.nic.sleek,
            spray: match s.nic.paths.0 {
                1 => None,
                n => Some((
                    u16::try_from(n)
                        .ok()
                        .and_then(cc_core::path::Paths::new)
                        .ok_or_else(|| {
                            err(
                                "nic.paths",
                                format!(
                                    "must be 1 or a power of two up to {} (got {n})",
                                    cc_core::path::MAX_PATHS
                                ),
                            )
                        })?,
                    s.nic.load_balancing,
                )),
            },
        };
        if cfg.spray.is_some() && cfg.sack_bytes.is_none() {
            return Err(err(
                "nic.paths",
                "spraying needs transport = \"sack\" (go-back-N would resend every reordered packet)".into(),
            ));
        }
        if s.nic.sack_bytes.is_some() && s.nic.transport != Transport::Sack {
            return Err(err("nic.sack_bytes", "applies to transport = \"sack\" only".into()));
        }
        if cfg.sack_bytes.is_some() && cfg.rx_buffer.is_some() {
            return Err(err(
                "nic.transport",
                "\"sack\" and a draining Rx buffer (nic.rx_drain_gbps) are not modelled together".into(),
            ));
        }
        if cfg.rx_buffer.is_some() && s.nic.rx_buffer_bytes.0 < cfg.payload as u64 {
            return Err(err(
                "nic.rx_buffer_bytes",
                format!("must hold one packet's payload ({} bytes)", cfg.payload),
            ));
        }
        // The SACK transport counts bytes in flight as they go on the wire,
        // headers and all, as uet-htsim does: a window's packet is a whole
        // one.
        let mtu = match s.nic.transport {
            Transport::GoBackN => cfg.payload,
            Transport::Sack => cfg.payload + cfg.header as u32,
        };
        let engine_cfg = crate::setup::scenario::engine_config(&s.cc, mtu).map_err(|m| err("cc", m))?;
        let profile = Profile::of(&s.cc, &engine_cfg);
        (cfg.ack_cases, cfg.sender_name) = (profile.sender.ack_cases(), profile.sender.name());
        if s.nic.sleek && (cfg.sack_bytes.is_none() || !crate::model::nic::nscc_sums::is_nscc(profile.sender)) {
            return Err(err(
                "nic.sleek",
                "needs transport = \"sack\" and cc.algorithm = \"nscc\" (its thresholds are NSCC's window and base RTT)".into(),
            ));
        }
        let sack_misfit = if profile.gate == cc_core::params::Gate::WindowOrTicks {
            Some("sub-packet windows released by the engine's timer (LDCP's)")
        } else if profile.cnp_on_ce.is_some() {
            Some("CNPs")
        } else if profile.receiver.is_some() {
            Some("a receiver engine (Rx-HPCC, probes)")
        } else {
            None
        };
        if let (Some(what), true) = (sack_misfit, cfg.sack_bytes.is_some()) {
            return Err(err(
                "nic.transport",
                format!("\"sack\" carries ACKs and NACKs only, not {what}: the algorithm needs go-back-N"),
            ));
        }
        let key = FeedbackKey::from_bytes(s.seed.to_le_bytes().repeat(2).try_into().unwrap_or([0; 16]));
        let processor = match &s.nic.cc_processor {
            Some(p) => {
                Some(crate::setup::scenario::processor_params(p, profile.sender, dir).map_err(|(f, m)| err(f, m))?)
            }
            None => None,
        };
        // Each host's flows in all: what its engine table may have to hold.
        let mut per_host = vec![0usize; net.hosts.len()];
        for f in &specs {
            if let Some(n) = per_host.get_mut(f.src as usize) {
                *n += 1;
            }
            if let (Some(n), Some(_)) = (per_host.get_mut(f.dst as usize), profile.receiver) {
                *n += 1;
            }
        }
        let mut nics = Vec::new();
        for (host, &node) in net.hosts.iter().enumerate() {
            let engine = NicEngine::new(engine_cfg, per_host[host], cfg.spray.is_some())
                .map_err(|e| err("cc", e.to_string()))?;
            let uplink = net.nodes[node as usize].ports[0];
            let mut nic = Nic::new(host as u32, node, uplink, engine, profile, Verifier::new(key));
            nic.ccp = processor.map(|p| Box::new(Processor::new(p)));
            nics.push(nic);
        }
        let mut switches = Vec::new();
        let mut component = Vec::with_capacity(net.nodes.len());
        for (node, n) in net.nodes.iter().enumerate() {
            component.push(match n.kind {
                NodeKind::Host => Component::Nic(net.host_index[node]),
                NodeKind::Switch => {
                    let degraded: Vec<u16> = net
                        .degraded
                        .iter()
                        .filter(|d| d.0 == node as u32)
                        .map(|d| d.1)
                        .collect();
                    let mut sw = Switch::new(node as u32, &n.ports, egress, &degraded);
                    sw.latency = Ps::from_ns(s.switch.latency_ns.0);
                    switches.push(sw);
                    Component::Switch(switches.len() as u32 - 1)
                }
            });
        }
        let mut w = World {
            now: Ps::ZERO,
            q: EventQueue::default(),
            net,
            nics,
            switches,
            component,
            flows: Vec::with_capacity(specs.len()),
            pkts: Slab::new(cfg.tel.room()),
            cfg,
            rng: Rngs {
                wred: rng,
                jitter: ChaCha8Rng::seed_from_u64(s.seed ^ 0x6a09_e667_f3bc_c908),
                loss: ChaCha8Rng::seed_from_u64(s.seed ^ 0xbb67_ae85_84ca_a73b),
                pint: ChaCha8Rng::seed_from_u64(s.seed ^ 0x3c6e_f372_fe94_f82b),
                trim: ChaCha8Rng::seed_from_u64(s.seed ^ 0xa54f_f53a_5f1d_36f1),
                ev: ChaCha8Rng::seed_from_u64(s.seed ^ 0x510e_527f_ade6_82d1),
            },
            metrics: Metrics::default(),
            key,
            tap: Tap::default(),
            unfinished: specs.len(),
            finished: Vec::new(),
            last_delivered: vec![0; specs.len()],
            window_flows: Vec::new(),
            window_admitted: 0,
            #[cfg(test)]
            every_delivered: vec![0; specs.len()],
            #[cfg(test)]
            windows_checked: 0,
            last_window_ps: Ps::ZERO,
            starts: Vec::new(),
            next_start: 0,
            start_seq: 0,
            triggers: crate::setup::connection_matrix::Runtime::new(triggers),
        };
        // The reference simulator numbers a host pair's flows' source
        // ports from 10 000 (`portNumder`).
        let mut pair_ports: std::collections::HashMap<(u32, u32), u32> = std::collections::HashMap::new();
        for (i, f) in specs.iter().enumerate() {
            let (hash, back_hash) = match w.net.ecmp {
                Ecmp::FlowHash => {
                    let h = salted_flow_hash(i as u32, s.switch.ecmp_salt);
                    (h, h)
                }
                Ecmp::Reference => {
                    let n = pair_ports.entry((f.src, f.dst)).or_insert(10_000);
                    let sport = *n & 0xFFFF;
                    *n += 1;
                    let dport = f.dport as u32;
                    (sport | dport << 16, dport | sport << 16)
                }
            };
            w.add_flow(i as u32, f, s.cc.base_rtt_ns.map(|t| t.0), hash, back_hash);
        }
        w.metrics.nscc = crate::model::nic::nscc_sums::for_run(profile.sender, w.flows.len());
        // PINT's switches average over the fabric's largest base RTT (the
        // reference's m_maxRtt), the flows' T where one is given.
        w.cfg.tel.pint_t_ns = w.flows.iter().map(|f| f.base_rtt_ns as u64).max().unwrap_or(10_000);
        // The engines multiply by the reciprocals of the fabric's link
        // speeds and the flows' base RTTs, as a NIC is configured for its
        // fabric; a value left out would cost a division, never a result.
        let mut engine_cfg = engine_cfg;
        engine_cfg.hpcc.reciprocals = w.fabric_reciprocals();
        for nic in &mut w.nics {
            nic.engine.reset(engine_cfg).map_err(|e| err("cc", e.to_string()))?;
        }
        // One FlowStart pending at a time, the next by (start, id), under
        // the sequence number it would have had if all were queued now: the
        // order of events is the same, and the queue holds the flows in
        // flight, not the 10^5 still to come.
        w.start_seq = w.q.reserve(w.flows.len() as u64);
        // A flow that waits for a trigger starts when it fires (`NEVER`
        // until then), never from `starts`.
        for (i, f) in w.flows.iter_mut().enumerate() {
            if w.triggers.waits(i as u32) {
                f.start_ps = Ps::NEVER;
            }
        }
        let mut starts: Vec<u32> = (0..w.flows.len() as u32).filter(|&id| !w.triggers.waits(id)).collect();
        starts.sort_by_key(|&id| (w.flows[id as usize].start_ps, id));
        w.starts = starts;
        w.schedule_next_start();
        w.monitor_ports();
        w.q.push(Ps::ZERO, Ev::Sample);
        Ok(w)
    }

    fn add_flow(
        &mut self,
        id: u32,
        f: &crate::setup::scenario::FlowSpec,
        fixed_rtt_ns: Option<u64>,
        hash: u32,
        back_hash: u32,
    ) {
        let (src, dst) = (self.net.hosts[f.src as usize], self.net.hosts[f.dst as usize]);
        let path = self.net.path(src, dst, hash);
        let back = self.net.path(dst, src, back_hash);
        let mtu_wire = self.cfg.payload + u32::from(self.cfg.header) + self.cfg.tel.wire_bytes(path.len());
        let ack_wire = u32::from(self.cfg.ack_bytes) + self.cfg.tel.wire_bytes(path.len());
        let mut rtt_ps = Ps::ZERO;
        let mut bottleneck = u64::MAX;
        for &(n, p) in &path {
            let link = &self.net.nodes[n as usize].ports[p as usize];
            rtt_ps += link.delay_ps + ser_ps(mtu_wire, link.bps);
            bottleneck = bottleneck.min(link.bps);
        }
        for &(n, p) in &back {
            let link = &self.net.nodes[n as usize].ports[p as usize];
            rtt_ps += link.delay_ps + ser_ps(ack_wire, link.bps);
        }
        // Each switch's forwarding latency, both ways: every hop of a
        // path but the first leaves a switch.
        let switches = (path.len() + back.len()).saturating_sub(2) as u64;
        let latency = self.switches.first().map_or(Ps::ZERO, |s| s.latency);
        rtt_ps += Ps::from_ps(latency.as_ps() * switches);
        let clamp = |ns: u64| ns.clamp(BaseRtt::MIN_NS as u64, BaseRtt::MAX_NS as u64) as u32;
        let path_rtt_ns = clamp(rtt_ps.as_ns());
        let base_rtt_ns = fixed_rtt_ns.map_or(path_rtt_ns, clamp);
        self.flows.push(FlowRecord {
            id,
            src_host: f.src,
            dst_host: f.dst,
            size: f.bytes,
            start_ps: Ps::from_ns(f.start_ns),
            hash,
            back_hash,
            base_rtt_ns,
            path_rtt_ns,
            bottleneck_bps: bottleneck,
            hops: path.len().saturating_sub(1),
            dport: f.dport,
            finish_ps: None,
            retransmits: 0,
            tx_at: NOWHERE,
            rx_at: NOWHERE,
        });
    }

    /// The reciprocal table for this fabric: its most common link speeds
    /// and its flows' most common base RTTs, as many as the table holds
    /// (ties by value, so the same scenario gives the same table).
    fn fabric_reciprocals(&self) -> Reciprocals {
        fn most_common(counts: std::collections::BTreeMap<u32, usize>, room: usize) -> Vec<u32> {
            let mut v: Vec<(u32, usize)> = counts.into_iter().collect();
            v.sort_by_key(|&(value, n)| (std::cmp::Reverse(n), value));
            v.into_iter().take(room).map(|(value, _)| value).collect()
        }
        let mut speeds = std::collections::BTreeMap::new();
        for port in self.net.nodes.iter().flat_map(|n| &n.ports) {
            let b = LinkSpeed::from_mbps((port.bps / 1_000_000) as u32);
            if b.is_plausible() {
                *speeds.entry(b.as_mbps()).or_insert(0) += 1;
            }
        }
        let mut rtts = std::collections::BTreeMap::new();
        for f in &self.flows {
            *rtts.entry(f.base_rtt_ns).or_insert(0) += 1;
        }
        let speeds: Vec<LinkSpeed> = most_common(speeds, MAX_SPEEDS)
            .into_iter()
            .map(LinkSpeed::from_mbps)
            .collect();
        let rtts: Vec<BaseRtt> = most_common(rtts, MAX_RTTS)
            .into_iter()
            .filter_map(BaseRtt::from_nanos)
            .collect();
        // Within the table's room and plausible by construction.
        Reciprocals::new(&speeds, &rtts).unwrap_or_default()
    }

    /// Monitors every switch port that is the last hop to a flow's
    /// destination, and every switch-to-switch port on a flow's path.
    fn monitor_ports(&mut self) {
        let mut ports = std::collections::BTreeSet::new();
        for f in &self.flows {
            let (src, dst) = (self.net.hosts[f.src_host as usize], self.net.hosts[f.dst_host as usize]);
            for (n, p) in self.net.path(src, dst, f.hash) {
                if let Component::Switch(sw) = self.component[n as usize] {
                    ports.insert((n, p, sw));
                }
            }
        }
        for (n, p, sw) in ports {
            let port = &mut self.switches[sw as usize].ports[p as usize];
            port.monitor = Some(self.metrics.ports.len());
            self.metrics.ports.push(PortSeries {
                name: format!("switch {n} port {p} → node {}", port.link.peer.0),
                bps: port.link.bps,
                ..Default::default()
            });
        }
        for i in 0..self.flows.len().min(self.cfg.trace_flows as usize) {
            self.metrics.traces.push(crate::output::metrics::FlowTrace {
                id: i as u32,
                case_names: self.cfg.ack_cases,
                ..Default::default()
            });
        }
    }
}
