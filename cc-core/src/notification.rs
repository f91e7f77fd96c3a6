//! The notification point at a receiver's NIC: whether a CE-marked data
//! packet of a flow is answered with a congestion notification packet
//! (CNP), at most one per flow per interval. DCQCN's notification point
//! and that of any algorithm whose configuration asks for CNPs
//! ([`crate::controller::AlgorithmConfig::receiver_cnp_ns`]).

use crate::units::Instant;

/// The notification point of one flow, at the receiver's NIC: whether a
/// CE-marked packet sends a CNP (at most one per interval: the
/// algorithm's `receiver_cnp_ns`, 0 for one per packet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NotificationPoint {
    last: Option<Instant>,
}

impl NotificationPoint {
    /// A CE-marked data packet of the flow arrived at `now`: `true` if a CNP
    /// goes out for it, the first and then none within `interval_ns` of the
    /// last one sent.
    pub fn on_ce(&mut self, now: Instant, interval_ns: u32) -> bool {
        let due = match self.last {
            None => true,
            Some(t) => now.saturating_nanos_since(t) >= interval_ns as u64,
        };
        if due {
            self.last = Some(now);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    #[test]
    fn the_notification_point_paces_cnps() {
        let mut np = NotificationPoint::default();
        assert!(np.on_ce(at(100), 4_000));
        assert!(!np.on_ce(at(3_000), 4_000));
        assert!(np.on_ce(at(4_100), 4_000));
        assert!(np.on_ce(at(4_100), 0));
    }
}
