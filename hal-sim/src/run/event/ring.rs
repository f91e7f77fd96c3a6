//! The queue's near entries while they are few: one sorted ring of keys.

use super::Key;

/// Room in the ring; more near entries than this go to the calendar's
/// buckets.
pub(super) const RING: usize = 128;

/// Keys in ascending order, the first at `head`, round a fixed array.
///
/// The first key is taken in O(1). A key comes in where it belongs, found
/// from the back (a link's arrivals are scheduled in time order, so most
/// new keys are the latest or nearly), or by binary search when it lies
/// further in; the shorter side of the ring moves over by one to make
/// room, so a key near the front (a port's free time, one serialization
/// ahead) moves only the few keys before it.
#[derive(Debug)]
pub(super) struct Ring {
    keys: Box<[Key; RING]>,
    head: usize,
    len: usize,
}

impl Default for Ring {
    fn default() -> Self {
        Ring {
            keys: Box::new([0; RING]),
            head: 0,
            len: 0,
        }
    }
}

/// Keys looked at from the back before a binary search.
const FROM_BACK: usize = 4;

impl Ring {
    pub(super) fn is_full(&self) -> bool {
        self.len == RING
    }

    /// The i-th key in order (i < RING).
    #[inline(always)]
    fn at(&self, i: usize) -> Key {
        self.keys[(self.head + i) % RING]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, k: Key) {
        self.keys[(self.head + i) % RING] = k;
    }

    /// The smallest key.
    #[inline(always)]
    pub(super) fn first(&self) -> Option<Key> {
        (self.len > 0).then(|| self.keys[self.head % RING])
    }

    /// Removes the smallest key (there is one).
    #[inline(always)]
    pub(super) fn pop_first(&mut self) {
        self.head = (self.head + 1) % RING;
        self.len = self.len.saturating_sub(1);
    }

    /// How many keys are below `k` (keys are distinct: each holds its
    /// insertion sequence).
    #[inline(always)]
    fn position(&self, k: Key) -> usize {
        let mut p = self.len;
        for _ in 0..FROM_BACK {
            if p == 0 || self.at(p - 1) < k {
                return p;
            }
            p -= 1;
        }
        // The first key above k lies in [0, p].
        let (mut lo, mut hi) = (0, p);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.at(mid) < k {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Puts `k` in its place (the ring is not full).
    #[inline(always)]
    pub(super) fn insert(&mut self, k: Key) {
        debug_assert!(self.len < RING);
        let p = self.position(k);
        let n = self.len;
        if p >= n / 2 {
            // The keys after p move back by one.
            for i in (p..n).rev() {
                self.set(i + 1, self.at(i));
            }
        } else {
            // The keys before p move forward by one, with the head.
            self.head = (self.head + RING - 1) % RING;
            for i in 0..p {
                self.set(i, self.at(i + 1));
            }
        }
        self.set(p, k);
        self.len += 1;
    }

    /// Takes every key out, in order.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = Key> + '_ {
        let (head, len) = (self.head, self.len);
        self.len = 0;
        (0..len).map(move |i| self.keys[(head + i) % RING])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys put in from the back, the front and the middle come out sorted.
    #[test]
    fn keys_come_out_in_order() {
        let mut r = Ring::default();
        let mut x = 7u64;
        let mut want = Vec::new();
        let mut seq = 0u128;
        for round in 0..40 {
            for _ in 0..RING - 10 - r.len {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Mostly late keys, some early ones, all distinct.
                let k = if x >> 62 == 0 {
                    (x >> 40) as u128
                } else {
                    ((round as u128) << 100) | (x >> 20) as u128
                };
                seq += 1;
                let k = k << 20 | seq;
                r.insert(k);
                want.push(k);
            }
            want.sort_unstable();
            for _ in 0..RING / 2 {
                assert_eq!(r.first(), Some(want.remove(0)));
                r.pop_first();
            }
        }
        let rest: Vec<_> = r.drain().collect();
        assert_eq!(rest, want);
        assert_eq!(r.first(), None);
    }
}
