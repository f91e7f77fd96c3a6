//! The simulated world: network, hosts, flows, the event loop, and the
//! switches (output queues over a shared buffer, WRED/ECN and threshold
//! drop per LDCP §2.1 eq. (3), telemetry written at dequeue, ECMP).

use std::path::Path;

use cc_core::prelude::*;
use cc_core::wire::auth::{FeedbackKey, ReplayGuard, Verifier};
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::event::{ser_ps, Ev, EventQueue, Ps, PS_PER_NS};
use crate::metrics::{Metrics, PortSeries};
use crate::net::{flow_hash, Network, NodeKind};
use crate::packet::{EcnBits, PktKind, Slab};
use crate::scenario::{Algo, HpccMode, Scenario, ScenarioError};
use crate::telemetry::{HopState, Telemetry};
use crate::workload;

/// Flows per host NIC's engine table.
pub const FLOWS_PER_NIC: usize = 2048;

/// The engine a NIC runs: any algorithm, 5 hops of HPCC++ history.
pub type NicEngine = Engine<AnyController<8>, FLOWS_PER_NIC>;

/// A host: its NIC's engine, scheduler state and control queue.
pub struct Host {
    /// Node id.
    pub node: u32,
    /// The cc-core engine (sender and receiver roles).
    pub engine: Box<NicEngine>,
    /// Flows with data to send from this host.
    pub active: Vec<u32>,
    /// Round-robin position in `active`.
    pub rr: usize,
    /// Control packets waiting for the uplink (served before data).
    pub ctrl: std::collections::VecDeque<u32>,
    /// When the pending wake-up fires.
    pub wake_at: Option<Ps>,
    /// Integrity checks of notifications arriving here.
    pub verifier: Verifier,
}

/// A flow's sender and receiver state.
#[derive(Clone, Debug)]
pub struct Flow {
    /// The flow's index in `World::flows` and its id in the engine's table.
    pub id: u32,
    /// Source host index.
    pub src_host: u32,
    /// Destination host index.
    pub dst_host: u32,
    /// Payload bytes the flow carries in all.
    pub size: u64,
    /// When the flow starts, ps.
    pub start_ps: Ps,
    /// The flow's hash that picks its path among equal-cost ones (ECMP).
    pub hash: u32,
    /// Base RTT of the path, ns.
    pub base_rtt_ns: u32,
    /// Slowest link on the path, bit/s.
    pub bottleneck_bps: u64,
    /// Switches on the path.
    pub hops: usize,
    // Sender.
    /// Next byte to send.
    pub snd_nxt: u64,
    /// Cumulatively acknowledged bytes.
    pub snd_una: u64,
    /// Highest byte ever sent (retransmission accounting).
    pub max_sent: u64,
    /// Window from the engine.
    pub window: Window,
    /// Pacing rate from the engine (its decision's pacing, in bit/s).
    pub rate: Rate,
    /// Earliest next data packet (pacer).
    pub next_send_ps: Ps,
    /// The pacer's gap after the last data packet, always
    /// `ser_ps(pace_wire, rate)`; kept so that re-timing it on a new
    /// rate (every ACK may bring one) takes one division, not two.
    pub pace_gap_ps: Ps,
    /// Wire bytes of the last data packet.
    pub pace_wire: u32,
    /// Packets the LDCP timer released.
    pub credits: u32,
    /// Current CC timer generation.
    pub cc_gen: u32,
    /// Retransmission deadline (u64::MAX: none).
    pub rto_deadline: Ps,
    /// An Rto event is in the queue.
    pub rto_pending: bool,
    /// Finished (all bytes acknowledged).
    pub finish_ps: Option<Ps>,
    /// Data packets sent again.
    pub retransmits: u64,
    // Receiver.
    /// Next byte expected.
    pub rcv_nxt: u64,
    /// Packets received since the last ACK.
    pub unacked: u32,
    /// A CE mark waits to be echoed.
    pub ce_pending: bool,
    /// rcv_nxt for which a NACK went out.
    pub nack_for: Option<u64>,
    /// Bytes delivered in order (fairness windows read deltas).
    pub delivered: u64,
    /// Bytes the application has handed over so far (`size` unless the
    /// workload is on/off).
    pub app_limit: u64,
    /// An on/off flow waits for its next burst (one release queued).
    pub app_waiting: bool,
    /// Receiver: the number of the next window feedback it seals.
    pub feedback_seq: u32,
    /// Sender: the last feedback number accepted (replays are refused).
    pub feedback_guard: ReplayGuard,
}

/// Run settings derived from the scenario.
#[derive(Clone, Debug)]
pub struct RunCfg {
    /// Payload per data packet.
    pub payload: u32,
    /// Data header bytes.
    pub header: u32,
    /// Control packet bytes.
    pub ack_bytes: u32,
    /// ACK every n packets.
    pub ack_every: u32,
    /// Retransmission timeout.
    pub rto_ps: Ps,
    /// Telemetry.
    pub tel: Telemetry,
    /// Tag and verify notifications.
    pub integrity: bool,
    /// The algorithm.
    pub algo: Algo,
    /// HPCC++ placement.
    pub mode: HpccMode,
    /// Shared buffer per switch.
    pub buffer: u64,
    /// buf_max per port.
    pub port_buffer: u64,
    /// WRED/ECN: below this queue (bytes) no ECN-capable packet is marked.
    pub kmin: u64,
    /// WRED/ECN: above this queue (bytes) every ECN-capable packet is marked.
    pub kmax: u64,
    /// WRED/ECN: the marking probability at `kmax`, rising linearly from 0
    /// at `kmin`.
    pub pmax: f64,
    /// Eq. (3) threshold for ECN-incapable packets.
    pub drop_k: u64,
    /// The run ends at this simulated time, ps, whatever is unfinished.
    pub stop_ps: Ps,
    /// Metrics sampling period.
    pub sample_ps: Ps,
    /// Fairness window.
    pub window_ps: Ps,
    /// Warm-up.
    pub warmup_ps: Ps,
    /// Flows traced over time.
    pub trace_flows: u32,
    /// NIC Tx latency variation (exclusive upper bound; 0: none).
    pub tx_jitter_ps: Ps,
    /// Probability that a probe reply is lost.
    pub probe_loss: f64,
    /// On/off application: bytes per burst and the idle time after each.
    pub on_off: Option<(u64, Ps)>,
}

/// The simulated world.
pub struct World {
    /// The simulated clock, ps: the time of the event being handled.
    pub now: Ps,
    /// Pending events.
    pub q: EventQueue,
    /// Nodes, ports and links, and the routes between hosts.
    pub net: Network,
    /// Hosts, by host index.
    pub hosts: Vec<Host>,
    /// Flows, by id.
    pub flows: Vec<Flow>,
    /// Packets in flight.
    pub pkts: Slab,
    /// The run's settings, derived from the scenario.
    pub cfg: RunCfg,
    /// The seeded generator (WRED).
    pub rng: ChaCha8Rng,
    /// The NICs' Tx jitter, a stream of its own so that turning jitter on
    /// changes no other draw.
    pub jitter_rng: ChaCha8Rng,
    /// Draws probe-reply losses (a stream of its own, so turning loss on
    /// changes no other draw).
    pub loss_rng: ChaCha8Rng,
    /// What the run measures: counters, port series, flow traces.
    pub metrics: Metrics,
    /// The notification key shared by all NICs.
    pub key: FeedbackKey,
    /// Bytes buffered per switch (shared buffer).
    pub buffered: Vec<u64>,
    /// Flows not yet finished.
    pub unfinished: usize,
    /// Delivered bytes per flow at the last fairness window.
    pub(crate) last_delivered: Vec<u64>,
    /// Last fairness window end.
    pub(crate) last_window_ps: Ps,
    /// Event trace being recorded, if any (see [`World::record`]).
    pub trace: Option<crate::trace::TraceRecorder>,
    /// Firmware running some flows' congestion control (co-simulation).
    pub cosim: Option<crate::cosim::Firmware>,
}

/// Time constant of the switches' tx utilization estimate (INT-MD).
const UTIL_TAU_PS: f64 = 10_000_000.0;

impl World {
    /// Builds the world of a scenario; `dir` resolves relative paths.
    pub fn new(s: &Scenario, dir: &Path, file: &str) -> Result<Self, ScenarioError> {
        let err = |field: &str, message: String| ScenarioError {
            file: file.into(),
            line: None,
            field: field.into(),
            message,
        };
        let net = crate::topo::build(&s.topology);
        let link_bps = s.topology.link_gbps.0 as u64 * 1_000_000_000;
        let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
        let specs = workload::flows(&s.workload, net.hosts.len() as u32, link_bps, &mut rng, dir, file)?;
        let uniform = crate::topo::uniform_speed(&net);
        let tel = Telemetry::new(
            s.nic.telemetry,
            LinkSpeed::from_mbps((uniform.unwrap_or(link_bps) / 1_000_000) as u32),
            s.nic.ioam_prealloc,
        );
        if uniform.is_none()
            && matches!(
                s.nic.telemetry,
                crate::telemetry::TelFormat::IntMd | crate::telemetry::TelFormat::Ioam
            )
        {
            return Err(err(
                "nic.telemetry",
                "INT-MD and IOAM carry no link speed and the units profile gives one; this topology has several".into(),
            ));
        }
        let cfg = RunCfg {
            payload: s.nic.payload_bytes.0,
            header: s.nic.header_bytes,
            ack_bytes: s.nic.ack_bytes,
            ack_every: s.nic.ack_every.0,
            rto_ps: s.nic.rto_us.0 * 1_000 * PS_PER_NS,
            tel,
            integrity: s.nic.integrity,
            algo: s.cc.algorithm,
            mode: s.cc.mode,
            buffer: s.switch.buffer_bytes.0,
            port_buffer: s.switch.port_buffer_bytes.0,
            kmin: s.switch.ecn_kmin_bytes.0,
            kmax: s.switch.ecn_kmax_bytes.0,
            pmax: s.switch.ecn_pmax.0,
            drop_k: s.switch.drop_k_bytes.0,
            stop_ps: (s.stop_ms.0 * 1e9) as Ps,
            sample_ps: s.metrics.sample_ns.0 * PS_PER_NS,
            window_ps: s.metrics.window_ns.0 * PS_PER_NS,
            warmup_ps: s.metrics.warmup_ns * PS_PER_NS,
            trace_flows: s.metrics.trace_flows,
            tx_jitter_ps: s.nic.tx_jitter_ns.0 * PS_PER_NS,
            probe_loss: s.nic.probe_loss.0,
            on_off: s.workload.on_off.map(|o| (o.burst_bytes.0, o.idle_ns.0 * PS_PER_NS)),
        };
        let engine_cfg = crate::cc::engine_config(&s.cc, cfg.payload).map_err(|m| err("cc", m))?;
        let key = FeedbackKey::from_bytes(s.seed.to_le_bytes().repeat(2).try_into().unwrap_or([0; 16]));
        let mut hosts = Vec::new();
        for &node in &net.hosts {
            let engine = Box::new(NicEngine::new(engine_cfg).map_err(|e| err("cc", e.to_string()))?);
            hosts.push(Host {
                node,
                engine,
                active: Vec::new(),
                rr: 0,
                ctrl: Default::default(),
                wake_at: None,
                verifier: Verifier::new(key),
            });
        }
        let mut w = World {
            now: 0,
            q: EventQueue::default(),
            buffered: vec![0; net.nodes.len()],
            net,
            hosts,
            flows: Vec::new(),
            pkts: Slab::default(),
            cfg,
            rng,
            jitter_rng: ChaCha8Rng::seed_from_u64(s.seed ^ 0x6a09_e667_f3bc_c908),
            loss_rng: ChaCha8Rng::seed_from_u64(s.seed ^ 0xbb67_ae85_84ca_a73b),
            metrics: Metrics::default(),
            key,
            unfinished: specs.len(),
            last_delivered: vec![0; specs.len()],
            last_window_ps: 0,
            trace: None,
            cosim: None,
        };
        for (i, f) in specs.iter().enumerate() {
            w.add_flow(i as u32, f, s.cc.base_rtt_ns.map(|t| t.0));
        }
        w.monitor_ports();
        w.q.push(0, Ev::Sample);
        Ok(w)
    }

    fn add_flow(&mut self, id: u32, f: &crate::scenario::FlowSpec, fixed_rtt_ns: Option<u64>) {
        let (src, dst) = (self.net.hosts[f.src as usize], self.net.hosts[f.dst as usize]);
        let hash = flow_hash(id);
        let path = self.net.path(src, dst, hash);
        let back = self.net.path(dst, src, hash);
        let mtu_wire = self.cfg.payload + self.cfg.header + self.cfg.tel.wire_bytes(path.len());
        let ack_wire = self.cfg.ack_bytes + self.cfg.tel.wire_bytes(path.len());
        let mut rtt_ps: Ps = 0;
        let mut bottleneck = u64::MAX;
        for &(n, p) in &path {
            let port = &self.net.nodes[n as usize].ports[p as usize];
            rtt_ps += port.delay_ps + ser_ps(mtu_wire, port.bps);
            bottleneck = bottleneck.min(port.bps);
        }
        for &(n, p) in &back {
            let port = &self.net.nodes[n as usize].ports[p as usize];
            rtt_ps += port.delay_ps + ser_ps(ack_wire, port.bps);
        }
        let base_rtt_ns = fixed_rtt_ns
            .unwrap_or(rtt_ps / PS_PER_NS)
            .clamp(BaseRtt::MIN_NS as u64, BaseRtt::MAX_NS as u64) as u32;
        self.flows.push(Flow {
            id,
            src_host: f.src,
            dst_host: f.dst,
            size: f.bytes,
            start_ps: f.start_ns * PS_PER_NS,
            hash,
            base_rtt_ns,
            bottleneck_bps: bottleneck,
            hops: path.len().saturating_sub(1),
            snd_nxt: 0,
            snd_una: 0,
            max_sent: 0,
            window: Window::ZERO,
            rate: Rate::ZERO,
            next_send_ps: 0,
            pace_gap_ps: 0,
            pace_wire: 0,
            credits: 0,
            cc_gen: 0,
            rto_deadline: u64::MAX,
            rto_pending: false,
            finish_ps: None,
            retransmits: 0,
            rcv_nxt: 0,
            unacked: 0,
            ce_pending: false,
            nack_for: None,
            delivered: 0,
            app_limit: match self.cfg.on_off {
                Some((burst, _)) => burst.min(f.bytes),
                None => f.bytes,
            },
            app_waiting: false,
            feedback_seq: 0,
            feedback_guard: ReplayGuard::default(),
        });
        self.q.push(f.start_ns * PS_PER_NS, Ev::FlowStart { flow: id });
    }

    /// Monitors every switch port that is the last hop to a flow's
    /// destination, and every switch-to-switch port on a flow's path.
    fn monitor_ports(&mut self) {
        let mut ports = std::collections::BTreeSet::new();
        for f in &self.flows {
            let (src, dst) = (self.net.hosts[f.src_host as usize], self.net.hosts[f.dst_host as usize]);
            for (n, p) in self.net.path(src, dst, f.hash) {
                if self.net.nodes[n as usize].kind == NodeKind::Switch {
                    ports.insert((n, p));
                }
            }
        }
        for (n, p) in ports {
            let port = &mut self.net.nodes[n as usize].ports[p as usize];
            port.monitor = Some(self.metrics.ports.len());
            self.metrics.ports.push(PortSeries {
                name: format!("switch {n} port {p} → node {}", port.peer.0),
                bps: port.bps,
                ..Default::default()
            });
        }
        for i in 0..self.flows.len().min(self.cfg.trace_flows as usize) {
            self.metrics.traces.push(crate::metrics::FlowTrace {
                id: i as u32,
                ..Default::default()
            });
        }
    }

    /// Records the selected engine events from now on; take the trace with
    /// `world.trace.take().map(TraceRecorder::finish)`.
    pub fn record(&mut self, selection: crate::trace::Selection) {
        let cfg = *self.hosts[0].engine.config();
        self.trace = Some(crate::trace::TraceRecorder::new(&cfg, selection));
    }

    /// Runs the selected flows' congestion control in the firmware image
    /// `elf` under `runner` (co-simulation); call before [`World::run`] and
    /// take the firmware back with `world.cosim.take()` to finish it.
    pub fn cosimulate(&mut self, runner: &Path, elf: &Path, selection: crate::trace::Selection) -> Result<(), String> {
        let cfg = *self.hosts[0].engine.config();
        self.cosim = Some(crate::cosim::Firmware::spawn(runner, elf, &cfg, selection)?);
        Ok(())
    }

    /// Runs to completion or the stop time; `progress` is called with the
    /// simulated time now and then.
    pub fn run(&mut self, mut progress: impl FnMut(Ps)) {
        let mut n = 0u64;
        while let Some((t, ev)) = self.q.pop() {
            if t > self.cfg.stop_ps {
                break;
            }
            self.now = t;
            match ev {
                Ev::PortFree { node, port } => self.port_free(node, port),
                Ev::Arrive { node, port, pkt } => self.arrive(node, port, pkt),
                Ev::FlowStart { flow } => self.flow_start(flow),
                Ev::AppData { flow } => self.app_data(flow),
                Ev::CcTimer { flow, gen } => self.cc_timer(flow, gen),
                Ev::Rto { flow } => self.rto(flow),
                Ev::NicWake { host } => {
                    self.hosts[host as usize].wake_at = None;
                    self.try_send(host);
                }
                Ev::Sample => self.sample(),
            }
            n += 1;
            if n.is_multiple_of(1 << 16) {
                progress(self.now);
            }
            if self.unfinished == 0 && self.q.is_empty() {
                break;
            }
        }
        progress(self.now);
    }

    /// Starts serializing `pkt` on `node`'s `port`.
    pub(crate) fn transmit(&mut self, node: u32, port: u16, pkt: u32, ingress_port: u16) {
        let now = self.now;
        let is_switch = self.net.nodes[node as usize].kind == NodeKind::Switch;
        let p = &mut self.net.nodes[node as usize].ports[port as usize];
        let (packet, tel) = self.pkts.with_tel_mut(pkt);
        if let Some(tel) = tel.filter(|_| is_switch && packet.kind.collects_telemetry()) {
            let h = HopState {
                ts_ns: now / PS_PER_NS,
                ingress_ns: packet.ingress_ps / PS_PER_NS,
                tx_bytes: p.tx_bytes,
                qlen_bytes: p.queued_bytes,
                bps: p.bps,
                node,
                ingress_port,
                egress_port: port,
                util: p.util,
            };
            let before = tel.len;
            if self.cfg.tel.push_hop(tel, &h).is_ok() {
                packet.wire = packet.wire + tel.len as u32 - before as u32;
            }
        }
        if self.cfg.tel.format == crate::telemetry::TelFormat::IntMd {
            // Time-decayed tx rate: R ← R·e^(−Δt/τ) + bits/τ; util = R/B.
            let dt = (now - p.util_t) as f64;
            let decayed = p.util * (-dt / UTIL_TAU_PS).exp();
            p.util = decayed + packet.wire as f64 * 8.0 * 1e12 / UTIL_TAU_PS / p.bps as f64;
            p.util_t = now;
        }
        p.tx_bytes += packet.wire as u64;
        if packet.kind == PktKind::Data {
            if let Some(m) = p.monitor {
                self.metrics.ports[m].last_data_ps = now;
            }
        }
        let ser = ser_ps(packet.wire, p.bps);
        p.busy_until = now + ser;
        let peer = p.peer;
        let mut arrival = now + ser + p.delay_ps;
        if !is_switch && self.cfg.tx_jitter_ps > 0 {
            // Tx path jitter: a later arrival, never ahead of the packet before.
            arrival += rand_chacha::rand_core::Rng::next_u64(&mut self.jitter_rng) % self.cfg.tx_jitter_ps;
            arrival = arrival.max(p.last_arrival);
            p.last_arrival = arrival;
        }
        // A switch port needs a PortFree event only when a packet waits
        // behind this one (enqueue and port_free arrange that); a host's
        // NIC plans its own wake-up (plan_next).
        self.q.push(
            arrival,
            Ev::Arrive {
                node: peer.0,
                port: peer.1,
                pkt,
            },
        );
    }

    fn port_free(&mut self, node: u32, port: u16) {
        let p = &mut self.net.nodes[node as usize].ports[port as usize];
        p.free_pending = false;
        if let Some(pkt) = p.queue.pop_front() {
            let wire = self.pkts.get(pkt).wire as u64;
            p.queued_bytes -= wire;
            self.buffered[node as usize] -= wire;
            let more = !p.queue.is_empty();
            let ingress = self.pkts.get(pkt).ingress_port;
            self.transmit(node, port, pkt, ingress);
            if more {
                self.schedule_free(node, port);
            }
        }
    }

    /// Queues the PortFree event of a switch port at its busy_until.
    fn schedule_free(&mut self, node: u32, port: u16) {
        let p = &mut self.net.nodes[node as usize].ports[port as usize];
        if !p.free_pending {
            p.free_pending = true;
            let t = p.busy_until;
            self.q.push(t, Ev::PortFree { node, port });
        }
    }

    fn arrive(&mut self, node: u32, port: u16, pkt: u32) {
        if self.net.nodes[node as usize].kind == NodeKind::Host {
            let host = self.net.host_index[node as usize];
            self.receive(host, pkt);
            return;
        }
        let (dst, hash) = {
            let p = self.pkts.get(pkt);
            (p.dst, self.flows[p.flow as usize].hash)
        };
        let Some(egress) = self.net.next_port(node, dst, hash) else {
            self.metrics.counters.drops += 1;
            self.pkts.remove(pkt);
            return;
        };
        let p = self.pkts.get_mut(pkt);
        p.ingress_ps = self.now;
        p.ingress_port = port;
        self.enqueue(node, egress, pkt, port);
    }

    /// WRED/ECN (LDCP §2.1): ECN-capable packets are marked with
    /// p = (q − K_min)/(K_max − K_min)·P_max between the thresholds and
    /// always above K_max; ECN-incapable data is dropped at q ≥ K (eq. 3);
    /// anything is dropped when the port passes buf_max or the shared
    /// buffer is full.
    fn enqueue(&mut self, node: u32, port: u16, pkt: u32, ingress: u16) {
        let cfg = &self.cfg;
        let p = &self.net.nodes[node as usize].ports[port as usize];
        let q = p.queued_bytes;
        let (wire, ecn, kind) = {
            let x = self.pkts.get(pkt);
            (x.wire as u64, x.ecn, x.kind)
        };
        let full = q + wire > cfg.port_buffer || self.buffered[node as usize] + wire > cfg.buffer;
        let threshold_drop = ecn == EcnBits::NotEct && kind == PktKind::Data && q >= cfg.drop_k;
        if full || threshold_drop {
            let c = &mut self.metrics.counters;
            c.drops += 1;
            if threshold_drop && !full {
                c.drops_fast_start += 1;
            } else if ecn != EcnBits::NotEct {
                c.drops_stable += 1;
            }
            self.pkts.remove(pkt);
            return;
        }
        if ecn == EcnBits::Ect {
            let mark = if q >= cfg.kmax {
                true
            } else if q >= cfg.kmin && cfg.kmax > cfg.kmin {
                let prob = (q - cfg.kmin) as f64 / (cfg.kmax - cfg.kmin) as f64 * cfg.pmax;
                crate::workload::unit(&mut self.rng) < prob
            } else {
                false
            };
            if mark {
                self.pkts.get_mut(pkt).ecn = EcnBits::Ce;
                self.metrics.counters.ecn_marks += 1;
            }
        }
        let p = &mut self.net.nodes[node as usize].ports[port as usize];
        if let Some(m) = p.monitor {
            let s = &mut self.metrics.ports[m];
            s.max_queue = s.max_queue.max(q + wire);
        }
        if self.now < p.busy_until || !p.queue.is_empty() {
            p.queue.push_back(pkt);
            p.queued_bytes += wire;
            self.buffered[node as usize] += wire;
            self.schedule_free(node, port);
        } else {
            self.transmit(node, port, pkt, ingress);
        }
    }

    fn sample(&mut self) {
        let now = self.now;
        let t = crate::metrics::ns(now);
        for n in &self.net.nodes {
            for p in &n.ports {
                if let Some(m) = p.monitor {
                    let s = &mut self.metrics.ports[m];
                    s.t_ns.push(t);
                    s.queue.push(p.queued_bytes);
                    s.tx_bytes.push(p.tx_bytes);
                }
            }
        }
        for tr in &mut self.metrics.traces {
            let f = &self.flows[tr.id as usize];
            if f.finish_ps.is_none() && now >= f.start_ps {
                tr.t_ns.push(t);
                tr.window.push(f.window.to_fixed().to_num::<f64>());
                tr.rate_gbps.push(f.rate.as_bps() as f64 / 1e9);
            }
        }
        if now >= self.last_window_ps + self.cfg.window_ps {
            let mut x = Vec::new();
            for f in &self.flows {
                let started = f.start_ps < now;
                let active_all_window = f.start_ps <= self.last_window_ps && f.finish_ps.is_none_or(|e| e >= now);
                if started && active_all_window {
                    x.push((f.delivered - self.last_delivered[f.id as usize]) as f64);
                }
            }
            for f in &self.flows {
                self.last_delivered[f.id as usize] = f.delivered;
            }
            if x.len() >= 2 {
                self.metrics.jain.push((t, crate::metrics::jain(&x), x.len()));
            }
            self.last_window_ps = now;
        }
        if self.unfinished > 0 {
            self.q.push(now + self.cfg.sample_ps, Ev::Sample);
        }
    }
}
