//! Why the engine refuses an event: one small `Copy` enum for the whole
//! crate, below every module that returns it.

use core::fmt;

/// Why the engine refused an event. The flow's state is unchanged and its
/// last decision stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Error {
    /// No flow with that id.
    UnknownFlow,
    /// The flow table is full.
    TableFull,
    /// A flow with that id exists already.
    FlowExists,
    /// The flow parameters or engine configuration are out of range.
    InvalidParams,
    /// More hops than the flow's state holds.
    TooManyHops,
    /// A hop's counter widths are unusable (0 or more than 32 bits).
    BadCounterWidths,
    /// The telemetry is older than what the flow has seen (reordered ACK).
    StaleTelemetry,
    /// The event does not apply to this flow's algorithm or role.
    NotApplicable,
    /// An ACK's sample is none a network makes: no NIC timestamps where
    /// the algorithm needs them, timestamps that are wrapped, stale or
    /// absurd ([`crate::event::NicSample::delays`]), or a PINT code of another width or
    /// above its width's largest.
    BadSample,
}

impl Error {
    /// Every refusal, in the order declared (the trace codec numbers them
    /// by their places here from 0; the C API's statuses are their own
    /// list).
    pub const ALL: [Error; 9] = [
        Error::UnknownFlow,
        Error::TableFull,
        Error::FlowExists,
        Error::InvalidParams,
        Error::TooManyHops,
        Error::BadCounterWidths,
        Error::StaleTelemetry,
        Error::NotApplicable,
        Error::BadSample,
    ];
}

/// Lets `?` turn it into `Box<dyn Error>` and friends on hosts.
impl core::error::Error for Error {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Error::UnknownFlow => "unknown flow",
            Error::TableFull => "flow table full",
            Error::FlowExists => "flow already exists",
            Error::InvalidParams => "parameters out of range",
            Error::TooManyHops => "more telemetry hops than supported",
            Error::BadCounterWidths => "telemetry counter width out of range",
            Error::StaleTelemetry => "telemetry older than the last sample",
            Error::NotApplicable => "event does not apply to this flow",
            Error::BadSample => "delay or PINT sample missing, wrapped or absurd",
        })
    }
}
