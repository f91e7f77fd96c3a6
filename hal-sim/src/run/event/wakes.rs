//! The hosts' wake-ups: at most one per host, moved in place.

use super::Key;

/// No wake-up: later than every key.
pub(super) const NO_WAKE: Key = Key::MAX;

/// At most one wake-up per host, by key (time, sequence): an indexed
/// binary min-heap, so a host's entry is found and moved in O(log hosts).
#[derive(Debug, Default)]
pub(super) struct Wakes {
    /// Key and host.
    heap: Vec<(Key, u32)>,
    /// Host → index in `heap`, or `ABSENT`.
    pos: Vec<u32>,
}

impl Wakes {
    const ABSENT: u32 = u32::MAX;

    /// Sets `host`'s wake-up to `key`, moving the one pending if any.
    #[inline(always)]
    pub(super) fn set(&mut self, host: u32, key: Key) {
        let h = host as usize;
        if self.pos.len() <= h {
            self.pos.resize(h + 1, Self::ABSENT);
        }
        match self.pos[h] {
            Self::ABSENT => {
                self.heap.push((key, host));
                let i = self.heap.len() - 1;
                self.pos[h] = i as u32;
                self.up(i);
            }
            i => {
                let i = i as usize;
                let old = std::mem::replace(&mut self.heap[i].0, key);
                if key < old {
                    self.up(i);
                } else {
                    self.down(i);
                }
            }
        }
    }

    /// The earliest key, [`NO_WAKE`] if none.
    #[inline(always)]
    pub(super) fn first(&self) -> Key {
        self.heap.first().map_or(NO_WAKE, |e| e.0)
    }

    pub(super) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Removes the earliest entry (the caller looked: there is one).
    pub(super) fn pop_min(&mut self) -> u32 {
        let last = self.heap.len() - 1;
        self.swap(0, last);
        let (_, host) = self.heap.pop().unwrap_or_default();
        self.pos[host as usize] = Self::ABSENT;
        if !self.heap.is_empty() {
            self.down(0);
        }
        host
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.pos[self.heap[a].1 as usize] = a as u32;
        self.pos[self.heap[b].1 as usize] = b as u32;
    }

    #[inline(always)]
    fn up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[i].0 >= self.heap[parent].0 {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn down(&mut self, mut i: usize) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.heap[l + 1].0 < self.heap[l].0 {
                l + 1
            } else {
                l
            };
            if self.heap[c].0 >= self.heap[i].0 {
                break;
            }
            self.swap(c, i);
            i = c;
        }
    }
}
