//! What an algorithm tells the layers above the engine besides its events:
//! the parameters a table sets by name (a simulator scenario's `[cc]`
//! table, a host's configuration file) and what it needs of the network
//! its flows cross. Each algorithm's module states both beside its
//! configuration ([`crate::controller::AlgorithmConfig::PARAMS`] and
//! [`crate::controller::AlgorithmConfig::NETWORK`]); a front end reads
//! them through [`crate::Algorithm`] instead of naming the algorithm.

use crate::units::Fraction;

/// How a table writes a parameter, and how its value becomes the engine's
/// number (a `u32` in the configuration field's own unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A decimal ratio in [0, 1]; stored as a [`Fraction`]'s raw value
    /// (2^-24 steps), rounded to nearest.
    Fraction,
    /// Decimal microseconds; stored in nanoseconds, rounded to nearest.
    Micros,
    /// Whole Mb/s.
    Mbps,
    /// Decimal packets; stored in 2^-16 packets, rounded to nearest.
    Packets,
    /// Whole bytes.
    Bytes,
    /// A whole count.
    Count,
    /// `true` or `false`; stored as 1 or 0.
    Flag,
    /// One of these names; stored as its place in the list.
    Choice(&'static [&'static str]),
}

impl Unit {
    /// How many of the engine's steps a table's unit holds: a fraction's
    /// 2^24, a microsecond's 1000 ns, a packet's 2^16; 1 for the whole
    /// units, flags and choices. (The engine has no floating point: a front
    /// end scales a table's decimal by this and rounds.)
    pub const fn scale(self) -> u32 {
        match self {
            Unit::Fraction => 1 << Fraction::FRAC_BITS,
            Unit::Micros => 1_000,
            Unit::Packets => 1 << 16,
            Unit::Mbps | Unit::Bytes | Unit::Count | Unit::Flag | Unit::Choice(_) => 1,
        }
    }

    /// The place of `name` among a `Choice`'s names (`None` for a name it
    /// does not have, or another unit).
    pub fn choice(self, name: &str) -> Option<u32> {
        match self {
            Unit::Choice(names) => names.iter().position(|n| *n == name).map(|i| i as u32),
            _ => None,
        }
    }
}

/// What a table needs to know of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamInfo {
    /// The key a table writes (`t_low_us`).
    pub name: &'static str,
    /// The configuration field it sets, as the configuration's
    /// `invalid_field` names it (`t_low_ns`).
    pub field: &'static str,
    /// How it is written.
    pub unit: Unit,
    /// Its range in words, in the table's unit (`"below t_high_us"`).
    pub range: &'static str,
    /// What it is.
    pub doc: &'static str,
    /// Whether its default on a network is the size of the NIC's data
    /// packets (bytes of payload), as a front end that knows it sets it
    /// unless its table names the parameter: an algorithm that counts in
    /// packets then counts the network's own (DCTCP's MSS, Swift's MTU).
    /// Its [`crate::controller::AlgorithmConfig::DEFAULT`] holds for a
    /// front end that knows no payload (1000 bytes).
    pub follows_payload: bool,
    /// Whether it is a preset: setting it sets every field to the preset's
    /// values, so a table applies it before its other parameters, whatever
    /// the order they are written in (DCQCN's `preset`).
    pub preset: bool,
}

/// A parameter of configuration `C`: its description and its accessors in
/// the engine's unit.
pub struct Param<C> {
    /// What a table needs to know.
    pub info: ParamInfo,
    /// The field's value.
    pub get: fn(&C) -> u32,
    /// Sets the field (any `u32`: the configuration's validation judges it).
    pub set: fn(&mut C, u32),
}

/// A parameter of configuration type `$cfg` for its `PARAMS` table:
/// `$name` as a table writes it, setting `$field` in `$unit`. The field's
/// kind, when not a `u32`: `fraction`, stored as a [`Fraction`]'s raw
/// value (a value above 1 becomes 0, which validation refuses); `u8`,
/// saturating at 255; `window`, a [`crate::units::Window`] of whole bytes
/// (read back rounded down); `flag`, a `bool` stored as 1 or 0. `; payload`
/// marks a parameter whose default on a network is the NIC's payload
/// ([`ParamInfo::follows_payload`]).
macro_rules! param {
    ($cfg:ty, $name:literal, $field:ident, $unit:expr, $range:literal, $doc:literal $(, $kind:ident)? $(; $follows:ident)?) => {
        $crate::params::Param {
            info: $crate::params::ParamInfo {
                name: $name,
                field: stringify!($field),
                unit: $unit,
                range: $range,
                doc: $doc,
                follows_payload: $crate::params::param!(@follows $($follows)?),
                preset: false,
            },
            get: |c: &$cfg| $crate::params::param!(@get c.$field $(, $kind)?),
            set: |c: &mut $cfg, v| c.$field = $crate::params::param!(@set v $(, $kind)?),
        }
    };
    (@follows) => { false };
    (@follows payload) => { true };
    (@get $v:expr) => { $v };
    (@get $v:expr, fraction) => { $v.to_bits() };
    (@get $v:expr, u8) => { $v as u32 };
    (@get $v:expr, window) => { $v.bytes_floor() };
    (@get $v:expr, flag) => { $v as u32 };
    (@set $v:ident) => { $v };
    (@set $v:ident, fraction) => { $crate::units::Fraction::from_bits($v).unwrap_or($crate::units::Fraction::ZERO) };
    (@set $v:ident, u8) => { u8::try_from($v).unwrap_or(u8::MAX) };
    (@set $v:ident, window) => { $crate::units::Window::from_bytes($v) };
    (@set $v:ident, flag) => { $v != 0 };
}
pub(crate) use param;

/// What the decision of an algorithm's flows governs at the NIC's
/// scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// The window bounds the bytes in flight (and the pacer the gaps).
    Window,
    /// As `Window`; below one packet of window, a packet goes when the
    /// engine's timer releases it.
    WindowOrTicks,
    /// The rate alone: the pacer spaces packets, the window is not enforced.
    Rate,
}

/// The WRED/ECN marking an algorithm was evaluated with, per Gb/s of the
/// port (so that the queue it allows is the same in time at every speed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcnMarking {
    /// K_min, bytes per Gb/s.
    pub kmin_bytes_per_gbps: u32,
    /// K_max, bytes per Gb/s.
    pub kmax_bytes_per_gbps: u32,
    /// P_max in whole per cent (1 ..= 100): exact in any front end's
    /// arithmetic, as the decimals the evaluations give (0.2, 1.0).
    pub pmax_percent: u8,
}

/// What an algorithm's flows need of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network {
    /// What the decision governs.
    pub gate: Gate,
    /// The switches' ECN marking it runs with; `None`: it reads no ECN,
    /// and switches mark nothing unless told.
    pub marking: Option<EcnMarking>,
    /// Whether its ACKs (and other control packets) take a strict-priority
    /// queue ahead of data by default, so that the delays it measures are
    /// the data's.
    pub control_priority: bool,
    /// What its data packets collect from the switches on their way, for
    /// the receiver to echo on the ACK.
    pub telemetry: TelemetryKind,
    /// Whether the switches mark ECN as a packet leaves the queue (the
    /// queue it saw behind it) rather than as it arrives: how the
    /// simulator its figures come from marks.
    pub marks_on_dequeue: bool,
}

impl Network {
    /// An algorithm that `gate`s its flows and needs nothing else of the
    /// network: no ECN marking, no control priority, no telemetry. What it
    /// needs more is set by struct update
    /// (`Network { telemetry: TelemetryKind::Stack, ..Network::new(Gate::Window) }`),
    /// so that a field added for one algorithm changes no other's code.
    pub const fn new(gate: Gate) -> Network {
        Network {
            gate,
            marking: None,
            control_priority: false,
            telemetry: TelemetryKind::None,
            marks_on_dequeue: false,
        }
    }
}

/// The telemetry an algorithm reads from the switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TelemetryKind {
    /// None.
    None,
    /// A per-hop stack (queue, byte counter, timestamp, speed), in any of
    /// the wire module's formats.
    Stack,
    /// HPCC-PINT's one- or two-byte utilization code.
    Pint,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale_to_the_engine_and_choices_are_places() {
        assert_eq!(Unit::Fraction.scale(), 1 << 24);
        assert_eq!(Unit::Micros.scale(), 1_000);
        assert_eq!(Unit::Packets.scale(), 65_536);
        assert_eq!(Unit::Mbps.scale(), 1);
        assert_eq!(Unit::Choice(&["a", "b"]).choice("b"), Some(1));
        assert_eq!(Unit::Choice(&["a", "b"]).choice("c"), None);
    }
}
