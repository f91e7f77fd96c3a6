//! Per-packet path choice for sprayed fabrics: which entropy value (EV)
//! a flow's next packet carries, so that the switches' ECMP hash of (flow,
//! EV) spreads its packets over the fabric's paths, and how the feedback
//! of each ACK, NACK and timeout steers it. The four load balancers of
//! the Ultra Ethernet consortium's simulator, uet-htsim at commit 40ccb05
//! (`uec_mp.cpp`, `buffer_reps.cpp`; docs/design-notes.md, "Path choice
//! readings", says where these depart from it):
//!
//! - [`Oblivious`]: every EV once a round, in an order a random XOR
//!   permutes anew each round; feedback ignored.
//! - [`Bitmap`]: the same round, skipping EVs with a penalty (ECN +1, NACK
//!   +4, timeout +15, at most 15), the first one skipped at each choice
//!   forgiven by one.
//! - [`Reps`]: Recycled Entropy Packet Spraying (Bonato et al.): the EVs
//!   of ACKs that came back unmarked are kept in a ring of eight and
//!   reused, oldest first; a random EV when none is fresh. A timeout
//!   freezes the ring (its EVs are cycled, none added but good ones) for
//!   10 ms; the first feedback after that empties it and explores 16
//!   random EVs.
//! - [`Mixed`] (uet-htsim's default): a recycled EV while any is kept,
//!   else the bitmap's choice; feedback goes to both.
//!
//! Sans-IO as the rest of the engine: a choice takes a random number the
//! caller draws (a NIC's random source), feedback takes the time. Every
//! EV is below the configured count of paths, a power of two (2 ..=
//! [`MAX_PATHS`]), with the flow's random upper bits ([`Oblivious`],
//! [`Bitmap`]) above it: 16 bits in all.

use crate::units::Instant;

/// An entropy value: the 16 bits a packet carries for the switches'
/// ECMP hash, which name its path. Two bytes of alignment 1, so that an
/// `Option<Ev>` is three: beside a decision's ECN codepoint it keeps
/// [`crate::event::Decision`] at 40 bytes.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ev([u8; 2]);

impl Ev {
    /// The value `v`.
    pub const fn new(v: u16) -> Ev {
        Ev(v.to_le_bytes())
    }

    /// Its value.
    pub const fn get(self) -> u16 {
        u16::from_le_bytes(self.0)
    }
}

impl From<u16> for Ev {
    fn from(v: u16) -> Ev {
        Ev::new(v)
    }
}

impl core::fmt::Debug for Ev {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Ev({})", self.get())
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Ev {
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "Ev({})", self.get())
    }
}

/// The most paths a flow sprays over (uet-htsim's validations use 128).
pub const MAX_PATHS: u16 = 256;

/// What a packet's answer said of the path its EV named.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Feedback {
    /// An ACK without ECN-Echo, or a NACK trimmed at the last hop without
    /// a mark (the receiver's link, not the path, was full).
    Good,
    /// An ACK with ECN-Echo, or a last-hop NACK with one.
    Ecn,
    /// A NACK trimmed before the last hop.
    Nack,
    /// The packet timed out.
    Timeout,
}

impl Feedback {
    /// What an ACK says of its packet's path: marked (ECN-Echo) or good.
    pub const fn of_ack(marked: bool) -> Feedback {
        if marked {
            Feedback::Ecn
        } else {
            Feedback::Good
        }
    }

    /// What a NACK of a trimmed packet says of its path: a cut before the
    /// last hop is the path's; at the last hop (the receiver's link was
    /// full) the path answered as the header's ECN-Echo says (uet-htsim's
    /// `processNack`).
    pub const fn of_nack(last_hop: bool, marked: bool) -> Feedback {
        if last_hop {
            Feedback::of_ack(marked)
        } else {
            Feedback::Nack
        }
    }
}

/// The paths' count: a power of two, 2 ..= [`MAX_PATHS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Paths(u16);

impl Paths {
    /// `n` paths, if a power of two in 2 ..= [`MAX_PATHS`].
    pub const fn new(n: u16) -> Option<Paths> {
        if n >= 2 && n <= MAX_PATHS && n.is_power_of_two() {
            Some(Paths(n))
        } else {
            None
        }
    }

    /// How many.
    pub const fn get(self) -> u16 {
        self.0
    }

    /// The EV bits they use.
    const fn mask(self) -> u16 {
        self.0 - 1
    }

    /// A random EV below the count, from the caller's random number.
    const fn random(self, rand: u32) -> u16 {
        (rand as u16) & self.mask()
    }
}

/// A round over every EV in an order a random XOR permutes, the next XOR
/// drawn as each round ends (uet-htsim's `_current_ev_index`,
/// `_path_xor`), with the flow's random upper bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
struct Round {
    index: u16,
    xor: u16,
    upper: u16,
}

impl Round {
    fn new(paths: Paths, rand: u32) -> Round {
        Round {
            index: 0,
            xor: paths.random(rand),
            upper: ((rand >> 16) as u16) & !paths.mask(),
        }
    }

    /// The current EV's place (below the count).
    fn current(&self, paths: Paths) -> u16 {
        (self.index ^ self.xor) & paths.mask()
    }

    /// On to the next place; a new XOR after the round's last.
    fn advance(&mut self, paths: Paths, rand: u32) {
        self.index += 1;
        if self.index == paths.get() {
            self.index = 0;
            self.xor = paths.random(rand);
        }
    }

    /// A place with the flow's upper bits.
    fn ev(&self, place: u16) -> u16 {
        place | self.upper
    }
}

/// Oblivious spraying: 6 bytes a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Oblivious {
    round: Round,
}

impl Oblivious {
    /// A flow's sprayer, its first XOR and upper bits from `rand`.
    pub fn new(paths: Paths, rand: u32) -> Oblivious {
        Oblivious {
            round: Round::new(paths, rand),
        }
    }

    /// The next packet's EV; `rand` draws the next round's XOR when this
    /// one ends.
    pub fn next(&mut self, paths: Paths, rand: u32) -> u16 {
        let place = self.round.current(paths);
        self.round.advance(paths, rand);
        self.round.ev(place)
    }
}

/// The bitmap's largest penalty (a timeout's).
pub const MAX_PENALTY: u8 = 15;

/// Bitmap spraying: a round as [`Oblivious`]'s, skipping penalised EVs.
/// Four bits of penalty an EV: 134 bytes a flow (for up to 256 paths).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Bitmap {
    round: Round,
    /// EV 2i's penalty in the low nibble of byte i, EV 2i + 1's in the high.
    penalty: [u8; MAX_PATHS as usize / 2],
}

impl Bitmap {
    /// A flow's sprayer, no penalty, its first XOR and upper bits from `rand`.
    pub fn new(paths: Paths, rand: u32) -> Bitmap {
        Bitmap {
            round: Round::new(paths, rand),
            penalty: [0; MAX_PATHS as usize / 2],
        }
    }

    /// The penalty of the EV at `place`.
    pub fn penalty(&self, place: u16) -> u8 {
        let b = self.penalty[(place as usize / 2) % self.penalty.len()];
        if place & 1 == 0 {
            b & 0x0F
        } else {
            b >> 4
        }
    }

    fn set_penalty(&mut self, place: u16, v: u8) {
        let i = (place as usize / 2) % self.penalty.len();
        let b = self.penalty[i];
        self.penalty[i] = if place & 1 == 0 {
            (b & 0xF0) | (v & 0x0F)
        } else {
            (b & 0x0F) | (v << 4)
        };
    }

    /// The next packet's EV: the round's next EV without a penalty (the
    /// first one skipped forgiven by one), or after a whole round of
    /// penalised ones the one reached then. `rand` draws a new round's XOR.
    pub fn next(&mut self, paths: Paths, rand: u32) -> u16 {
        let mut place = self.round.current(paths);
        let mut first = true;
        let mut steps = 0u16;
        while self.penalty(place) > 0 {
            if first {
                self.set_penalty(place, self.penalty(place) - 1);
                first = false;
            }
            steps += 1;
            if steps > paths.get() {
                break;
            }
            self.round.advance(paths, rand);
            place = self.round.current(paths);
        }
        self.round.advance(paths, rand);
        self.round.ev(place)
    }

    /// The answer for the packet that carried `ev`: its place's penalty
    /// raised (ECN 1, NACK 4, timeout 15), at most [`MAX_PENALTY`].
    pub fn feedback(&mut self, paths: Paths, ev: u16, f: Feedback) {
        let place = ev & paths.mask();
        let add = match f {
            Feedback::Good => 0,
            Feedback::Ecn => 1,
            Feedback::Nack => 4,
            Feedback::Timeout => MAX_PENALTY,
        };
        let v = (self.penalty(place) + add).min(MAX_PENALTY);
        self.set_penalty(place, v);
    }
}

/// EVs kept for reuse, oldest first: a ring of eight (REPS' buffer size).
pub const RING: usize = 8;

/// How long a timeout freezes [`Reps`]: 10 ms (uet-htsim's
/// `exit_freeze_after`).
pub const FREEZE_NS: u64 = 10_000_000;

/// Random EVs [`Reps`] explores after a freeze: 16.
pub const EXPLORE: u8 = 16;

/// REPS: 8 EVs, their validity, the ring's places and the freeze: 28
/// bytes a flow (uet-htsim's paper says under 25 for the ring alone).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Reps {
    ev: [u16; RING],
    /// Bit i: slot i holds a fresh EV.
    valid: u8,
    /// Where the next good EV goes.
    head: u8,
    /// Slots written since the last reset (at most [`RING`]).
    count: u8,
    /// Fresh EVs (at most [`RING`]).
    fresh: u8,
    /// Where a frozen ring reads next.
    head_frozen: u8,
    /// Random EVs still to explore.
    explore: u8,
    /// A timeout froze it.
    frozen: bool,
    /// Frozen until this instant, ns modulo 2^32 (a freeze lasts 10 ms).
    frozen_until: u32,
}

impl Default for Reps {
    fn default() -> Self {
        Reps::new()
    }
}

impl Reps {
    /// An empty ring, not frozen.
    pub const fn new() -> Reps {
        Reps {
            ev: [0; RING],
            valid: 0,
            head: 0,
            count: 0,
            fresh: 0,
            head_frozen: 0,
            explore: 0,
            frozen: false,
            frozen_until: 0,
        }
    }

    /// Whether a timeout froze it.
    pub fn frozen(&self) -> bool {
        self.frozen
    }

    /// EVs kept that were not reused yet.
    pub fn fresh(&self) -> u8 {
        self.fresh
    }

    /// The next packet's EV: a random one while exploring; frozen, the
    /// ring's EVs in turn (a random one if it holds none); else the oldest
    /// fresh EV, or a random one if none is fresh.
    pub fn next(&mut self, paths: Paths, rand: u32) -> u16 {
        if self.explore > 0 {
            self.explore -= 1;
            return paths.random(rand);
        }
        if self.frozen() {
            if self.count == 0 {
                return paths.random(rand);
            }
            let i = self.head_frozen as usize % RING;
            if self.valid & (1 << i) != 0 {
                self.valid &= !(1 << i);
                self.fresh -= 1;
            }
            self.head_frozen = ((i + 1) % self.count as usize) as u8;
            return self.ev[i];
        }
        if self.count == 0 || self.fresh == 0 {
            return paths.random(rand);
        }
        // The oldest fresh EV: `fresh` places behind the head.
        let i = (self.head as usize + RING - self.fresh as usize) % RING;
        self.valid &= !(1 << i);
        self.fresh -= 1;
        self.ev[i]
    }

    /// The answer for the packet that carried `ev`, at `now`: a timeout
    /// freezes the ring (unless frozen or exploring); once a freeze has
    /// lasted its 10 ms, the next answer empties the ring and explores 16
    /// random EVs; a good answer keeps its EV.
    pub fn feedback(&mut self, ev: u16, f: Feedback, now: Instant) {
        let now = now.as_nanos() as u32;
        if f == Feedback::Timeout && !self.frozen && self.explore == 0 {
            self.frozen = true;
            self.frozen_until = now.wrapping_add(FREEZE_NS as u32);
        }
        if self.frozen && (now.wrapping_sub(self.frozen_until) as i32) > 0 {
            *self = Reps {
                explore: EXPLORE,
                ..Reps::new()
            };
        }
        if f == Feedback::Good {
            self.add(ev);
        }
    }

    /// Keeps `ev` at the head, over the oldest if the ring is full.
    fn add(&mut self, ev: u16) {
        let h = self.head as usize % RING;
        if self.valid & (1 << h) == 0 {
            self.fresh += 1;
        }
        self.ev[h] = ev;
        self.valid |= 1 << h;
        self.head = ((h + 1) % RING) as u8;
        self.count = (self.count + 1).min(RING as u8);
    }
}

/// uet-htsim's default: recycled EVs first (kept in a ring of eight where
/// uet-htsim keeps an unbounded list), else the bitmap's choice: 152 bytes
/// a flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Mixed {
    bitmap: Bitmap,
    recycled: [u16; RING],
    /// The oldest recycled EV's slot.
    first: u8,
    /// Recycled EVs kept.
    len: u8,
}

impl Mixed {
    /// A flow's sprayer, nothing recycled.
    pub fn new(paths: Paths, rand: u32) -> Mixed {
        Mixed {
            bitmap: Bitmap::new(paths, rand),
            recycled: [0; RING],
            first: 0,
            len: 0,
        }
    }

    /// The bitmap inside.
    pub fn bitmap(&self) -> &Bitmap {
        &self.bitmap
    }

    /// The next packet's EV: the oldest recycled one, else the bitmap's.
    pub fn next(&mut self, paths: Paths, rand: u32) -> u16 {
        if self.len > 0 {
            let ev = self.recycled[self.first as usize % RING];
            self.first = ((self.first as usize + 1) % RING) as u8;
            self.len -= 1;
            return ev;
        }
        self.bitmap.next(paths, rand)
    }

    /// The answer for `ev`: to the bitmap; a good one's EV recycled (the
    /// oldest dropped when eight are kept).
    pub fn feedback(&mut self, paths: Paths, ev: u16, f: Feedback) {
        self.bitmap.feedback(paths, ev, f);
        if f == Feedback::Good {
            if self.len as usize == RING {
                self.first = ((self.first as usize + 1) % RING) as u8;
                self.len -= 1;
            }
            let at = (self.first as usize + self.len as usize) % RING;
            self.recycled[at] = ev;
            self.len += 1;
        }
    }
}

/// Which chooser a sprayed flow uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[repr(u8)]
pub enum Balancer {
    /// [`Oblivious`].
    Oblivious = 0,
    /// [`Bitmap`].
    Bitmap = 1,
    /// [`Reps`].
    Reps = 2,
    /// [`Mixed`].
    Mixed = 3,
}

impl Balancer {
    /// Every balancer, by code.
    pub const ALL: [Balancer; 4] = [Balancer::Oblivious, Balancer::Bitmap, Balancer::Reps, Balancer::Mixed];

    /// The balancer of code `c` (its discriminant).
    pub const fn from_code(c: u8) -> Option<Balancer> {
        match c {
            0 => Some(Balancer::Oblivious),
            1 => Some(Balancer::Bitmap),
            2 => Some(Balancer::Reps),
            3 => Some(Balancer::Mixed),
            _ => None,
        }
    }
}

/// How a flow sprays ([`crate::event::EventKind::Spray`]): over how many
/// paths, with which chooser, and the seed of the flow's own random
/// numbers (a flow's choices depend on nothing else, so a trace replays
/// them on any core).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Spray {
    /// The paths' count.
    pub paths: Paths,
    /// The chooser.
    pub balancer: Balancer,
    /// The seed of the flow's random numbers (any value; 0 is taken as 1).
    pub seed: u32,
}

/// A flow's random numbers: Marsaglia's xorshift32 (13, 17, 5), period
/// 2^32 − 1 over the non-zero states. Four bytes, three shifts and three
/// XORs a number, the same on every core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
struct XorShift32(u32);

impl XorShift32 {
    const fn new(seed: u32) -> XorShift32 {
        XorShift32(if seed == 0 { 1 } else { seed })
    }

    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }
}

/// The engine's path state of one flow: none, or a flow's chooser and
/// its random numbers. An engine holds one in each slot
/// ([`crate::engine::Engine`]'s third parameter): [`NoPaths`], of no
/// size, where no flow sprays; [`Sprayer`] where flows may.
pub trait PathState: Copy {
    /// A flow that does not spray.
    const OFF: Self;
    /// Whether a flow can spray at all ([`NoPaths`] cannot): an engine
    /// whose flows never spray compiles the path choice away.
    const CAN_SPRAY: bool;

    /// The flow sprays from now on, as `spray` says (a new chooser).
    fn spray(&mut self, spray: &Spray);

    /// Whether the flow sprays.
    fn on(&self) -> bool;

    /// The EV of the flow's next packet, if it sprays.
    fn next(&mut self) -> Option<Ev>;

    /// What an answer said of the path of `ev`, at `now`.
    fn feedback(&mut self, ev: Ev, f: Feedback, now: Instant);
}

/// No path choice: every packet of a flow takes the flow's one path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoPaths;

impl PathState for NoPaths {
    const OFF: Self = NoPaths;
    const CAN_SPRAY: bool = false;

    fn spray(&mut self, _: &Spray) {}

    fn on(&self) -> bool {
        false
    }

    fn next(&mut self) -> Option<Ev> {
        None
    }

    fn feedback(&mut self, _: Ev, _: Feedback, _: Instant) {}
}

/// A chooser of any kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
enum Chooser {
    Off,
    Oblivious(Oblivious),
    Bitmap(Bitmap),
    Reps(Reps),
    Mixed(Mixed),
}

/// A flow's path choice: its paths, its chooser and its random numbers,
/// 164 bytes (the largest chooser, [`Mixed`], its tag, the count and the random state).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Sprayer {
    paths: Paths,
    rng: XorShift32,
    chooser: Chooser,
}

impl Sprayer {
    /// A flow's path choice as `spray` says: its first random number seeds
    /// the chooser's first round.
    pub fn new(spray: &Spray) -> Sprayer {
        let mut rng = XorShift32::new(spray.seed);
        let paths = spray.paths;
        let chooser = match spray.balancer {
            Balancer::Oblivious => Chooser::Oblivious(Oblivious::new(paths, rng.next())),
            Balancer::Bitmap => Chooser::Bitmap(Bitmap::new(paths, rng.next())),
            Balancer::Reps => Chooser::Reps(Reps::new()),
            Balancer::Mixed => Chooser::Mixed(Mixed::new(paths, rng.next())),
        };
        Sprayer { paths, rng, chooser }
    }
}

impl PathState for Sprayer {
    const OFF: Self = Sprayer {
        paths: Paths(2),
        rng: XorShift32(1),
        chooser: Chooser::Off,
    };
    const CAN_SPRAY: bool = true;

    fn spray(&mut self, spray: &Spray) {
        *self = Sprayer::new(spray);
    }

    fn on(&self) -> bool {
        !matches!(self.chooser, Chooser::Off)
    }

    fn next(&mut self) -> Option<Ev> {
        let (paths, rand) = (self.paths, self.rng.next());
        Some(Ev::new(match self.chooser {
            Chooser::Off => return None,
            Chooser::Oblivious(ref mut c) => c.next(paths, rand),
            Chooser::Bitmap(ref mut c) => c.next(paths, rand),
            Chooser::Reps(ref mut c) => c.next(paths, rand),
            Chooser::Mixed(ref mut c) => c.next(paths, rand),
        }))
    }

    fn feedback(&mut self, ev: Ev, f: Feedback, now: Instant) {
        let (paths, ev) = (self.paths, ev.get());
        match self.chooser {
            Chooser::Off | Chooser::Oblivious(_) => {}
            Chooser::Bitmap(ref mut c) => c.feedback(paths, ev, f),
            Chooser::Reps(ref mut c) => c.feedback(ev, f, now),
            Chooser::Mixed(ref mut c) => c.feedback(paths, ev, f),
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::testing::Lcg;
    use std::vec::Vec;

    fn p(n: u16) -> Paths {
        Paths::new(n).unwrap()
    }

    #[test]
    fn state_sizes() {
        use core::mem::size_of;
        assert_eq!(
            (
                size_of::<Oblivious>(),
                size_of::<Reps>(),
                size_of::<Bitmap>(),
                size_of::<Mixed>()
            ),
            (6, 28, 134, 152)
        );
        // The engine's per-flow path state: the largest chooser, its tag,
        // the count of paths and the random state.
        assert_eq!((size_of::<Sprayer>(), size_of::<NoPaths>()), (164, 0));
    }

    #[test]
    fn paths_are_powers_of_two_up_to_256() {
        for n in [2u16, 4, 64, 128, 256] {
            assert_eq!(Paths::new(n).map(Paths::get), Some(n));
        }
        for n in [0u16, 1, 3, 100, 512] {
            assert_eq!(Paths::new(n), None, "{n}");
        }
    }

    /// Oblivious: every round takes each EV once (an XOR permutation),
    /// every EV carries the flow's upper bits, and the order changes from
    /// round to round.
    #[test]
    fn oblivious_takes_every_path_once_a_round() {
        let mut g = Lcg(3);
        for n in [2u16, 8, 128, 256] {
            let paths = p(n);
            let mut o = Oblivious::new(paths, 0xABCD_0000 | g.draw() & 0xFFFF);
            let upper = 0xABCD & !(n - 1);
            let mut orders = Vec::new();
            for _ in 0..6 {
                let evs: Vec<u16> = (0..n).map(|_| o.next(paths, g.draw())).collect();
                assert!(evs.iter().all(|e| e & !(n - 1) == upper), "{n}: upper bits");
                let mut places: Vec<u16> = evs.iter().map(|e| e & (n - 1)).collect();
                orders.push(places.clone());
                places.sort();
                assert_eq!(places, (0..n).collect::<Vec<_>>(), "{n}: a permutation");
            }
            if n > 2 {
                assert!(orders.windows(2).any(|w| w[0] != w[1]), "{n}: the order changes");
            }
        }
    }

    /// Bitmap: penalties as uet-htsim's (ECN 1, NACK 4, timeout 15, at
    /// most 15); a penalised EV is skipped and only the first skipped at a
    /// choice is forgiven by one; with no penalty it is the oblivious round.
    #[test]
    fn bitmap_skips_penalised_paths_forgiving_the_first() {
        let paths = p(8);
        let mut b = Bitmap::new(paths, 0);
        let mut o = Oblivious::new(paths, 0);
        for _ in 0..20 {
            assert_eq!(b.next(paths, 5), o.next(paths, 5));
        }
        let mut b = Bitmap::new(paths, 0); // XOR 0: places 0, 1, 2, …
        b.feedback(paths, 0, Feedback::Ecn);
        b.feedback(paths, 1, Feedback::Nack);
        b.feedback(paths, 1, Feedback::Timeout);
        b.feedback(paths, 2, Feedback::Good);
        assert_eq!((b.penalty(0), b.penalty(1), b.penalty(2)), (1, MAX_PENALTY, 0));
        // Place 0 (penalty 1) is skipped and forgiven; place 1 skipped, kept.
        assert_eq!(b.next(paths, 0), 2);
        assert_eq!((b.penalty(0), b.penalty(1)), (0, MAX_PENALTY));
        // The rest of the round, then place 0 again (forgiven), place 1
        // skipped and forgiven by one.
        let rest: Vec<u16> = (0..5).map(|_| b.next(paths, 0)).collect();
        assert_eq!(rest, [3, 4, 5, 6, 7]);
        assert_eq!(b.next(paths, 0), 0);
        assert_eq!(b.next(paths, 0), 2);
        assert_eq!(b.penalty(1), MAX_PENALTY - 1);
        // Every path penalised: after a whole round, the one reached.
        let mut all = Bitmap::new(paths, 0);
        for ev in 0..8 {
            all.feedback(paths, ev, Feedback::Timeout);
        }
        let ev = all.next(paths, 0);
        assert!(ev < 8);
    }

    /// REPS: good EVs recycled oldest first, each once; random EVs when
    /// none is fresh; a timeout freezes the ring, which then cycles its
    /// EVs; the first answer past 10 ms empties it and 16 random EVs
    /// follow.
    #[test]
    fn reps_recycles_freezes_and_explores() {
        let paths = p(128);
        let mut r = Reps::new();
        let t = |ns| Instant::from_nanos(ns);
        assert_eq!(r.next(paths, 77), 77);
        for ev in [5u16, 9, 11] {
            r.feedback(ev, Feedback::Good, t(0));
        }
        r.feedback(40, Feedback::Ecn, t(0));
        r.feedback(41, Feedback::Nack, t(0));
        assert_eq!(r.fresh(), 3);
        assert_eq!([r.next(paths, 1), r.next(paths, 1), r.next(paths, 1)], [5, 9, 11]);
        assert_eq!(r.next(paths, 300), 300 % 128, "none fresh: random");
        // Nine good EVs into a ring of eight: the oldest is overwritten.
        for ev in 20..29u16 {
            r.feedback(ev, Feedback::Good, t(0));
        }
        assert_eq!(r.fresh(), RING as u8);
        assert_eq!(r.next(paths, 0), 21);
        // A timeout freezes; frozen, the ring's EVs come round in turn,
        // reused as often as asked.
        r.feedback(3, Feedback::Timeout, t(1_000));
        assert!(r.frozen());
        // The ring by slot: 25 26 27 28 21 22 23 24 (slot 3 overwritten
        // by 28, the head at slot 4); the frozen reads start at slot 0.
        let cycle: Vec<u16> = (0..10).map(|_| r.next(paths, 0)).collect();
        assert_eq!(&cycle[..8], &[25, 26, 27, 28, 21, 22, 23, 24]);
        assert_eq!(&cycle[8..], &[25, 26]);
        // A second timeout while frozen changes nothing; past the 10 ms,
        // the next answer empties the ring and explores 16 random EVs.
        r.feedback(3, Feedback::Timeout, t(5_000_000));
        r.feedback(50, Feedback::Good, t(1_000 + FREEZE_NS + 1));
        assert!(!r.frozen());
        assert_eq!(r.fresh(), 1, "the good EV of that answer is kept");
        let explored: Vec<u16> = (0..16u32).map(|i| r.next(paths, 1000 + i)).collect();
        assert_eq!(explored, (1000..1016u32).map(|i| (i % 128) as u16).collect::<Vec<_>>());
        assert_eq!(r.next(paths, 0), 50);
        // Exploring, a timeout does not freeze.
        let mut e = Reps::new();
        e.explore = 3;
        e.feedback(1, Feedback::Timeout, t(0));
        assert!(!e.frozen());
    }

    /// Mixed: recycled EVs first, oldest first, then the bitmap's round;
    /// feedback reaches both.
    #[test]
    fn mixed_prefers_recycled_then_the_bitmap() {
        let paths = p(16);
        let mut m = Mixed::new(paths, 0);
        m.feedback(paths, 7, Feedback::Good);
        m.feedback(paths, 3, Feedback::Ecn);
        m.feedback(paths, 9, Feedback::Good);
        assert_eq!(m.bitmap().penalty(3), 1);
        assert_eq!([m.next(paths, 0), m.next(paths, 0)], [7, 9]);
        // The bitmap's round, skipping place 3 once.
        let evs: Vec<u16> = (0..5).map(|_| m.next(paths, 0)).collect();
        assert_eq!(evs, [0, 1, 2, 4, 5]);
        // At most eight recycled: the oldest goes.
        for ev in 0..10u16 {
            m.feedback(paths, ev, Feedback::Good);
        }
        let evs: Vec<u16> = (0..8).map(|_| m.next(paths, 0)).collect();
        assert_eq!(evs, [2, 3, 4, 5, 6, 7, 8, 9]);
    }

    /// Every EV any sprayer gives stays within its paths (and upper bits),
    /// whatever the feedback, random numbers and times.
    #[test]
    fn every_choice_stays_within_the_paths() {
        let mut g = Lcg(11);
        for n in [2u16, 64, 256] {
            let paths = p(n);
            let seed = g.draw();
            let upper = ((seed >> 16) as u16) & !(n - 1);
            let (mut o, mut b, mut r, mut m) = (
                Oblivious::new(paths, seed),
                Bitmap::new(paths, seed),
                Reps::new(),
                Mixed::new(paths, seed),
            );
            let mut now = 0u64;
            for _ in 0..20_000 {
                now += (g.draw() % 100_000) as u64;
                let f = [Feedback::Good, Feedback::Ecn, Feedback::Nack, Feedback::Timeout][(g.draw() % 4) as usize];
                let ev = (g.draw() as u16 & (n - 1)) | upper;
                b.feedback(paths, ev, f);
                r.feedback(ev & (n - 1), f, Instant::from_nanos(now));
                m.feedback(paths, ev, f);
                for e in [
                    o.next(paths, g.draw()),
                    b.next(paths, g.draw()),
                    m.next(paths, g.draw()),
                ] {
                    assert_eq!(e & !(n - 1), upper);
                }
                assert!(r.next(paths, g.draw()) < n);
                assert!(r.fresh as usize <= RING && r.count as usize <= RING);
            }
        }
    }
}
