//! The engine in the caller's memory: a header (the configuration, the
//! free list, the counters) and `capacity` slots, each a generation and a
//! flow's state. A flow's handle is its slot and the slot's generation
//! (as `cc_core::engine::FlowHandle`), so an event finds its flow by one
//! index and a handle kept past its flow's end is refused, never taken
//! for the flow that reuses the slot. Ended slots are threaded on a free
//! list through the slots themselves; slots never used are taken in
//! order, so initialising the memory writes every slot once.

use core::mem::{align_of, size_of};

use cc_core::controller::{AnyConfig, AnyController, Controller};
use cc_core::event::{Decision, Error};
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
/// `cc_engine_init`.
pub struct cc_engine {
    magic: u32,
    capacity: u32,
    /// Slots `fresh..capacity` have never held a flow.
    fresh: u32,
    /// The last slot an ended flow gave back, `NONE` if there is none.
    free: u32,
    live: u32,
    stats: cc_stats,
    cfg: AnyConfig,
}

/// One slot.
struct Slot {
    generation: u16,
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
/// `cc_engine_size(capacity)`, aligned to `cc_engine_align()`), with the
/// configuration `cfg` (checked: `CC_STATUS_INVALID_PARAMS` if a field is
/// out of range, and `cc_config_check` names it). The engine is `mem`
/// itself, written into `*out`; the memory is the caller's and stays
/// in use until the caller stops using the engine.
///
/// # Safety
/// `mem` is `len` writable bytes no one else uses; `cfg` and `out` are
/// valid pointers.
#[no_mangle]
pub unsafe extern "C" fn cc_engine_init(
    mem: *mut core::ffi::c_void,
    len: usize,
    capacity: u32,
    cfg: *const crate::cc_config,
    out: *mut *mut cc_engine,
) -> cc_status {
    if mem.is_null() || cfg.is_null() || out.is_null() {
        return cc_status::NullPointer;
    }
    let need = cc_engine_size(capacity);
    if need == 0 || len < need || !(mem as usize).is_multiple_of(engine_align()) {
        return cc_status::BadMemory;
    }
    // SAFETY: cfg is valid (the caller's promise).
    let cfg = match crate::config::any_config(unsafe { &*cfg }) {
        Ok(c) => c,
        Err(s) => return s,
    };
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
            stats: cc_stats::default(),
            cfg,
        });
        let slots = mem.cast::<u8>().add(slots_offset()).cast::<Slot>();
        for i in 0..capacity as usize {
            slots.add(i).write(Slot {
                generation: 0,
                next_free: NONE,
                state: None,
            });
        }
        *out = e;
    }
    cc_status::Ok
}

/// Replaces the configuration (checked as at `cc_engine_init`; a refused
/// one changes nothing), ends every flow and zeroes the counters; handles
/// given out before are refused afterwards.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `cfg` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_engine_reset(e: *mut cc_engine, cfg: *const crate::cc_config) -> cc_status {
    if cfg.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    let Some((h, slots)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    // SAFETY: cfg is valid (the caller's promise).
    let cfg = match crate::config::any_config(unsafe { &*cfg }) {
        Ok(c) => c,
        Err(s) => return s,
    };
    h.cfg = cfg;
    for s in slots.iter_mut().take(h.fresh as usize) {
        if s.state.take().is_some() {
            s.generation = s.generation.wrapping_add(1);
        }
        s.next_free = NONE;
    }
    h.fresh = 0;
    h.free = NONE;
    h.live = 0;
    h.stats = cc_stats::default();
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
    let mut s = h.stats;
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

/// A handle as one word: the generation in the high half, the slot below.
fn handle(index: u32, generation: u16) -> u32 {
    (generation as u32) << 16 | index
}

impl cc_engine {
    fn count(&mut self, r: &Result<Decision, Error>) {
        let s = &mut self.stats;
        let n = match r {
            Ok(_) => return,
            Err(Error::UnknownFlow) => &mut s.unknown_flow,
            Err(Error::TableFull) => &mut s.table_full,
            Err(Error::FlowExists | Error::InvalidParams) => &mut s.bad_start,
            Err(Error::TooManyHops | Error::BadCounterWidths | Error::StaleTelemetry) => &mut s.bad_telemetry,
            Err(Error::NotApplicable) => &mut s.not_applicable,
        };
        *n = n.saturating_add(1);
    }
}

/// Writes `r` to `out`: the decision, or the refusal as a status.
///
/// # Safety
/// `out` is a valid pointer.
unsafe fn answer(r: Result<Decision, Error>, out: *mut cc_decision) -> cc_status {
    match r {
        Ok(d) => {
            // SAFETY: the caller's promise.
            unsafe { out.write(cc_decision::from(&d)) };
            cc_status::Ok
        }
        Err(e) => e.into(),
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
            h.count(&Err(Error::InvalidParams));
            return s;
        }
    };
    let index = if h.free != NONE {
        h.free
    } else if h.fresh < h.capacity {
        h.fresh
    } else {
        h.count(&Err(Error::TableFull));
        return cc_status::TableFull;
    };
    let Some(slot) = slots.get_mut(index as usize) else {
        return cc_status::BadMemory;
    };
    let started = Flow::start(&h.cfg, Instant::from_nanos(now_ns), &p);
    let (state, d) = match started {
        Ok(s) => s,
        Err(err) => {
            h.count(&Err(err));
            return err.into();
        }
    };
    if index == h.free {
        h.free = slot.next_free;
    } else {
        h.fresh += 1;
    }
    slot.state = Some(state);
    slot.next_free = NONE;
    h.live += 1;
    // SAFETY: the pointers are valid.
    unsafe {
        handle_out.write(handle(index, slot.generation));
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
        Some(s) if s.generation == (handle >> 16) as u16 => match s.state.take() {
            Some(state) => {
                s.generation = s.generation.wrapping_add(1);
                s.next_free = h.free;
                h.free = index;
                h.live -= 1;
                Ok(state.decision(&h.cfg))
            }
            None => Err(Error::UnknownFlow),
        },
        _ => Err(Error::UnknownFlow),
    };
    h.count(&r);
    // SAFETY: out is valid.
    unsafe { answer(r, out) }
}

/// The one path of every per-flow event: the slot by index, its
/// generation checked, the controller's hook, the refusal counted, the
/// decision written.
///
/// # Safety
/// `e` was made by `cc_engine_init`; `out` is a valid pointer.
#[inline(always)]
pub(crate) unsafe fn apply(
    e: *mut cc_engine,
    handle: u32,
    out: *mut cc_decision,
    hook: impl FnOnce(&mut Flow, &AnyConfig) -> Result<Decision, Error>,
) -> cc_status {
    if out.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    let Some((h, slots)) = (unsafe { parts(e) }) else {
        return cc_status::BadMemory;
    };
    let r = match slots.get_mut((handle & 0xffff) as usize) {
        Some(Slot {
            generation,
            state: Some(state),
            ..
        }) if *generation == (handle >> 16) as u16 => hook(state, &h.cfg),
        _ => Err(Error::UnknownFlow),
    };
    h.count(&r);
    // SAFETY: out is valid.
    unsafe { answer(r, out) }
}
