//! The event queue's calendar: pending entries in 512 ps time buckets for
//! the near future (or, while they are few, in one sorted ring), a binary
//! heap for the rest; and every pending event, in its slot.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::ring::Ring;
use super::{Ev, Key, SLOT_BITS};

/// log2 of a calendar bucket's width in picoseconds: 2^9 ps ≈ 0.5 ns, so
/// that even the ten thousand packets in flight on a 320-host fat-tree's
/// 1 µs links share a bucket with only a few others (docs/simulator.md,
/// "Speed", has the widths tried).
pub(super) const BUCKET_BITS: u32 = 9;
/// Buckets in the calendar: 2^14 of them reach about 8.4 µs past the
/// clock, past a link's delay and serialization, where most events fall.
pub(super) const BUCKETS: usize = 1 << 14;
/// Words of the bitmap of occupied buckets, and buckets per word of its
/// summary (64 words of 64).
const WORDS: usize = BUCKETS / 64;
const PER_SUMMARY_WORD: usize = 64 * 64;

/// The pending entries: a calendar of 512 ps buckets for the near future
/// (a two-level bitmap finds the first occupied bucket, whose first entry
/// is the earliest) and a binary heap for the entries past its reach
/// (retransmission timers, samples, flow starts).
///
/// A bucket is a list threaded through the event slots, in key order:
/// `head[b]` is its first slot, `tail[b]` its last, and each slot's
/// [`Entry`] holds the one after, its key and its event, in one line of
/// cache: a take reads the next entry's link and event, a walk each
/// entry's key and link, where three arrays cost a miss each. An entry
/// filed later than the last goes at the end at once, as most do (a later
/// time, or the same time and a later sequence number); an earlier one
/// walks the list to its place.
/// Kept in order, a bucket crowded by a fabric's hosts sending in lockstep
/// (1024 of them, the same instants) gives its first entry at once, where
/// a search of the whole list on every take cost a fifth of the run.
///
/// While few entries are near (from when fewer than [`TO_RING_BELOW`] are
/// left in the buckets until the ring's room is used up), they are in a
/// sorted [`Ring`] instead and the buckets are empty; the order is the
/// same, the ring's exact by construction.
///
/// Invariant: the buckets (or the ring) hold exactly the entries whose
/// bucket number (time >> [`BUCKET_BITS`]) is below `base + BUCKETS`, each
/// in bucket `number % BUCKETS`, those numbered below `base` (never
/// scheduled by the simulator, which schedules nothing in the past) in
/// bucket `base`; `far` holds the rest. `base` only moves forward, to the
/// bucket of the entry taken, or, with none near, to the far heap's
/// first.
#[derive(Debug)]
pub(super) struct Calendar {
    /// First slot of each bucket's list, or `NONE`.
    head: Vec<u32>,
    /// Last slot of each bucket's list (meaningless when it is empty).
    tail: Vec<u32>,
    /// The slot filed last in each bucket: where a walk to file an entry
    /// behind a later one starts, if it is still there and not later than
    /// the entry (see [`Calendar::insert_before_tail`]).
    hint: Vec<u32>,
    /// Each event slot's entry: its event (wherever its key is: a
    /// bucket, the ring or the far heap), and while filed in a bucket its
    /// key and the slot after it.
    ents: Vec<Entry>,
    /// The slots whose events were taken, for the next ones put.
    free: Vec<u32>,
    /// Bit b of word w: bucket 64w + b holds an entry.
    occupied: [u64; WORDS],
    /// Bit w of word j: `occupied[64j + w]` is not zero.
    summary: [u64; WORDS / 64],
    /// Entries in the buckets.
    near: usize,
    base: u64,
    far: BinaryHeap<Reverse<Key>>,
    /// Bucket number of `far`'s first entry, `u64::MAX` when it is empty:
    /// every pop moves `base`, and this spares it a look into the heap.
    far_first: u64,
    /// While `in_ring`, the near entries are here, sorted, and the buckets
    /// are empty: a few dozen pending entries (a 2-to-1) are cheaper to
    /// keep in order than to file in buckets and find again.
    ring: Ring,
    in_ring: bool,
    /// The earliest entry in the buckets, found ahead by
    /// [`Calendar::take`] (so that the loop can prefetch its packet while
    /// it handles the event before) and kept right by every filing until
    /// the next take.
    peeked: Option<Found>,
}

/// An event slot: its event, and while it is filed in a bucket, its key
/// (0 otherwise: no entry's key, sequence numbers start at 1) and the slot
/// after it in the bucket's list (or `NONE`). 32 bytes, aligned to 32 so
/// that an entry never straddles two lines.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
struct Entry {
    key: Key,
    next: u32,
    ev: Ev,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 32, "an entry is half a cache line");

/// Near entries below which the buckets hand over to the ring (which
/// takes up to [`super::ring::RING`] before handing back): far apart, so
/// a run crosses between them rarely.
const TO_RING_BELOW: usize = 32;

const NONE: u32 = u32::MAX;

/// The bucket number of a key's time.
#[inline(always)]
const fn bucket_of(k: Key) -> u64 {
    (k >> 64) as u64 >> BUCKET_BITS
}

/// The event slot a key names.
#[inline(always)]
const fn slot_of(k: Key) -> u32 {
    (k as u64 & ((1 << SLOT_BITS) - 1)) as u32
}

impl Default for Calendar {
    fn default() -> Self {
        Calendar {
            head: vec![NONE; BUCKETS],
            tail: vec![NONE; BUCKETS],
            hint: vec![NONE; BUCKETS],
            ents: Vec::new(),
            free: Vec::new(),
            occupied: [0; WORDS],
            summary: [0; WORDS / 64],
            near: 0,
            base: 0,
            far: BinaryHeap::new(),
            far_first: u64::MAX,
            ring: Ring::default(),
            in_ring: true,
            peeked: None,
        }
    }
}

/// Where the earliest entry is (the first of its bucket's list): its
/// bucket, its slot and its key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Found {
    bucket: usize,
    /// The entry's event slot.
    pub(super) slot: u32,
    /// The entry.
    pub(super) key: Key,
}

impl Calendar {
    /// Stores `ev` in a free event slot (or one past the last), before
    /// its key is pushed: the slot.
    #[inline(always)]
    pub(super) fn put(&mut self, ev: Ev) -> u32 {
        crate::place(&mut self.ents, &mut self.free, Entry { key: 0, next: NONE, ev })
    }

    /// The event in slot `slot`, if a slot so far (a hint's look).
    #[inline(always)]
    pub(super) fn ev(&self, slot: u32) -> Option<&Ev> {
        self.ents.get(slot as usize).map(|e| &e.ev)
    }

    /// The event in slot `slot`, one [`Calendar::put`] filled, whose key
    /// was taken: the slot is free again.
    #[inline(always)]
    pub(super) fn take_event(&mut self, slot: u32) -> Ev {
        self.free.push(slot);
        self.ents[slot as usize].ev
    }

    pub(super) fn push(&mut self, k: Key) {
        let n = bucket_of(k).max(self.base);
        if n - self.base < BUCKETS as u64 {
            self.file(n, k);
        } else {
            self.far.push(Reverse(k));
            self.far_first = self.far_first.min(bucket_of(k));
        }
    }

    /// Files `k`, whose bucket number `n` is within reach: in the ring
    /// while it has room, else at the head of its bucket.
    fn file(&mut self, n: u64, k: Key) {
        self.near += 1;
        if self.in_ring {
            if !self.ring.is_full() {
                self.ring.insert(k);
                return;
            }
            self.move_to_buckets();
        }
        self.file_in_bucket(n, k);
    }

    /// Puts `k` in its place in the bucket numbered `n` (within reach;
    /// [`Calendar::file`] counts it).
    fn file_in_bucket(&mut self, n: u64, k: Key) {
        let b = n as usize % BUCKETS;
        let slot = slot_of(k) as usize;
        // Its event was put first.
        self.ents[slot].key = k;
        let (head, tail) = (self.head[b], self.tail[b]);
        if head == NONE {
            self.ents[slot].next = NONE;
            self.head[b] = slot as u32;
            self.tail[b] = slot as u32;
        } else if self.ents[tail as usize].key <= k {
            self.ents[slot].next = NONE;
            self.ents[tail as usize].next = slot as u32;
            self.tail[b] = slot as u32;
        } else {
            self.insert_before_tail(b, slot as u32, k);
        }
        self.hint[b] = slot as u32;
        if let Some(p) = &mut self.peeked {
            // The earliest entry is the first of its bucket: `k` takes its
            // place if earlier (the first of its own bucket then too).
            if k < p.key {
                *p = Found {
                    bucket: b,
                    slot: slot as u32,
                    key: k,
                };
            }
        }
        self.occupied[b / 64] |= 1 << (b % 64);
        self.summary[b / PER_SUMMARY_WORD] |= 1 << (b / 64 % 64);
    }

    /// Files `slot` (key `k`, earlier than bucket `b`'s last) at its place
    /// in the bucket's list: after every entry not later than it (out of
    /// line: an entry filed behind a later one in its 512 ps is rare).
    /// The walk starts at the bucket's last filed entry if that is still
    /// in the bucket and not later than `k`, else at its head: a lockstep
    /// fabric files a run of entries of one instant, each behind the one
    /// before, into a bucket that already holds a later instant, and a
    /// walk from the head past hundreds of entries (a cache miss each)
    /// took a tenth of a 1024-host permutation's run.
    #[inline(never)]
    fn insert_before_tail(&mut self, b: usize, slot: u32, k: Key) {
        let (mut prev, mut at) = (NONE, self.head[b]);
        let h = self.hint[b];
        if let Some(hk) = self.ents.get(h as usize).filter(|_| h != slot).map(|e| e.key) {
            // Filed (key not 0) in this bucket, not later than `k` (nor
            // the slot being filed, whose key is `k` already). A filed
            // entry is in bucket max(its number, base): one filed below
            // `base` went to base's bucket, and is taken before base moves.
            if hk != 0 && hk <= k && bucket_of(hk).max(self.base) as usize % BUCKETS == b {
                (prev, at) = (h, self.ents[h as usize].next);
            }
        }
        while at != NONE && self.ents[at as usize].key <= k {
            (prev, at) = (at, self.ents[at as usize].next);
        }
        self.ents[slot as usize].next = at;
        match prev {
            NONE => self.head[b] = slot,
            p => self.ents[p as usize].next = slot,
        }
    }

    /// The earliest entry.
    pub(super) fn first(&mut self) -> Option<Found> {
        if self.near == 0 {
            let Reverse(k) = *self.far.peek()?;
            self.advance(bucket_of(k));
        }
        if self.in_ring {
            let key = self.ring.first()?;
            return Some(Found {
                bucket: 0,
                slot: slot_of(key),
                key,
            });
        }
        if let Some(f) = self.peeked {
            return Some(f);
        }
        self.first_in_buckets()
    }

    /// The earliest entry in the buckets (`near > 0`, not in the ring):
    /// the first of the first occupied bucket.
    fn first_in_buckets(&self) -> Option<Found> {
        let b = self.first_bucket();
        Some(Found {
            bucket: b,
            slot: self.head[b],
            key: self.ents.get(self.head[b] as usize)?.key,
        })
    }

    /// The first occupied bucket at or after `base`, round the calendar
    /// (`near > 0`: there is one).
    fn first_bucket(&self) -> usize {
        let start = self.base as usize % BUCKETS;
        let w0 = start / 64;
        let here = self.occupied[w0] & (u64::MAX << (start % 64));
        if here != 0 {
            return w0 * 64 + here.trailing_zeros() as usize;
        }
        // The next occupied word after w0, round the calendar, then w0's
        // own buckets before `start`.
        let next_word = |from: usize| -> Option<usize> {
            let (j0, bit) = (from / 64, from % 64);
            let mut mask = u64::MAX.checked_shl(bit as u32).unwrap_or(0);
            for j in j0..self.summary.len() {
                let s = self.summary[j] & mask;
                if s != 0 {
                    return Some(j * 64 + s.trailing_zeros() as usize);
                }
                mask = u64::MAX;
            }
            None
        };
        let w = next_word(w0 + 1).or_else(|| next_word(0)).unwrap_or(w0);
        w * 64 + self.occupied[w].trailing_zeros().min(63) as usize
    }

    /// The ring's first key, while the near entries are in the ring.
    #[inline(always)]
    pub(super) fn ring_first(&self) -> Option<Key> {
        if self.in_ring {
            self.ring.first()
        } else {
            None
        }
    }

    /// Takes the ring's first entry, `k` ([`Calendar::ring_first`] found
    /// it); `base` moves to its bucket. The answer is its event's slot.
    #[inline(always)]
    pub(super) fn take_ring_first(&mut self, k: Key) -> u32 {
        self.ring.pop_first();
        self.near -= 1;
        self.advance(bucket_of(k));
        slot_of(k)
    }

    /// Takes the entry [`Calendar::first`] found; `base` moves to its
    /// bucket. With the entries in the buckets, it finds the next one
    /// ahead (kept for the next `first`) and answers its event slot, so
    /// that the loop can prefetch that event's packet while it handles
    /// this one; nothing from the ring, whose few entries are at hand.
    pub(super) fn take(&mut self, f: Found) -> Option<u32> {
        if self.in_ring {
            // Nothing is peeked in the ring.
            self.take_ring_first(f.key);
            return None;
        }
        self.peeked = None;
        let b = f.bucket;
        // The earliest entry is its bucket's first.
        let e = &mut self.ents[f.slot as usize];
        self.head[b] = e.next;
        e.key = 0;
        if self.head[b] == NONE {
            self.occupied[b / 64] &= !(1 << (b % 64));
            if self.occupied[b / 64] == 0 {
                self.summary[b / PER_SUMMARY_WORD] &= !(1 << (b / 64 % 64));
            }
        }
        self.near -= 1;
        let ahead = (b + BUCKETS - self.base as usize % BUCKETS) % BUCKETS;
        self.advance(self.base + ahead as u64);
        if self.near < TO_RING_BELOW {
            self.move_to_ring();
            return None;
        }
        self.peek()
    }

    /// Finds the earliest entry ahead and keeps it (out of line, so that
    /// the ring's path through `take` stays short).
    #[inline(never)]
    fn peek(&mut self) -> Option<u32> {
        self.peeked = self.first_in_buckets();
        self.peeked.map(|f| f.slot)
    }

    /// The ring is full: its entries go to their buckets, and the buckets
    /// take every near entry from now on (out of line: rare).
    #[cold]
    #[inline(never)]
    fn move_to_buckets(&mut self) {
        let keys: Vec<Key> = self.ring.drain().collect();
        self.in_ring = false;
        for k in keys {
            let n = bucket_of(k).max(self.base);
            self.file_in_bucket(n, k);
        }
    }

    /// Few near entries are left: they go from the buckets to the ring,
    /// in order (out of line: rare).
    #[cold]
    #[inline(never)]
    fn move_to_ring(&mut self) {
        let mut keys = Vec::with_capacity(self.near);
        for w in 0..WORDS {
            let mut bits = std::mem::take(&mut self.occupied[w]);
            while bits != 0 {
                let b = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let mut at = std::mem::replace(&mut self.head[b], NONE);
                self.tail[b] = NONE;
                while let Some(e) = self.ents.get_mut(at as usize) {
                    keys.push(std::mem::take(&mut e.key));
                    at = e.next;
                }
            }
        }
        self.summary = [0; WORDS / 64];
        // In order, each goes in at the ring's back.
        keys.sort_unstable();
        self.in_ring = true;
        for k in keys {
            self.ring.insert(k);
        }
    }

    /// Moves `base` forward to bucket number `n`, bringing the far
    /// entries now within reach into their buckets (or the ring).
    #[inline(always)]
    fn advance(&mut self, n: u64) {
        self.base = self.base.max(n);
        // The loop's first test, without the heap: nothing comes in reach.
        if self.far_first.saturating_sub(self.base) >= BUCKETS as u64 {
            return;
        }
        self.bring_far();
    }

    /// The far entries come within reach of `base` (out of line: every
    /// few hundred events at most).
    #[inline(never)]
    fn bring_far(&mut self) {
        while let Some(&Reverse(k)) = self.far.peek() {
            // A far entry is never before `base` (it was filed far because
            // it lay past the calendar's reach then); max() keeps the
            // invariant whatever happens.
            let m = bucket_of(k).max(self.base);
            if m - self.base >= BUCKETS as u64 {
                break;
            }
            self.far.pop();
            self.file(m, k);
        }
        self.far_first = self.far.peek().map_or(u64::MAX, |&Reverse(k)| bucket_of(k));
    }

    /// Whether the near entries are in the ring (the tests' view).
    #[cfg(test)]
    pub(super) fn in_ring(&self) -> bool {
        self.in_ring
    }

    pub(super) fn len(&self) -> usize {
        self.near + self.far.len()
    }
}
