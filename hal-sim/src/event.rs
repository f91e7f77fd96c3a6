//! The simulator's clock and event queue: a binary heap ordered by (time,
//! insertion sequence), so equal-time events run in the order they were
//! scheduled and a run is deterministic for a seed.

use std::collections::BinaryHeap;

/// Simulated time in picoseconds (2^64 ps ≈ 213 days). Picoseconds keep a
/// 1.6 Tb/s link's per-byte time (5 ps) exact.
pub type Ps = u64;

/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1_000;

/// Serialization time of `bytes` on a link of `bps` bit/s, rounded up.
pub fn ser_ps(bytes: u32, bps: u64) -> Ps {
    (bytes as u64 * 8 * 1_000_000_000_000).div_ceil(bps.max(1))
}

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// A port finished serializing a packet.
    PortFree {
        /// Node.
        node: u32,
        /// Port.
        port: u16,
    },
    /// A packet arrived whole at a node's port.
    Arrive {
        /// Node.
        node: u32,
        /// Ingress port.
        port: u16,
        /// Packet (slab index).
        pkt: u32,
    },
    /// A flow starts.
    FlowStart {
        /// Flow.
        flow: u32,
    },
    /// A flow's congestion-control timer (valid if `gen` is current).
    CcTimer {
        /// Flow.
        flow: u32,
        /// Generation; older ones were cancelled.
        gen: u32,
    },
    /// A flow's retransmission deadline may have passed (the flow keeps the
    /// deadline; one event per flow is queued at a time).
    Rto {
        /// Flow.
        flow: u32,
    },
    /// A host NIC's pacer may have a flow ready (valid if `gen` is current).
    NicWake {
        /// Host index.
        host: u32,
        /// Generation; older ones were superseded.
        gen: u32,
    },
    /// Periodic metrics sample.
    Sample,
}

/// Heap entry: (time, key) where key = insertion sequence << 24 | slot of
/// the event in the slab. 16 bytes, compared as two integers; the sequence
/// in the high bits keeps equal-time events in insertion order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key(std::cmp::Reverse<(Ps, u64)>);

const SLOT_BITS: u32 = 24;

/// The pending events.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Key>,
    slots: Vec<Ev>,
    free: Vec<u32>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    /// Schedules `ev` at `t`.
    pub fn push(&mut self, t: Ps, ev: Ev) {
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = ev;
                i
            }
            None => {
                self.slots.push(ev);
                (self.slots.len() - 1) as u32
            }
        };
        debug_assert!(slot < 1 << SLOT_BITS, "more than 2^24 pending events");
        self.seq += 1;
        self.heap.push(Key(std::cmp::Reverse((t, self.seq << SLOT_BITS | slot as u64))));
    }

    /// The earliest event.
    pub fn pop(&mut self) -> Option<(Ps, Ev)> {
        let Key(std::cmp::Reverse((t, key))) = self.heap.pop()?;
        let slot = (key & ((1 << SLOT_BITS) - 1)) as u32;
        self.free.push(slot);
        self.popped += 1;
        Some((t, self.slots[slot as usize]))
    }

    /// Events handled so far.
    pub fn handled(&self) -> u64 {
        self.popped
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(20, Ev::Sample);
        q.push(10, Ev::FlowStart { flow: 1 });
        q.push(10, Ev::FlowStart { flow: 2 });
        q.push(5, Ev::FlowStart { flow: 3 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![(5, Ev::FlowStart { flow: 3 }), (10, Ev::FlowStart { flow: 1 }), (10, Ev::FlowStart { flow: 2 }), (20, Ev::Sample)]
        );
        assert_eq!(q.handled(), 4);
    }

    #[test]
    fn serialization_times() {
        assert_eq!(ser_ps(1000, 100_000_000_000), 80_000);
        assert_eq!(ser_ps(1, 1_600_000_000_000), 5);
        assert_eq!(ser_ps(1048, 100_000_000_000), 83_840);
    }
}
