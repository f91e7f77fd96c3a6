//! Scenarios: what a run simulates, as typed values. A topology, a
//! workload and a congestion control are enums, so a field that does not
//! apply to the kind chosen cannot be written; tests build `Scenario`
//! values directly, files go through [`parse`] and [`load`].
//!
//! A file is TOML. Every field is checked while it is read, so a bad file
//! is refused with its path, line and field:
//!
//! ```text
//! scenarios/x.toml:7: topology.link_gbps: must be in 1 ..= 1600 (got 0)
//! scenarios/x.toml:8: topology.hosts: does not apply to kind = "incast"
//! ```

mod cc;
mod engine;
mod file;
mod processor;

use std::fmt;
use std::path::Path;

use serde::Deserialize;

pub use self::cc::*;
pub use self::engine::engine_config;
pub use self::file::{line_of_field, parse};
pub use self::processor::params as processor_params;
use crate::model::telemetry::TelFormat;

/// The smallest complete scenario file: two senders into one receiver at
/// 100 Gb/s under HPCC++, 1 MB each, for 1 ms. Every other field takes its
/// default (docs/scenarios.md). `topology.kind` is on line 5,
/// `cc.algorithm` on line 10, `workload.kind` on line 12.
pub const MINIMAL: &str = r#"
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
ranged!(Count, u32, 1, 100_000, "A count of hosts or switches.");
ranged!(
    FlowCount,
    u32,
    1,
    100_000_000,
    "A count of flows (a 100 ms FB_Hadoop run on 320 hosts has about a million)."
);
ranged!(Bytes, u64, 0, 1u64 << 40, "A byte count.");
ranged!(Prob, f64, 0.0, 1.0, "A probability or ratio in [0, 1].");
ranged!(Payload, u32, 64, 9000, "Payload bytes per packet.");
ranged!(
    HeaderBytes,
    u16,
    0,
    4096,
    "Header bytes of a packet before its payload and telemetry (a packet's size then fits in 16 bits)."
);
ranged!(Stage, u8, 0, 15, "HPCC++ maxStage.");
ranged!(Gamma, f64, 0.0009765625, 0.5, "LDCP gamma (2^-10 ..= 1/2).");
ranged!(TimeMs, f64, 0.001, 100_000.0, "A simulated time in ms.");
ranged!(TimeNs, u64, 1, 1_000_000_000_000, "A simulated time in ns.");
ranged!(Cores, u16, 1, 1024, "Cores of a NIC's congestion-control processor.");
ranged!(Ghz, f64, 0.01, 100.0, "A clock in GHz.");
ranged!(Ipc, f64, 0.01, 64.0, "Instructions per cycle.");
ranged!(Depth, u32, 1, 1_000_000, "Events a queue holds.");

/// A whole scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Name shown in reports.
    pub name: String,
    /// What it shows.
    pub description: String,
    /// Seed of every random choice.
    pub seed: u64,
    /// Simulated time after which the run stops even if flows remain.
    pub stop_ms: TimeMs,
    /// The network.
    pub topology: Topology,
    /// Switch buffers and AQM.
    pub switch: SwitchCfg,
    /// NIC behaviour.
    pub nic: NicCfg,
    /// Congestion control.
    pub cc: CcCfg,
    /// The flows.
    pub workload: Workload,
    /// What to measure.
    pub metrics: MetricsCfg,
}

impl Scenario {
    /// A scenario of `topology`, `cc` and `workload`, everything else at
    /// its default (seed 1), stopping after `stop_ms`.
    pub fn new(name: &str, stop_ms: f64, topology: Topology, cc: CcCfg, workload: Workload) -> Self {
        Scenario {
            name: name.into(),
            description: String::new(),
            seed: 1,
            stop_ms: TimeMs(stop_ms),
            topology,
            switch: SwitchCfg::default(),
            nic: NicCfg::default(),
            cc,
            workload,
            metrics: MetricsCfg::default(),
        }
    }
}

/// The network: a shape, and the speed and delay of its host links.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// The shape.
    pub shape: Shape,
    /// Host link speed.
    pub link_gbps: Gbps,
    /// Per-link propagation delay (0 for [`Shape::Ns3`] and
    /// [`Shape::Htsim`], whose files give it).
    pub link_delay_ns: DelayNs,
    /// Links degraded to a quarter of their rate and buffer, as
    /// uet-htsim's `-failed N` (fat-trees and leaf-spines only; see
    /// `setup::topo`). 0: none.
    pub failed_links: u32,
}

impl Topology {
    /// `senders` hosts and one receiver (host 0) on one switch, every link
    /// at `link_gbps` with `link_delay_ns` of propagation.
    pub fn incast(senders: u32, link_gbps: u32, link_delay_ns: u64) -> Self {
        Topology {
            shape: Shape::Incast {
                senders: Count(senders),
            },
            link_gbps: Gbps(link_gbps),
            link_delay_ns: DelayNs(link_delay_ns),
            failed_links: 0,
        }
    }
}

/// A topology's shape (`kind` in a file).
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// `hosts` hosts on one switch.
    Star {
        /// Hosts.
        hosts: Count,
    },
    /// `senders` hosts and one receiver (host 0) on one switch.
    Incast {
        /// Senders.
        senders: Count,
    },
    /// `left` hosts on one switch, `right` on another, one link between.
    Dumbbell {
        /// Hosts on the left switch.
        left: Count,
        /// Hosts on the right switch.
        right: Count,
        /// Switch-to-switch speed (default: the host link speed).
        bottleneck_gbps: Option<Gbps>,
    },
    /// Two tiers: every leaf to every spine.
    LeafSpine {
        /// Leaves.
        leaves: Count,
        /// Spines.
        spines: Count,
        /// Hosts per leaf.
        hosts_per_leaf: Count,
        /// Leaf-to-spine speed (default: the host link speed).
        fabric_gbps: Option<Gbps>,
    },
    /// Three tiers: `pods` pods of `tors_per_pod` ToRs with
    /// `hosts_per_tor` hosts each; every ToR to the `aggs_per_pod`
    /// aggregation switches of its pod; aggregation switch j of every pod
    /// to its own group of `cores_per_agg` cores (`aggs_per_pod ·
    /// cores_per_agg` cores). A k-ary fat-tree is `pods = k` and k/2 of
    /// each of the others (`kind = "k_ary_fat_tree"`, `k = …` in a file).
    FatTree {
        /// Pods.
        pods: Count,
        /// ToR switches per pod.
        tors_per_pod: Count,
        /// Hosts per ToR.
        hosts_per_tor: Count,
        /// Aggregation switches per pod.
        aggs_per_pod: Count,
        /// Core switches each aggregation switch links to.
        cores_per_agg: Count,
        /// Speed of every switch-to-switch link (default: the host link
        /// speed).
        fabric_gbps: Option<Gbps>,
    },
    /// A topology file of the HPCC reference simulator (and of the ns-3
    /// trees built on it, such as the PowerTCP authors'): nodes, switches
    /// and every link with its own speed and delay
    /// ([`crate::setup::topo::ns3_topology`]). Relative to the scenario.
    Ns3 {
        /// The file.
        path: String,
    },
    /// An htsim fat-tree topology file (uet-htsim's `topologies/*.topo`):
    /// the leaf-spine or three-tier fat-tree it describes, its host links'
    /// speed and every link's delay from the file
    /// ([`crate::setup::htsim_topo`]). Relative to the scenario.
    Htsim {
        /// The file.
        path: String,
    },
}

/// The most routing entries (a node and a host each: 4 bytes naming the
/// next hops, where every host keeps a column of its own; hosts behind
/// one switch share theirs, `model::net::Routes`) a network may need:
/// 2^30, some 4 GiB. uet-htsim's 8192-host leaf-spine needs 2^26.0; a
/// topology above this is refused before anything is built, where it
/// could otherwise end the process with an allocation failure.
pub const MAX_ROUTING_ENTRIES: u64 = 1 << 30;

impl Shape {
    /// (hosts, switches) of a built-in shape; `None` for a file's.
    pub fn size(&self) -> Option<(u64, u64)> {
        let c = |c: &Count| c.0 as u64;
        Some(match self {
            Shape::Star { hosts } => (c(hosts), 1),
            Shape::Incast { senders } => (c(senders) + 1, 1),
            Shape::Dumbbell { left, right, .. } => (c(left) + c(right), 2),
            Shape::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                ..
            } => (c(leaves) * c(hosts_per_leaf), c(leaves) + c(spines)),
            Shape::FatTree {
                pods,
                tors_per_pod,
                hosts_per_tor,
                aggs_per_pod,
                cores_per_agg,
                ..
            } => (
                c(pods) * c(tors_per_pod) * c(hosts_per_tor),
                c(pods) * (c(tors_per_pod) + c(aggs_per_pod)) + c(aggs_per_pod) * c(cores_per_agg),
            ),
            Shape::Ns3 { .. } | Shape::Htsim { .. } => return None,
        })
    }
}

/// Refuses a network of `hosts` hosts and `switches` switches whose
/// routing tables would pass [`MAX_ROUTING_ENTRIES`] (each count is below
/// 2^51, so the products fit).
pub fn check_size(hosts: u64, switches: u64) -> Result<(), String> {
    let nodes = hosts + switches;
    let entries = nodes.saturating_mul(hosts);
    if entries > MAX_ROUTING_ENTRIES {
        return Err(format!(
            "{hosts} hosts and {switches} switches: routing tables of {nodes} nodes × {hosts} hosts = {entries} entries \
             (about {} GiB), above the {MAX_ROUTING_ENTRIES} hal-sim builds",
            entries.saturating_mul(4) >> 30
        ));
    }
    Ok(())
}

/// Switch buffers and marking (LDCP §2.1). A marking field not given takes
/// the default of the algorithm in use ([`Marking::default_for`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchCfg {
    /// Shared buffer per switch.
    pub buffer_bytes: Bytes,
    /// buf_max: tail drop above this per-port queue.
    pub port_buffer_bytes: Bytes,
    /// WRED/ECN K_min (ECN-capable packets), for the host link speed.
    pub ecn_kmin_bytes: Option<Bytes>,
    /// WRED/ECN K_max, for the host link speed.
    pub ecn_kmax_bytes: Option<Bytes>,
    /// WRED/ECN P_max; 0 turns marking off.
    pub ecn_pmax: Option<Prob>,
    /// K of eq. (3): ECN-incapable packets are dropped at or above it, for
    /// the host link speed.
    pub drop_k_bytes: Option<Bytes>,
    /// K_min, K_max and K are for the host link speed; every port scales
    /// them by its own speed (a 400 Gb/s port marks at four times the
    /// queue of a 100 Gb/s one), as deployments set them per port speed.
    pub ecn_scale_with_speed: bool,
    /// Control packets (ACKs, NACKs, CNPs, feedback, probes) in a
    /// strict-priority queue ahead of data, as the HPCC paper's simulator
    /// runs DCQCN and TIMELY; default: the algorithm's
    /// ([`Cc::control_priority_default`]).
    pub control_priority: Option<bool>,
    /// PFC (`[switch.pfc]`): lossless data by pausing upstream ports.
    pub pfc: Option<PfcCfg>,
    /// When ECN-capable data is marked: as it joins its queue, from the
    /// queue ahead of it, or as it leaves, from the queue behind it (the
    /// HPCC reference simulator's switch); default: the algorithm's
    /// ([`Cc::ecn_at_default`]).
    pub ecn_at: Option<EcnAt>,
    /// How a switch picks among equal-cost next hops: hal-sim's per-flow
    /// hash, or the HPCC reference simulator's hash of addresses and ports
    /// (to replay its runs on the same paths).
    pub ecmp: crate::model::net::Ecmp,
    /// Salts every flow's hash under `ecmp = "flow_hash"` (sprayed
    /// packets' too): another salt, another draw of which flows share a
    /// link, as another seed gives uet-htsim's switches. 0 is the unsalted
    /// hash.
    pub ecmp_salt: u32,
    /// Trimming (Ultra Ethernet's packet trimming, as uet-htsim's switches
    /// do it): data that does not fit a port's queue (`port_buffer_bytes`)
    /// is cut to this many bytes, a header that goes ahead of data, rather
    /// than dropped. Needs the control queue (`control_priority`), no PFC,
    /// and the SACK transport, whose receivers NACK the headers.
    pub trim_bytes: Option<HeaderBytes>,
    /// uet-htsim's trimming queue with trimming off (its `-disable_trim`):
    /// data that does not fit a port's queue is dropped where trimming
    /// would cut it (by a coin, the newest data packet queued there, the
    /// arrival then taking its place, or the arrival). Needs the control
    /// queue (`control_priority`); excludes `trim_bytes` and PFC.
    pub drop_by_coin: bool,
    /// Each switch's forwarding latency: a packet that arrives whole joins
    /// its egress queue this long after (uet-htsim's `-switch_latency`,
    /// its switches' pipe between ingress and egress). 0: at once.
    pub latency_ns: DelayNs,
}

/// `switch.ecn_at`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnAt {
    /// On enqueue.
    #[default]
    Enqueue,
    /// On dequeue.
    Dequeue,
}

/// The switches' marking and drop thresholds in use, at the host link
/// speed.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Marking {
    /// WRED/ECN K_min, bytes.
    pub kmin: u64,
    /// WRED/ECN K_max, bytes.
    pub kmax: u64,
    /// WRED/ECN P_max (0: no marking).
    pub pmax: f64,
    /// Drop threshold K for ECN-incapable data ([`Marking::NEVER`]: none).
    pub drop_k: u64,
}

/// No threshold.
const NEVER: u64 = Marking::NEVER;

impl Marking {
    /// A threshold no queue reaches: none.
    pub const NEVER: u64 = u64::MAX >> 24;

    /// No marking, no drop threshold.
    pub const NONE: Marking = Marking {
        kmin: NEVER,
        kmax: NEVER,
        pmax: 0.0,
        drop_k: NEVER,
    };

    /// Whether ECN-incapable data is dropped at a threshold K (LDCP's
    /// eq. (3)), so that drops split into those at K and the rest.
    pub fn drops_at_k(&self) -> bool {
        self.drop_k < Self::NEVER
    }

    /// The marking an algorithm is run with when the scenario gives none,
    /// for hosts at `gbps` (per Gb/s of the host link, so that the queue
    /// they allow is the same in time at every speed):
    ///
    /// | algorithm | K_min | K_max | P_max | K (drop) | from |
    /// |---|---|---|---|---|---|
    /// | LDCP, both variants | 50 B | 400 B | 0.2 | 200 B | the shipped LDCP scenarios (5 / 40 / 20 KB at 100 Gb/s); the draft gives no values |
    /// | HPCC++ | – | – | 0 | none | reads telemetry, not ECN: no marking |
    /// | any other | its `NETWORK.marking`'s | | | none | cc-core's registry: DCQCN 4 KB, 16 KB, 0.2 (the HPCC reference simulator's DCQCN runs, 100 / 400 KB at 25 Gb/s); DCTCP 3 KB, 3 KB, 1.0 (the same simulator's DCTCP runs, 30 KB at 10 Gb/s); TIMELY reads RTTs, not ECN: no marking |
    pub fn default_for(cc: &Cc, gbps: u32) -> Marking {
        let g = gbps as u64;
        match cc {
            Cc::Ldcp { .. } | Cc::LdcpRate(_) => Marking {
                kmin: 50 * g,
                kmax: 400 * g,
                pmax: 0.2,
                drop_k: 200 * g,
            },
            Cc::Registered { algorithm, .. } => match algorithm.network().marking {
                Some(m) => Marking {
                    kmin: m.kmin_bytes_per_gbps as u64 * g,
                    kmax: m.kmax_bytes_per_gbps as u64 * g,
                    pmax: m.pmax_percent as f64 / 100.0,
                    drop_k: NEVER,
                },
                None => Marking::NONE,
            },
            Cc::Hpcc(_) => Marking::NONE,
        }
    }
}

impl SwitchCfg {
    /// The thresholds in use: each field given, the algorithm's default
    /// ([`Marking::default_for`]) for the others.
    pub fn marking(&self, cc: &Cc, gbps: u32) -> Marking {
        let d = Marking::default_for(cc, gbps);
        Marking {
            kmin: self.ecn_kmin_bytes.map_or(d.kmin, |b| b.0),
            kmax: self.ecn_kmax_bytes.map_or(d.kmax, |b| b.0),
            pmax: self.ecn_pmax.map_or(d.pmax, |p| p.0),
            drop_k: self.drop_k_bytes.map_or(d.drop_k, |b| b.0),
        }
    }
}

/// PFC (IEEE 802.1Qbb) on every switch: each ingress port counts the bytes
/// it brought that wait in the switch; past XOFF it pauses the port
/// upstream (a frame that takes the link's delay to get there), and at
/// XOFF − `xon_gap_bytes` or below it resumes it. One of `xoff_bytes`
/// (a static threshold) and `dynamic_alpha` (XOFF = alpha · the shared
/// buffer still free, as commodity switches' dynamic thresholds) is given.
/// What arrives after XOFF is sent uses the headroom: with PFC the
/// per-port tail drop (`port_buffer_bytes`) does not apply, only a full
/// shared buffer drops. Pauses stop data; control packets stop with it
/// unless `control_priority` gives them a priority of their own.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcCfg {
    /// Static XOFF threshold per ingress port.
    pub xoff_bytes: Option<Bytes>,
    /// Dynamic XOFF threshold: this fraction of the free shared buffer.
    pub dynamic_alpha: Option<f64>,
    /// XON is this far below XOFF (default 2 KB).
    #[serde(default = "default_xon_gap")]
    pub xon_gap_bytes: Bytes,
}

fn default_xon_gap() -> Bytes {
    Bytes(2048)
}

impl SwitchCfg {
    /// `ecmp_salt` salts hal-sim's own hash only.
    pub fn check_ecmp(&self) -> Result<(), (&'static str, String)> {
        if self.ecmp_salt != 0 && self.ecmp == crate::model::net::Ecmp::Reference {
            return Err((
                "switch.ecmp_salt",
                "salts hal-sim's own hash (ecmp = \"flow_hash\"); the reference's hash is of the flows' addresses and ports"
                    .into(),
            ));
        }
        Ok(())
    }
}

impl Default for SwitchCfg {
    fn default() -> Self {
        SwitchCfg {
            buffer_bytes: Bytes(32 << 20),
            port_buffer_bytes: Bytes(8 << 20),
            ecn_kmin_bytes: None,
            ecn_kmax_bytes: None,
            ecn_pmax: None,
            drop_k_bytes: None,
            ecn_scale_with_speed: true,
            control_priority: None,
            pfc: None,
            ecn_at: None,
            ecmp: crate::model::net::Ecmp::FlowHash,
            ecmp_salt: 0,
            trim_bytes: None,
            drop_by_coin: false,
            latency_ns: DelayNs(0),
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
    pub header_bytes: HeaderBytes,
    /// ACK/control packet size before telemetry.
    pub ack_bytes: HeaderBytes,
    /// Acknowledge every n packets (a CE mark is acknowledged at once).
    pub ack_every: Count,
    /// Retransmission timeout, µs: go-back-N's, by default
    /// [`NicCfg::rto_us_for`] of the switches' port buffer; the SACK
    /// transport's least timeout of each packet, by default
    /// [`NicCfg::sack_rto_ps`].
    pub rto_us: Option<TimeNs>,
    /// Telemetry header the Tx pipeline requests.
    pub telemetry: TelFormat,
    /// IOAM nodes the sender pre-allocates.
    pub ioam_prealloc: u8,
    /// `telemetry = "pint"`: the code's bytes, 1 (b = 1.05) or 2 (b = 1.01).
    pub pint_bytes: u8,
    /// `telemetry = "pint"`: the probability that the sender's Rx pipeline
    /// hands an ACK's code to the engine (the reference's `PINT_PROB`).
    pub pint_sampling: Prob,
    /// Tag notifications with SipHash (HPCC++ §9.1) and verify them.
    pub integrity: bool,
    /// Latency variation of the NIC's Tx path (DMA, PCIe, PHY), ns: each
    /// packet a host sends reaches the far end of its link up to this much
    /// later, uniformly drawn, in order. 0 makes every host a perfect clock.
    pub tx_jitter_ns: DelayNs,
    /// Probe replies lost on the way back, as a probability (HPCC++ probe
    /// mode), drawn from a random stream of its own. 0: none.
    pub probe_loss: Prob,
    /// The congestion-control processor that runs the engine; none (the
    /// default): every event is answered at once.
    pub cc_processor: Option<CcProcessorCfg>,
    /// The rate at which a receiving host takes data from its NIC's Rx
    /// buffer (PCIe, memory), Gb/s; none (the default): as fast as it
    /// arrives, and the buffer stays empty. Below the link speed, data
    /// waits in the buffer (its ACK leaves when it has drained), ACKs
    /// carry the buffer's level, and a full buffer drops what arrives.
    pub rx_drain_gbps: Option<Gbps>,
    /// The Rx buffer's size, bytes of payload (default 256 KiB).
    pub rx_buffer_bytes: Bytes,
    /// How lost data is recovered (default go-back-N).
    pub transport: Transport,
    /// `transport = "sack"`: the receiver ACKs once this many wire bytes
    /// arrived since its last ACK (default 16 KiB, uet-htsim's
    /// `-sack_threshold`); `ack_every` is go-back-N's.
    pub sack_bytes: Option<Bytes>,
    /// Entropy values a flow sprays its packets over (a power of two up
    /// to 256; uet-htsim's `-paths`); 1 (the default): every packet of a
    /// flow hashes alike, per-flow ECMP. More needs `transport = "sack"`.
    pub paths: Count,
    /// How a sprayed flow picks each packet's entropy value (default
    /// `mixed`, uet-htsim's).
    pub load_balancing: LoadBalancing,
    /// SLEEK, uet-htsim's loss recovery for fabrics that drop (its
    /// `-sleek`): a sender resends what the receiver's out-of-order count
    /// shows lost, and probes a flow whose ACKs stop. Needs `transport =
    /// "sack"` and `cc.algorithm = "nscc"`.
    pub sleek: bool,
}

/// `nic.load_balancing`: cc-core's path choosers (`cc_core::path`),
/// uet-htsim's `-load_balancing_algo`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoadBalancing {
    /// Every entropy value once a round, in a random order; feedback
    /// ignored.
    Oblivious,
    /// The same round, skipping values penalised by ECN, NACKs and
    /// timeouts.
    Bitmap,
    /// Recycled entropy: values of unmarked ACKs reused; a timeout
    /// freezes the ring.
    Reps,
    /// A recycled value while any is kept, else the bitmap's.
    #[default]
    Mixed,
}

impl LoadBalancing {
    /// cc-core's chooser of this name.
    pub fn balancer(self) -> cc_core::path::Balancer {
        use cc_core::path::Balancer;
        match self {
            LoadBalancing::Oblivious => Balancer::Oblivious,
            LoadBalancing::Bitmap => Balancer::Bitmap,
            LoadBalancing::Reps => Balancer::Reps,
            LoadBalancing::Mixed => Balancer::Mixed,
        }
    }
}

/// `nic.transport`: how the NICs recover what the network lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// The receiver takes data in order only and NACKs the first gap;
    /// the sender goes back to it, or to its oldest unacknowledged byte
    /// on a timeout (RoCE's).
    #[default]
    GoBackN,
    /// Ultra Ethernet's, as uet-htsim models it: the receiver keeps data
    /// out of order, ACKs with a SACK bitmap and the bytes it has, and
    /// NACKs a trimmed header at once; the sender resends only what was
    /// NACKed or timed out, each packet with its own timer
    /// (`model::nic::sack`).
    Sack,
}

/// A NIC's congestion-control processor (`[nic.cc_processor]`): its
/// cores, their speed, its event queue, how ACKs are thinned, and what
/// each event costs (`model::nic::processor`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcProcessorCfg {
    /// Cores that run the engine.
    pub cores: Cores,
    /// Their clock.
    pub clock_ghz: Ghz,
    /// Instructions per cycle (default 1).
    #[serde(default = "default_ipc")]
    pub ipc: Ipc,
    /// Events the queue holds besides those in service (default 1024).
    #[serde(default = "default_depth")]
    pub queue_depth: Depth,
    /// How ACKs are thinned before they queue (default none).
    #[serde(default)]
    pub coalescing: CoalescingCfg,
    /// `thinning`: one ACK event per flow per this many ACKs (default 4).
    pub thin_every_acks: Option<Count>,
    /// `thinning`: and one once this long has passed since the flow's
    /// last (default: no interval).
    pub thin_interval_ns: Option<TimeNs>,
    /// A benchmark table (`nic-firmware/scripts/bench.sh --json`) to take
    /// the costs from, relative to the scenario file; with `core`.
    pub costs_from: Option<String>,
    /// Its column: `rv32imac`, `rv64imac` or `rv64imac_zbb`.
    pub core: Option<CoreKind>,
    /// Or the costs themselves.
    pub costs: Option<CostsCfg>,
}

fn default_ipc() -> Ipc {
    Ipc(1.0)
}

fn default_depth() -> Depth {
    Depth(1024)
}

/// `nic.cc_processor.coalescing`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoalescingCfg {
    /// Every event queues; a full queue drops the new one.
    #[default]
    None,
    /// An ACK replaces its flow's waiting ACK.
    Latest,
    /// One ACK event per flow per N ACKs or per interval.
    Thinning,
}

/// A benchmark column (`nic.cc_processor.core`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoreKind {
    /// The strict 32-bit core.
    Rv32imac,
    /// The 64-bit core.
    Rv64imac,
    /// The 64-bit core with Zbb (the DPA class).
    Rv64imacZbb,
}

impl CoreKind {
    /// Its key in the benchmark's JSON.
    pub fn key(self) -> &'static str {
        match self {
            CoreKind::Rv32imac => "rv32imac",
            CoreKind::Rv64imac => "rv64imac",
            CoreKind::Rv64imacZbb => "rv64imac_zbb",
        }
    }
}

/// Instructions per event (`[nic.cc_processor.costs]`); every one but
/// `ack` defaults to `ack`'s, `ack_per_hop` to 0.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostsCfg {
    /// An ACK (with one hop of telemetry).
    pub ack: u32,
    /// Each further hop of an ACK's telemetry.
    pub ack_per_hop: Option<u32>,
    /// The engine's timer.
    pub timer: Option<u32>,
    /// A CNP.
    pub cnp: Option<u32>,
    /// A probe reply.
    pub probe_response: Option<u32>,
    /// A NACK, an RTT response, window feedback.
    pub other: Option<u32>,
}

impl Default for NicCfg {
    fn default() -> Self {
        NicCfg {
            payload_bytes: Payload(1000),
            header_bytes: HeaderBytes(48),
            ack_bytes: HeaderBytes(64),
            ack_every: Count(1),
            rto_us: None,
            telemetry: TelFormat::Compact,
            ioam_prealloc: 5,
            pint_bytes: 2,
            pint_sampling: Prob(1.0),
            integrity: true,
            tx_jitter_ns: DelayNs(0),
            probe_loss: Prob(0.0),
            cc_processor: None,
            rx_drain_gbps: None,
            rx_buffer_bytes: Bytes(256 * 1024),
            transport: Transport::GoBackN,
            sack_bytes: None,
            paths: Count(1),
            load_balancing: LoadBalancing::Mixed,
            sleek: false,
        }
    }
}

impl NicCfg {
    /// The SACK transport's least timeout, ps: the one given, or
    /// uet-htsim's (`main_uec.cpp`): 15 µs and six times the time a full
    /// port queue takes to drain at the host link speed `gbps`.
    pub fn sack_rto_ps(&self, port_buffer_bytes: u64, gbps: u32) -> u64 {
        match self.rto_us {
            Some(t) => t.0.saturating_mul(1_000_000),
            None => 15_000_000 + port_buffer_bytes.saturating_mul(48_000) / gbps.max(1) as u64,
        }
    }

    /// The RTO in µs: the one given, or twice the longest a full port
    /// queue (`port_buffer_bytes`) takes to drain at the host link speed
    /// `gbps`, and at least 1 ms. A timeout shorter than the queueing
    /// delay the buffers allow fires while the packet still waits in a
    /// queue (a spurious timeout and a go-back-N of data that was not
    /// lost); RoCE NICs set theirs in milliseconds for the same reason.
    pub fn rto_us_for(&self, port_buffer_bytes: u64, gbps: u32) -> u64 {
        match self.rto_us {
            Some(t) => t.0,
            None => {
                let drain_us = port_buffer_bytes.saturating_mul(8) / (gbps.max(1) as u64 * 1_000);
                drain_us.saturating_mul(2).max(1_000)
            }
        }
    }
}

/// Where flows come from, and how their applications hand bytes over.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// The flows (`kind` in a file).
    pub flows: Flows,
    /// Each flow's application hands over its bytes in bursts, the next one
    /// an idle time after the previous is acknowledged.
    pub on_off: Option<OnOff>,
}

impl Workload {
    /// Every host but host 0 sends `bytes` to host 0 at time 0.
    pub fn incast(bytes: u64) -> Self {
        Workload {
            flows: Flows::Incast {
                receiver: 0,
                bytes: Bytes(bytes),
                start_ns: 0,
            },
            on_off: None,
        }
    }
}

/// The flows of a workload.
#[derive(Clone, Debug, PartialEq)]
pub enum Flows {
    /// An explicit list.
    List(Vec<FlowSpec>),
    /// Every host but `receiver` sends `bytes` to it at `start_ns`.
    Incast {
        /// The receiving host.
        receiver: u32,
        /// Bytes per sender.
        bytes: Bytes,
        /// Start time.
        start_ns: u64,
    },
    /// Poisson arrivals between random host pairs, sizes from
    /// `distribution`, at `load` of the host links, `count` of them.
    Cdf {
        /// The size distribution.
        distribution: Distribution,
        /// Offered load of each host link, payload only.
        load: Prob,
        /// Number of flows.
        count: FlowCount,
    },
    /// Flows from the CSV file `path` (src,dst,bytes,start_ns; relative to
    /// the scenario).
    Csv {
        /// The file.
        path: String,
    },
    /// Flows from a flow file of the HPCC reference simulator (ns-3): a
    /// first line with the count N, then N lines `src dst pg dport bytes
    /// start_s`, src and dst being ns-3 node ids, which are host indices
    /// here (the reference's topologies number their hosts first). `pg` is
    /// ignored (one priority class).
    Ns3 {
        /// The file (relative to the scenario).
        path: String,
    },
    /// Flows, and the triggers that start them, from an htsim connection
    /// matrix (uet-htsim's `.cm` files and generators:
    /// [`crate::setup::connection_matrix`]); its `Nodes` are host indices
    /// here.
    ConnectionMatrix {
        /// The file (relative to the scenario).
        path: String,
    },
}

/// Bursts with idle time between them: a flow's sender has `burst_bytes`
/// to send, then waits `idle_ns` after all of it is acknowledged before the
/// next burst (a request-response application, or a flow that goes quiet
/// longer than its telemetry's timestamps take to wrap).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
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
    /// Destination port, for the ns-3 FCT file (100 unless the flow came
    /// from an ns-3 flow file).
    #[serde(default = "default_dport")]
    pub dport: u16,
}

fn default_dport() -> u16 {
    100
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
    /// Figures "after the first …" (utilization, fairness, queues) start
    /// here; 0 (the default) counts the whole run.
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
            warmup_ns: 0,
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
