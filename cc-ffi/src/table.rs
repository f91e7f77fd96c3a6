//! The engine in the caller's memory: a header (the configuration, the
//! free list, the counters) and `capacity` slots, each a handle word and
//! a flow's state. A flow's handle is its slot and the slot's generation
//! in one word (as `cc_core::engine::FlowHandle`), which the slot keeps,
//! so an event finds its flow by one index and one compare, and a handle
//! kept past its flow's end is refused, never taken for the flow that
//! reuses the slot. Ended slots are threaded on a free list through the
//! slots themselves; slots never used are taken in order, so initialising
//! the memory writes every slot once.

use core::mem::{align_of, size_of};

use cc_core::algorithms::{AnyConfig, AnyController};
use cc_core::controller::{Controller, Visit};
use cc_core::event::{Decision, Error};
use cc_core::path::{PathState, Sprayer};
use cc_core::telemetry::CounterWidths;
use cc_core::units::Instant;

use crate::cc_status;
use crate::convert::{self, cc_decision, cc_flow_params};

/// Hops of history a flow keeps: every hop an event may carry.
pub(crate) const H: usize = cc_core::wire::MAX_HOPS;

/// A flow's state, whatever its algorithm.
pub(crate) type Flow = AnyController<H>;

/// No next free slot.
const NONE: u32 = u32::MAX;

/// Written at initialisation, checked by every call: memory that was
/// never initialised, or was overwritten, is refused.
const MAGIC: u32 = 0x4343_4631; // "CCF1"

/// The engine: opaque to C, which holds a pointer to the memory it gave
/// `cc_engine_init`. One call at a time: every call may write the whole
/// engine (a flow's slot, the refusal counters, the hops' last counter
/// widths), so calls on one engine must not overlap; a NIC whose cores
/// run congestion control side by side gives each core its own engine.
pub struct cc_engine {
    magic: u32,
    capacity: u32,
    /// Slots `fresh..capacity` have never held a flow.
    fresh: u32,
    /// The last slot an ended flow gave back, `NONE` if there is none.
    free: u32,
    live: u32,
    tally: Tally,
    cfg: AnyConfig,
    /// The flows' path state, one a slot, in memory the caller attached
    /// (`cc_engine_attach_paths`); null where none was.
    paths: *mut Sprayer,
}

/// What every event may write besides its flow: the refusal counters, and
/// the hops' counter widths word last found valid (`with_hops` checks a
/// hop's widths only where they differ from it).
pub(crate) struct Tally {
    stats: cc_stats,
    pub(crate) hop_widths: u32,
}

impl Tally {
    /// Nothing counted, and the full widths (32-bit counters of bytes)
    /// as the word known valid.
    fn new() -> Tally {
        Tally {
            stats: cc_stats::default(),
            hop_widths: CounterWidths::FULL.to_word(),
        }
    }
}

/// One slot.
struct Slot {
    /// The handle of the slot's flow (of its last, or of its next when
    /// it holds none): the generation in the high half, bumped when the
    /// flow ends; the slot's index in the low, set when a flow starts. An
    /// event's check is one compare with it.
    handle: u32,
    /// The next free slot while this one is free.
    next_free: u32,
    state: Option<Flow>,
}

/// Refusals counted by the engine, by reason.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cc_stats {
    /// Events for handles of no live flow.
    pub unknown_flow: u32,
    /// Starts refused because every slot was taken.
    pub table_full: u32,
    /// Starts with parameters out of range.
    pub bad_start: u32,
    /// Telemetry refused: too many hops, bad widths, stale.
    pub bad_telemetry: u32,
    /// Events that do not apply to the flow's algorithm.
    pub not_applicable: u32,
    /// Flows live now.
    pub live_flows: u32,
}

/// Where the slots start: after the header, aligned for a slot.
const fn slots_offset() -> usize {
    size_of::<cc_engine>().next_multiple_of(align_of::<Slot>())
}

const fn engine_align() -> usize {
    if align_of::<cc_engine>() > align_of::<Slot>() {
        align_of::<cc_engine>()
    } else {
        align_of::<Slot>()
    }
}

/// Bytes of memory an engine of `capacity` flows needs; 0 if the capacity
/// is 0 or above `CC_MAX_CAPACITY`.
#[no_mangle]
pub extern "C" fn cc_engine_size(capacity: u32) -> usize {
    if capacity == 0 || capacity > crate::CC_MAX_CAPACITY {
        return 0;
    }
    slots_offset() + capacity as usize * size_of::<Slot>()
}

/// The alignment, in bytes, the engine's memory needs.
#[no_mangle]
pub extern "C" fn cc_engine_align() -> usize {
    engine_align()
}

/// Bytes of state a flow takes in the engine's memory.
#[no_mangle]
pub extern "C" fn cc_engine_flow_size() -> usize {
    size_of::<Slot>()
}

/// Makes an engine of `capacity` flows in `mem` (`len` bytes, at least
/// `cc_engine_size(capacity)`, aligned to `cc_engine_align()`), every
/// algorithm at its defaults (`cc_config_default`): `cc_engine_configure`
/// sets one algorithm's. The engine is `mem` itself, written into
/// `*out`; the memory is the caller's and stays in use until the caller
/// stops using the engine.
///
/// # Safety
/// `mem` is `len` writable bytes no one else uses; `out` is a valid
/// pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_engine_init(
    mem: *mut core::ffi::c_void,
    len: usize,
    capacity: u32,
    out: *mut *mut cc_engine,
) -> cc_status {
    if mem.is_null() || out.is_null() {
        return cc_status::NullPointer;
    }
    let need = cc_engine_size(capacity);
    if need == 0 || len < need || !(mem as usize).is_multiple_of(engine_align()) {
        return cc_status::BadMemory;
    }
    let e = mem.cast::<cc_engine>();
    // SAFETY: mem is `need` writable, aligned bytes: the header and
    // `capacity` slots after it.
    unsafe {
        e.write(cc_engine {
            magic: MAGIC,
            capacity,
            fresh: 0,
            free: NONE,
            live: 0,
            tally: Tally::new(),
            cfg: AnyConfig::DEFAULT,
            paths: core::ptr::null_mut(),
        });
        let slots = mem.cast::<u8>().add(slots_offset()).cast::<Slot>();
        for i in 0..capacity as usize {
            slots.add(i).write(Slot {
                handle: 0,
                next_free: NONE,
                state: None,
            });
        }
        *out = e;
    }
    cc_status::Ok
}

/// Sets the configuration of the algorithm `algorithm_code` names (and of
/// its other roles: `CC_ALGORITHM_HPCC` and `CC_ALGORITHM_HPCC_RECEIVER`
/// share one) from the struct at `cfg`, `size` bytes (its
/// `cc_config_size`), checked as `cc_config_check` does; a refused one
/// changes nothing. Only while the engine has no live flow
/// (`CC_STATUS_FLOWS_LIVE` otherwise): configure before the first
/// `cc_flow_start`, or after `cc_engine_reset`.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `cfg` is NULL or points to `size`
/// readable bytes.
#[no_mangle]
pub unsafe extern "C" fn cc_engine_configure(
    e: *mut cc_engine,
    algorithm_code: u8,
    cfg: *const core::ffi::c_void,
    size: usize,
) -> cc_status {
    // SAFETY: the caller's promise.
    let Some((h, _)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    let a = match convert::algorithm(algorithm_code) {
        Ok(a) => a,
        Err(s) => return s,
    };
    if h.live != 0 {
        return cc_status::FlowsLive;
    }
    let mut any = h.cfg;
    // SAFETY: the caller's promise.
    match unsafe { crate::config::set(&mut any, a, cfg, size) } {
        Ok(()) => {
            h.cfg = any;
            cc_status::Ok
        }
        // SAFETY: no field is asked for.
        Err(r) => unsafe { r.report(core::ptr::null_mut()) },
    }
}

/// Writes the engine's configuration of the algorithm `algorithm_code`
/// names to `out`, `size` bytes (its `cc_config_size`).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is NULL or points to `size`
/// writable bytes.
#[no_mangle]
pub unsafe extern "C" fn cc_engine_config(
    e: *const cc_engine,
    algorithm_code: u8,
    out: *mut core::ffi::c_void,
    size: usize,
) -> cc_status {
    // SAFETY: the caller's promise; read only.
    let Some(h) = (unsafe { header(e) }) else {
        return cc_status::BadMemory;
    };
    match convert::algorithm(algorithm_code) {
        // SAFETY: the caller's promise.
        Ok(a) => unsafe { crate::config::get(&h.cfg, a, out, size) },
        Err(s) => s,
    }
}

/// Bytes of memory the path state of `capacity` flows needs
/// (`cc_engine_attach_paths`); 0 if the capacity is 0 or above
/// `CC_MAX_CAPACITY`.
#[no_mangle]
pub extern "C" fn cc_paths_size(capacity: u32) -> usize {
    if capacity == 0 || capacity > crate::CC_MAX_CAPACITY {
        return 0;
    }
    capacity as usize * size_of::<Sprayer>()
}

/// The alignment, in bytes, the path state's memory needs.
#[no_mangle]
pub extern "C" fn cc_paths_align() -> usize {
    align_of::<Sprayer>()
}

/// Gives the engine memory for its flows' path choice (`len` bytes, at
/// least `cc_paths_size` of its capacity, aligned to `cc_paths_align()`),
/// so that its flows may spray (`cc_on_spray`); NULL with `len` 0 takes
/// it back. Without it the engine keeps no path state and refuses
/// `cc_on_spray` with `CC_STATUS_NOT_APPLICABLE`. Only while the engine
/// has no live flow (`CC_STATUS_FLOWS_LIVE` otherwise); the memory stays
/// in use until it is taken back or the engine is no longer used.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `mem` is NULL or `len` writable
/// bytes no one else uses.
#[no_mangle]
pub unsafe extern "C" fn cc_engine_attach_paths(
    e: *mut cc_engine,
    mem: *mut core::ffi::c_void,
    len: usize,
) -> cc_status {
    // SAFETY: the caller's promise.
    let Some((h, _)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    if h.live != 0 {
        return cc_status::FlowsLive;
    }
    if mem.is_null() {
        if len != 0 {
            return cc_status::NullPointer;
        }
        h.paths = core::ptr::null_mut();
        return cc_status::Ok;
    }
    let need = cc_paths_size(h.capacity);
    if len < need || !(mem as usize).is_multiple_of(align_of::<Sprayer>()) {
        return cc_status::BadMemory;
    }
    let paths = mem.cast::<Sprayer>();
    for i in 0..h.capacity as usize {
        // SAFETY: `mem` holds `capacity` aligned states.
        unsafe { paths.add(i).write(Sprayer::OFF) };
    }
    h.paths = paths;
    cc_status::Ok
}

/// The path state of the live flow at `handle`: `Err(UnknownFlow)` if no
/// live flow has it, `Ok(None)` if the engine has no path memory (no
/// refusal is counted here).
///
/// # Safety
/// `e` was made by `cc_engine_init`, and nothing else uses it during
/// the call.
pub(crate) unsafe fn path_of<'a>(e: *mut cc_engine, handle: u32) -> Result<Option<&'a mut Sprayer>, cc_status> {
    // SAFETY: the caller's promise.
    let Some((h, slots)) = (unsafe { parts(e) }) else {
        return Err(cc_status::BadMemory);
    };
    let index = (handle & 0xffff) as usize;
    match slots.get(index) {
        Some(s) if s.handle == handle && s.state.is_some() => {}
        _ => return Err(cc_status::UnknownFlow),
    }
    if h.paths.is_null() {
        return Ok(None);
    }
    // SAFETY: attached path memory holds `capacity` states; `index` is a
    // slot's.
    Ok(Some(unsafe { &mut *h.paths.add(index) }))
}

/// Whether the engine at `e` keeps path state (a cheap check for the
/// event functions' sprayed paths).
///
/// # Safety
/// `e` is NULL or points to memory `cc_engine_init` was given.
#[inline(always)]
pub(crate) unsafe fn has_paths(e: *const cc_engine) -> bool {
    // SAFETY: the caller's promise.
    unsafe { header(e) }.is_some_and(|h| !h.paths.is_null())
}

/// Counts refusal `s` in the engine's counters and answers it.
///
/// # Safety
/// As `path_of`.
pub(crate) unsafe fn refuse(e: *mut cc_engine, s: cc_status) -> cc_status {
    // SAFETY: the caller's promise.
    match unsafe { parts(e) } {
        Some((h, _)) => h.tally.stats.count(s),
        None => cc_status::BadMemory,
    }
}

/// Ends every flow and zeroes the counters, keeping the configuration;
/// handles given out before are refused afterwards.
///
/// # Safety
/// `e` was made by `cc_engine_init`.
#[no_mangle]
pub unsafe extern "C" fn cc_engine_reset(e: *mut cc_engine) -> cc_status {
    // SAFETY: the caller's promise.
    let Some((h, slots)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    for s in slots.iter_mut().take(h.fresh as usize) {
        if s.state.take().is_some() {
            s.handle = s.handle.wrapping_add(NEXT_GENERATION);
        }
        s.next_free = NONE;
    }
    h.fresh = 0;
    h.free = NONE;
    h.live = 0;
    h.tally = Tally::new();
    cc_status::Ok
}

/// Replaces every algorithm's configuration at once (the trace helpers'
/// configuration frame), under `cc_engine_configure`'s rule.
///
/// # Safety
/// `e` was made by `cc_engine_init`.
pub(crate) unsafe fn configure_all(e: *mut cc_engine, cfg: AnyConfig) -> cc_status {
    if cfg.check().is_err() {
        return cc_status::InvalidParams;
    }
    // SAFETY: the caller's promise.
    let Some((h, _)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    if h.live != 0 {
        return cc_status::FlowsLive;
    }
    h.cfg = cfg;
    cc_status::Ok
}

/// The engine's counters.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_engine_stats(e: *const cc_engine, out: *mut cc_stats) -> cc_status {
    if out.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise; read only.
    let Some(h) = (unsafe { header(e) }) else {
        return cc_status::BadMemory;
    };
    let mut s = h.tally.stats;
    s.live_flows = h.live;
    // SAFETY: out is valid.
    unsafe { out.write(s) };
    cc_status::Ok
}

/// The header of an initialised engine.
///
/// # Safety
/// `e` is NULL or points to memory `cc_engine_init` was given.
unsafe fn header<'a>(e: *const cc_engine) -> Option<&'a cc_engine> {
    if e.is_null() || !(e as usize).is_multiple_of(engine_align()) {
        return None;
    }
    // SAFETY: the caller's promise.
    let h = unsafe { &*e };
    (h.magic == MAGIC).then_some(h)
}

/// The header and the slots of an initialised engine.
///
/// # Safety
/// As `header`, and nothing else uses the engine during the call.
unsafe fn parts<'a>(e: *mut cc_engine) -> Option<(&'a mut cc_engine, &'a mut [Slot])> {
    // SAFETY: the caller's promise.
    let capacity = unsafe { header(e) }?.capacity as usize;
    // SAFETY: cc_engine_init wrote the header and `capacity` slots.
    unsafe {
        let slots = e.cast::<u8>().add(slots_offset()).cast::<Slot>();
        Some((&mut *e, core::slice::from_raw_parts_mut(slots, capacity)))
    }
}

/// A slot's generation step in its handle word (the generation in the
/// high half, the slot below).
const NEXT_GENERATION: u32 = 1 << 16;

impl cc_stats {
    /// Counts refusal `s` under its reason and answers it.
    #[cold]
    fn count(&mut self, s: cc_status) -> cc_status {
        let n = match s {
            cc_status::UnknownFlow => &mut self.unknown_flow,
            cc_status::TableFull => &mut self.table_full,
            cc_status::FlowExists | cc_status::InvalidParams => &mut self.bad_start,
            cc_status::TooManyHops | cc_status::BadCounterWidths | cc_status::StaleTelemetry => &mut self.bad_telemetry,
            cc_status::NotApplicable => &mut self.not_applicable,
            _ => return s,
        };
        *n = n.saturating_add(1);
        s
    }
}

/// Starts a flow at `now_ns`: its handle in `*handle`, its first decision
/// in `*out`. `CC_STATUS_TABLE_FULL` when every slot is taken.
///
/// # Safety
/// `e` was made by `cc_engine_init`; the other pointers are valid.
#[no_mangle]
pub unsafe extern "C" fn cc_flow_start(
    e: *mut cc_engine,
    now_ns: u64,
    params: *const cc_flow_params,
    handle_out: *mut u32,
    out: *mut cc_decision,
) -> cc_status {
    if params.is_null() || handle_out.is_null() || out.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    let Some((h, slots)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    // SAFETY: params is valid.
    let p = match convert::flow_params(unsafe { &*params }) {
        Ok(p) => p,
        Err(s) => {
            // Any refused parameter is a bad start, a bad enumeration too.
            h.tally.stats.count(cc_status::InvalidParams);
            return s;
        }
    };
    let index = if h.free != NONE {
        h.free
    } else if h.fresh < h.capacity {
        h.fresh
    } else {
        return h.tally.stats.count(cc_status::TableFull);
    };
    let Some(slot) = slots.get_mut(index as usize) else {
        return cc_status::BadMemory;
    };
    let started = Flow::start(&h.cfg, Instant::from_nanos(now_ns), &p);
    let (state, d) = match started {
        Ok(s) => s,
        Err(err) => {
            return h.tally.stats.count(err.into());
        }
    };
    if index == h.free {
        h.free = slot.next_free;
    } else {
        h.fresh += 1;
    }
    slot.state = Some(state);
    slot.next_free = NONE;
    slot.handle = (slot.handle & !0xffff) | index;
    h.live += 1;
    if !h.paths.is_null() {
        // SAFETY: attached path memory holds `capacity` states, and
        // `index` is below it (its slot exists).
        unsafe { h.paths.add(index as usize).write(Sprayer::OFF) };
    }
    // SAFETY: the pointers are valid.
    unsafe {
        handle_out.write(slot.handle);
        out.write(cc_decision::from(&d));
    }
    cc_status::Ok
}

/// Ends the flow at `handle`: its last decision in `*out`; the handle is
/// refused from now on.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_flow_end(e: *mut cc_engine, handle: u32, out: *mut cc_decision) -> cc_status {
    if out.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    let Some((h, slots)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    let index = handle & 0xffff;
    let r = match slots.get_mut(index as usize) {
        Some(s) if s.handle == handle => match s.state.take() {
            Some(state) => {
                s.handle = s.handle.wrapping_add(NEXT_GENERATION);
                s.next_free = h.free;
                h.free = index;
                h.live -= 1;
                Ok(state.decision(&h.cfg))
            }
            None => Err(Error::UnknownFlow),
        },
        _ => Err(Error::UnknownFlow),
    };
    Answer {
        tally: &mut h.tally,
        out,
    }
    .give(r)
}

/// One event kind, run on whichever controller a flow has: what the
/// C function was given, turned into the controller's hook by `run`.
pub(crate) trait Event {
    /// The event on `c` with its algorithm's part of the configuration,
    /// answered through `to`: the hook's result, or a refusal of the
    /// event's own fields (a bad enumeration, too many hops).
    ///
    /// # Safety
    /// The pointers the C function was given are valid (its promise).
    unsafe fn run<C: Controller>(self, c: &mut C, cfg: &C::Config, to: Answer<'_>) -> cc_status;
}

/// Where an event's answer goes: the decision to the caller's struct, a
/// refusal to the engine's counters.
pub(crate) struct Answer<'a> {
    pub(crate) tally: &'a mut Tally,
    out: *mut cc_decision,
}

impl Answer<'_> {
    /// The hook's result: the decision written, or the refusal counted.
    /// (`out` is valid: every maker of an `Answer` checked it.)
    #[inline(always)]
    pub(crate) fn give(self, r: Result<Decision, Error>) -> cc_status {
        match r {
            Ok(d) => {
                // SAFETY: `out` is valid (`apply`'s promise).
                unsafe { self.out.write(cc_decision::from(&d)) };
                cc_status::Ok
            }
            Err(e) => self.tally.stats.count(e.into()),
        }
    }

    /// The event refused before its hook ran.
    #[cold]
    pub(crate) fn refuse(self, s: cc_status) -> cc_status {
        self.tally.stats.count(s)
    }
}

/// The one path of every per-flow event: the slot by index, its
/// generation checked, then the flow's own algorithm's `on`, which runs
/// the event, counts a refusal and writes the decision. The dispatch on
/// the algorithm is a jump to a function made for that algorithm and
/// event, so an event pays for its own algorithm's code only (DESIGN
/// §8: an LDCP ACK does not carry the frame HPCC++'s hop loop needs).
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer; `ev`'s
/// pointers are valid.
#[inline(always)]
pub(crate) unsafe fn apply(e: *mut cc_engine, handle: u32, out: *mut cc_decision, ev: impl Event) -> cc_status {
    if out.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    let Some((h, slots)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    let (cfg, tally) = (&h.cfg, &mut h.tally);
    let Some(Slot {
        handle: slot_handle,
        state: Some(flow),
        ..
    }) = slots.get_mut((handle & 0xffff) as usize)
    else {
        return tally.stats.count(cc_status::UnknownFlow);
    };
    if *slot_handle != handle {
        return tally.stats.count(cc_status::UnknownFlow);
    }
    flow.visit(cfg, On { tally, out, ev })
}

/// `ev` for the flow's controller, its refusal counted in `tally` or its
/// decision written to `out`. Made only by [`apply`], after the checks
/// its caller's promise and its own tests give: `out` is valid, and so
/// are `ev`'s pointers.
struct On<'a, E> {
    tally: &'a mut Tally,
    out: *mut cc_decision,
    ev: E,
}

impl<E: Event> Visit for On<'_, E> {
    type Output = cc_status;

    #[inline(always)]
    fn on<C: Controller>(self, c: &mut C, cfg: &C::Config) -> cc_status {
        // SAFETY: `out` and `ev`'s pointers are valid (`On`'s maker,
        // `apply`, has its caller's promise).
        unsafe { on(c, cfg, self.ev, self.out, self.tally) }
    }
}

/// `ev` on one algorithm's controller: a function for each algorithm and
/// event, never inlined into the dispatch, its arguments in registers.
/// Its C calling convention is the exported functions' own, so that the
/// dispatch ends in a jump to it, with no frame of its own and no
/// conversion of the status it returns (a Rust-convention return cost 8
/// instructions an event on rv64imac: a frame and two extensions), and
/// the event's fields and `out` come third and fourth, where the exported
/// functions take them (the other order cost rv32imac 6 moves an event).
///
/// # Safety
/// As `apply`.
#[inline(never)]
unsafe extern "C" fn on<C: Controller>(
    c: &mut C,
    cfg: &C::Config,
    ev: impl Event,
    out: *mut cc_decision,
    tally: &mut Tally,
) -> cc_status {
    // SAFETY: as this function's.
    unsafe { ev.run(c, cfg, Answer { tally, out }) }
}
