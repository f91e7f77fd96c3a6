//! The engine's algorithms, named once.
//!
//! An algorithm is added the way Linux adds a congestion module
//! (`tcp_congestion_ops`: the module registers its operations and the
//! stack needs nothing else). Its module holds
//!
//! - its per-flow controller(s), each a [`Controller`];
//! - its configuration, an [`AlgorithmConfig`]: defaults, ranges, the
//!   block the trace codec writes for it, the bounds every decision of
//!   its flows keeps (the property tests' and fuzz target's invariants);
//! - its `f64` reference (feature `reference`).
//!
//! One line in the list of `registry.rs` names it (a configuration field
//! and type, a title, and each role's variant, controller and name). From
//! that one list follow [`Algorithm`] with its names and codes (the trace
//! codec's and the C API's, made below the event API), and here
//! [`AnyConfig`] and its defaults, [`AnyController`] and its dispatch, the
//! codec's configuration frame, the [`Algorithm`] methods that need an
//! algorithm's types, and [`crate::for_each_algorithm!`], which hands the
//! list to the crates above (the C API's tables, the simulator's scenario
//! parser and capability profile, the firmware's benchmark paths).
//!
//! Codes are places in the list: a new algorithm goes at the end, so that
//! recorded traces keep their meaning.

pub use crate::algorithm::Algorithm;
#[cfg(feature = "bench")]
use crate::bench::{AckBench, CnpBench, LossBench, NackBench};
use crate::codec::{ConfigReader, ConfigWriter, FrameConfig};
pub use crate::controller::{AlgorithmConfig, ConfigVisitor};
use crate::controller::{Controller, Visit};
use crate::error::Error;
use crate::event::{Ack, Decision, FlowParams, MessageEnd, Nack, ProbeId};
use crate::params::{Network, ParamInfo};
use crate::telemetry::HopSample;
use crate::units::{Instant, Seq, Window};
use crate::wire::Result as WireResult;

/// Builds the registry from the one list (`registry.rs`). Each entry is
/// an algorithm's configuration (its [`AnyConfig`] field and type, its
/// title) and the roles that share it: the [`Algorithm`] variant, the
/// controller type (generic over the hop count `H`) and the name
/// scenarios, the C API and reports use.
macro_rules! registry {
    (
        $d:tt
        $(
            $(#[$cmeta:meta])*
            $field:ident: $($cfg:ident)::+, $title:literal {
                $( $(#[$vmeta:meta])* $variant:ident($ctrl:ty) = $name:literal, )+
            }
        )+
    ) => {
        impl Algorithm {
            /// Parameter `i` of its configuration's table
            /// ([`AlgorithmConfig::PARAMS`]), if it has that many.
            pub fn param(self, i: usize) -> Option<&'static ParamInfo> {
                match self {
                    $($(Algorithm::$variant)|+ => {
                        <crate::$($cfg)::+ as AlgorithmConfig>::PARAMS.get(i).map(|p| &p.info)
                    })+
                }
            }

            /// Its configuration's parameters a table sets by name, in
            /// their order.
            pub fn params(self) -> impl Iterator<Item = &'static ParamInfo> {
                (0..).map_while(move |i| self.param(i))
            }

            /// `v` run with this algorithm's configuration type
            /// ([`ConfigVisitor::visit`]): code generic over the
            /// algorithm, instantiated for it alone.
            pub fn with_config<V: ConfigVisitor>(self, v: V) -> V::Output {
                match self {
                    $($(Algorithm::$variant)|+ => v.visit::<crate::$($cfg)::+>(),)+
                }
            }

            /// Its firmware benchmark's ACK row
            /// ([`AlgorithmConfig::ACK_BENCH`]).
            #[cfg(feature = "bench")]
            pub const fn ack_bench(self) -> Option<AckBench> {
                match self {
                    $($(Algorithm::$variant)|+ => <crate::$($cfg)::+ as AlgorithmConfig>::ACK_BENCH,)+
                }
            }

            /// Its firmware benchmark's CNP row
            /// ([`AlgorithmConfig::CNP_BENCH`]).
            #[cfg(feature = "bench")]
            pub const fn cnp_bench(self) -> Option<CnpBench> {
                match self {
                    $($(Algorithm::$variant)|+ => <crate::$($cfg)::+ as AlgorithmConfig>::CNP_BENCH,)+
                }
            }

            /// Its firmware benchmark's NACK row
            /// ([`AlgorithmConfig::NACK_BENCH`]).
            #[cfg(feature = "bench")]
            pub const fn nack_bench(self) -> Option<NackBench> {
                match self {
                    $($(Algorithm::$variant)|+ => <crate::$($cfg)::+ as AlgorithmConfig>::NACK_BENCH,)+
                }
            }

            /// Its firmware benchmark's timeout row
            /// ([`AlgorithmConfig::LOSS_BENCH`]).
            #[cfg(feature = "bench")]
            pub const fn loss_bench(self) -> Option<LossBench> {
                match self {
                    $($(Algorithm::$variant)|+ => <crate::$($cfg)::+ as AlgorithmConfig>::LOSS_BENCH,)+
                }
            }

            /// The cases its controller sorts an ACK into
            /// ([`AlgorithmConfig::ACK_CASES`]).
            pub const fn ack_cases(self) -> &'static [&'static str] {
                match self {
                    $($(Algorithm::$variant)|+ => <crate::$($cfg)::+ as AlgorithmConfig>::ACK_CASES,)+
                }
            }

            /// What its flows need of the network
            /// ([`AlgorithmConfig::NETWORK`]).
            pub const fn network(self) -> Network {
                match self {
                    $($(Algorithm::$variant)|+ => <crate::$($cfg)::+ as AlgorithmConfig>::NETWORK,)+
                }
            }
        }

        /// Parameters of every algorithm, for a table that mixes them.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub struct AnyConfig {
            $( $(#[$cmeta])* pub $field: crate::$($cfg)::+, )+
        }

        impl AnyConfig {
            /// Every algorithm's [`AlgorithmConfig::DEFAULT`].
            pub const DEFAULT: AnyConfig = AnyConfig {
                $( $field: <crate::$($cfg)::+ as AlgorithmConfig>::DEFAULT, )+
            };

            /// Checks every algorithm's parameters; `Err` names the first
            /// algorithm whose parameters are out of range.
            pub fn check(&self) -> Result<(), (Algorithm, Error)> {
                $(
                    if let Err(e) = AlgorithmConfig::validate(&self.$field) {
                        return Err((first_of!($($variant)+), e));
                    }
                )+
                Ok(())
            }

            /// The value of `algorithm`'s parameter `i`, in the engine's
            /// unit ([`crate::params::Param::get`]).
            pub fn get_param(&self, algorithm: Algorithm, i: usize) -> Option<u32> {
                match algorithm {
                    $($(Algorithm::$variant)|+ => {
                        <crate::$($cfg)::+ as AlgorithmConfig>::PARAMS.get(i).map(|p| (p.get)(&self.$field))
                    })+
                }
            }

            /// Sets `algorithm`'s parameter `i` to `v`, in the engine's
            /// unit; `false` if it has no such parameter. The value is
            /// judged by [`AnyConfig::invalid_field`], not here.
            pub fn set_param(&mut self, algorithm: Algorithm, i: usize, v: u32) -> bool {
                match algorithm {
                    $($(Algorithm::$variant)|+ => {
                        match <crate::$($cfg)::+ as AlgorithmConfig>::PARAMS.get(i) {
                            Some(p) => {
                                (p.set)(&mut self.$field, v);
                                true
                            }
                            None => false,
                        }
                    })+
                }
            }

            /// What the receiver's NIC does for `algorithm`'s flows on
            /// CE-marked data ([`AlgorithmConfig::receiver_cnp_ns`]).
            pub fn receiver_cnp_ns(&self, algorithm: Algorithm) -> Option<u32> {
                match algorithm {
                    $($(Algorithm::$variant)|+ => AlgorithmConfig::receiver_cnp_ns(&self.$field),)+
                }
            }

            /// The first field of `algorithm`'s configuration out of its
            /// range ([`AlgorithmConfig::invalid_field`]).
            pub fn invalid_field(&self, algorithm: Algorithm) -> Option<&'static str> {
                match algorithm {
                    $($(Algorithm::$variant)|+ => AlgorithmConfig::invalid_field(&self.$field),)+
                }
            }

            /// The bounds a decision of a flow started with `p` keeps
            /// ([`AlgorithmConfig::check_decision`] of its algorithm).
            pub fn check_decision(&self, p: &FlowParams, d: &Decision) -> Result<(), &'static str> {
                match p.algorithm {
                    $($(Algorithm::$variant)|+ => self.$field.check_decision(p, d),)+
                }
            }
        }

        impl Default for AnyConfig {
            fn default() -> Self {
                Self::DEFAULT
            }
        }

        /// The codec's configuration frame: every algorithm's block, in
        /// the registry's order.
        impl FrameConfig for AnyConfig {
            fn encode(&self, w: &mut ConfigWriter<'_, '_>) -> WireResult<()> {
                $( AlgorithmConfig::encode(&self.$field, w)?; )+
                Ok(())
            }

            /// Struct fields are evaluated in the order written: the
            /// registry's.
            fn decode(r: &mut ConfigReader<'_, '_>) -> WireResult<AnyConfig> {
                Ok(AnyConfig {
                    $( $field: <crate::$($cfg)::+ as AlgorithmConfig>::decode(r)?, )+
                })
            }
        }

        /// Any controller, chosen per flow by [`FlowParams::algorithm`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[cfg_attr(feature = "defmt", derive(defmt::Format))]
        pub enum AnyController<const H: usize> {
            $($( $(#[$vmeta])* $variant($ctrl), )+)+
        }

        /// The one dispatch on the algorithm: `$body` with `$s` the flow's
        /// controller and `$c` its algorithm's part of the [`AnyConfig`].
        /// Every hook of [`AnyController`] is this match around the
        /// variant's own hook.
        macro_rules! each {
            ($d self:ident, $d cfg:ident, |$d s:ident, $d c:ident| $d body:expr) => {
                match $d self {
                    $($(AnyController::$variant($d s) => {
                        let $d c = &$d cfg.$field;
                        $d body
                    })+)+
                }
            };
        }

        /// A new flow's controller and first decision, by its algorithm.
        fn start_any<const H: usize>(
            cfg: &AnyConfig,
            now: Instant,
            p: &FlowParams,
        ) -> Result<(AnyController<H>, Decision), Error> {
            Ok(match p.algorithm {
                $($(Algorithm::$variant => {
                    let (s, d) = <$ctrl as Controller>::start(&cfg.$field, now, p)?;
                    (AnyController::$variant(s), d)
                })+)+
            })
        }

        /// Hands the registry to `$callback`, a macro of the caller's, as
        /// `$callback! { $( field: ConfigType, "Title" { Variant = "name", … } )+ }`
        /// with the types as paths from the crate root (`$crate::…`): the
        /// crates above the engine build their per-algorithm tables from
        /// it instead of listing the algorithms again.
        ///
        /// ```
        /// // Every configuration type's name beside its roles' names.
        /// macro_rules! roles {
        ///     ($($field:ident: $cfg:path, $title:literal { $($v:ident = $name:literal,)+ })+) => {
        ///         [$((stringify!($field), &[$($name),+][..])),+]
        ///     };
        /// }
        /// let roles = cc_core::for_each_algorithm!(roles);
        /// assert_eq!(roles[2], ("dctcp", &["dctcp"][..]));
        /// let names: Vec<&str> = roles.iter().flat_map(|(_, n)| n.iter().copied()).collect();
        /// let all: Vec<&str> = cc_core::Algorithm::ALL.iter().map(|a| a.name()).collect();
        /// assert_eq!(names, all);
        /// ```
        #[macro_export]
        macro_rules! for_each_algorithm {
            ($d callback:ident) => {
                $d callback! {
                    $( $field: $d crate::$($cfg)::+, $title {
                        $( $variant = $name, )+
                    } )+
                }
            };
        }
    };
}

with_registry!($ registry);

impl<const H: usize> AnyController<H> {
    /// `v` on the controller inside, with its algorithm's configuration
    /// from `cfg` (the same match every hook of this type makes).
    #[inline(always)]
    pub fn visit<V: Visit>(&mut self, cfg: &AnyConfig, v: V) -> V::Output {
        each!(self, cfg, |s, c| v.on(s, c))
    }
}

impl<const H: usize> Controller for AnyController<H> {
    type Config = AnyConfig;

    fn validate(cfg: &AnyConfig) -> Result<(), Error> {
        cfg.check().map_err(|(_, e)| e)
    }

    fn start(cfg: &AnyConfig, now: Instant, p: &FlowParams) -> Result<(Self, Decision), Error> {
        start_any(cfg, now, p)
    }

    fn decision(&self, cfg: &AnyConfig) -> Decision {
        each!(self, cfg, |s, c| Controller::decision(s, c))
    }

    fn ack(&mut self, cfg: &AnyConfig, now: Instant, ack: &Ack<'_>) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.ack(c, now, ack))
    }

    fn sent(&mut self, cfg: &AnyConfig, now: Instant, seq: Seq, len: u32, end: MessageEnd) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.sent(c, now, seq, len, end))
    }

    fn loss(&mut self, cfg: &AnyConfig, now: Instant, first_lost: Seq) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.loss(c, now, first_lost))
    }

    fn nack(&mut self, cfg: &AnyConfig, now: Instant, nack: &Nack) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.nack(c, now, nack))
    }

    fn cnp(&mut self, cfg: &AnyConfig, now: Instant) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.cnp(c, now))
    }

    fn rtt_response(
        &mut self,
        cfg: &AnyConfig,
        now: Instant,
        probe: ProbeId,
        rtt_ns: Option<u32>,
    ) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.rtt_response(c, now, probe, rtt_ns))
    }

    fn probe_response(
        &mut self,
        cfg: &AnyConfig,
        now: Instant,
        probe: ProbeId,
        hop_index: u8,
        hop: &HopSample,
    ) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.probe_response(c, now, probe, hop_index, hop))
    }

    fn rx_telemetry(&mut self, cfg: &AnyConfig, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.rx_telemetry(c, now, telemetry))
    }

    fn probe_request(&mut self, cfg: &AnyConfig, now: Instant, telemetry: &[HopSample]) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.probe_request(c, now, telemetry))
    }

    fn feedback(&mut self, cfg: &AnyConfig, now: Instant, window: Window) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.feedback(c, now, window))
    }

    fn flow_count(&mut self, cfg: &AnyConfig, now: Instant, flows: u16) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.flow_count(c, now, flows))
    }

    fn timer(&mut self, cfg: &AnyConfig, now: Instant) -> Result<Decision, Error> {
        each!(self, cfg, |s, c| s.timer(c, now))
    }

    fn ack_case(&self, cfg: &AnyConfig, ack: &Ack<'_>) -> Option<u8> {
        each!(self, cfg, |s, c| s.ack_case(c, ack))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Unit;

    /// An algorithm names at most `MAX_ACK_CASES` ACK cases (NSCC its four
    /// quadrants), and its controller sorts ACKs only into those.
    #[test]
    fn ack_cases_fit_their_bound() {
        use crate::controller::MAX_ACK_CASES;
        for a in Algorithm::ALL {
            assert!(a.ack_cases().len() <= MAX_ACK_CASES, "{}", a.name());
        }
        assert_eq!(Algorithm::Nscc.ack_cases().len(), 4);
        let p = FlowParams {
            algorithm: Algorithm::Nscc,
            base_rtt: crate::units::BaseRtt::from_nanos(12_000).unwrap(),
            line_rate: crate::units::LinkSpeed::from_gbps(100),
            start_seq: Seq(0),
        };
        let (c, _) = AnyController::<2>::start(&AnyConfig::DEFAULT, Instant::ZERO, &p).unwrap();
        for (marked, rtt) in [(false, 12_000), (true, 12_000), (false, 1 << 23), (true, 1 << 23)] {
            let ack = Ack {
                ece: if marked {
                    crate::event::EcnEcho::Marked
                } else {
                    crate::event::EcnEcho::NotMarked
                },
                rtt_ns: Some(rtt),
                ..Ack::new(Seq(0), Seq(0))
            };
            let case = c.ack_case(&AnyConfig::DEFAULT, &ack).unwrap() as usize;
            assert!(case < Algorithm::Nscc.ack_cases().len());
        }
        let q = FlowParams {
            algorithm: Algorithm::Ldcp,
            ..p
        };
        let (c, _) = AnyController::<2>::start(&AnyConfig::DEFAULT, Instant::ZERO, &q).unwrap();
        assert_eq!(c.ack_case(&AnyConfig::DEFAULT, &Ack::new(Seq(0), Seq(0))), None);
    }

    /// Every table parameter reads back what it sets, each name once, and
    /// a parameter's value out of range is refused naming its own field.
    #[test]
    fn params_round_trip_and_name_their_fields() {
        for a in Algorithm::ALL {
            let names: ([&str; 32], usize) = a.params().fold(([""; 32], 0), |(mut n, k), p| {
                assert!(!n[..k].contains(&p.name), "{} twice in {}", p.name, a.name());
                n[k] = p.name;
                (n, k + 1)
            });
            let mut c = AnyConfig::DEFAULT;
            for i in 0..names.1 {
                let v = c.get_param(a, i).unwrap();
                assert!(c.set_param(a, i, v));
                assert_eq!(c, AnyConfig::DEFAULT, "{} of {}", names.0[i], a.name());
            }
            assert!(!c.set_param(a, names.1, 0));
            assert_eq!(c.get_param(a, names.1), None);
            assert_eq!(c.invalid_field(a), None);
        }
        // TIMELY: T_low at T_high is refused as T_low's field.
        let t = Algorithm::Timely;
        let i = |name| t.params().position(|p| p.name == name).unwrap();
        let mut c = AnyConfig::DEFAULT;
        let high = c.get_param(t, i("t_high_us")).unwrap();
        assert!(c.set_param(t, i("t_low_us"), high));
        assert_eq!(c.invalid_field(t), Some(t.param(i("t_low_us")).unwrap().field));
        // The defaults as a table writes them.
        let d = AnyConfig::DEFAULT;
        let raw = |name| d.get_param(t, i(name)).unwrap();
        let scale = |name| t.param(i(name)).unwrap().unit.scale();
        assert_eq!(raw("t_low_us"), 50 * scale("t_low_us"));
        assert_eq!(raw("min_rtt_us"), 20 * scale("min_rtt_us"));
        assert_eq!(raw("alpha"), scale("alpha") / 8 * 7);
        assert_eq!(t.param(i("clock")).unwrap().unit.choice("per_sample"), Some(1));
        assert!(matches!(t.param(i("rate_ai")).unwrap().unit, Unit::Fraction));
    }

    #[test]
    fn one_primary_role_per_configuration() {
        // Roles of one configuration are neighbours and share its title.
        for (i, a) in Algorithm::ALL.iter().enumerate() {
            let first = i == 0 || Algorithm::ALL[i - 1].title() != a.title();
            assert_eq!(a.is_primary(), first, "{}", a.name());
        }
        assert!(!Algorithm::HpccReceiver.is_primary() && !Algorithm::LdcpRate.is_primary());
        assert_eq!(Algorithm::Timely.network().gate, crate::params::Gate::Rate);
    }
}
