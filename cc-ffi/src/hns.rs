//! The hns RoCE driver's 16-byte LDCP and DCQCN parameter blocks, read
//! into a `cc_ldcp_config` or `cc_dcqcn_config` and written from one (`cc_core::hns` has the
//! layout and the reading of each field; docs/c-abi.md the table).

use core::ffi::{c_char, CStr};

use cc_core::dcqcn::DcqcnConfig;
use cc_core::hns::{BlockError, DcqcnBlock, LdcpBlock, BLOCK_LEN};
use cc_core::ldcp::LdcpConfig;

use crate::cc_status;
use crate::config::{cc_dcqcn_config, cc_ldcp_config, Mirrored, Refusal};

/// Bytes of an hns parameter block.
pub const CC_HNS_BLOCK_LEN: u32 = 16;
const _: () = assert!(CC_HNS_BLOCK_LEN as usize == BLOCK_LEN);

/// The NUL-terminated name of a refused block's field.
fn field_name(e: &BlockError) -> &'static CStr {
    match e.field {
        "cwd0" => c"cwd0",
        "alpha" => c"alpha",
        "gamma" => c"gamma",
        "beta" => c"beta",
        "eta" => c"eta",
        "reserved" => c"reserved",
        "ai" => c"ai",
        "f" => c"f",
        "tkp" => c"tkp",
        "tmp" => c"tmp",
        "alp" => c"alp",
        "max_speed" => c"max_speed",
        "g" => c"g",
        "al" => c"al",
        "cnp_time" => c"cnp_time",
        "ashift" => c"ashift",
        _ => c"base configuration",
    }
}

/// Writes the refused field's name to `*field` (if not NULL).
///
/// # Safety
/// `field` is NULL or a valid pointer.
unsafe fn refused(e: BlockError, field: *mut *const c_char) -> cc_status {
    if !field.is_null() {
        // SAFETY: the caller's promise; the name is a static C string.
        unsafe { field.write(field_name(&e).as_ptr()) };
    }
    cc_status::InvalidParams
}

/// Reads `block` into `*cfg` (a C struct of configuration `M`) through
/// `apply`; `*cfg` is unchanged on a refusal, and refused as
/// `cc_config_check` would refuse it if it is out of range before.
///
/// # Safety
/// As `cc_hns_ldcp_read`.
unsafe fn read<M: Mirrored>(
    cfg: *mut M::C,
    block: *const u8,
    field: *mut *const c_char,
    apply: impl FnOnce(&[u8; BLOCK_LEN], &M) -> Result<M, BlockError>,
) -> cc_status {
    if cfg.is_null() || block.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promises.
    let (c, bytes) = unsafe { (&mut *cfg, &*block.cast::<[u8; BLOCK_LEN]>()) };
    let base = match M::try_from(c) {
        Ok(m) => m,
        // SAFETY: field is NULL or valid.
        Err(name) => return unsafe { Refusal::Field(name).report(field) },
    };
    match apply(bytes, &base) {
        Ok(m) => {
            *c = M::C::from(&m);
            cc_status::Ok
        }
        // SAFETY: field is NULL or valid.
        Err(e) => unsafe { refused(e, field) },
    }
}

/// Writes the block `make` makes of `*cfg` (a C struct of configuration
/// `M`) to `out`.
///
/// # Safety
/// As `cc_hns_ldcp_write`.
unsafe fn write<M: Mirrored>(
    cfg: *const M::C,
    out: *mut u8,
    field: *mut *const c_char,
    make: impl FnOnce(&M) -> Result<[u8; BLOCK_LEN], BlockError>,
) -> cc_status {
    if cfg.is_null() || out.is_null() {
        return cc_status::NullPointer;
    }
    // SAFETY: the caller's promise.
    let m = match M::try_from(unsafe { &*cfg }) {
        Ok(m) => m,
        // SAFETY: field is NULL or valid.
        Err(name) => return unsafe { Refusal::Field(name).report(field) },
    };
    match make(&m) {
        Ok(b) => {
            // SAFETY: out points to 16 writable bytes.
            unsafe { out.cast::<[u8; BLOCK_LEN]>().write(b) };
            cc_status::Ok
        }
        // SAFETY: field is NULL or valid.
        Err(e) => unsafe { refused(e, field) },
    }
}

/// Reads an hns LDCP block (`block`, 16 bytes) into `*cfg`; the block has
/// no MTU, fast start or RTT-request timeout, so those stay as `cfg` has
/// them. On `CC_STATUS_INVALID_PARAMS` `*field` (if not NULL) names the
/// block's field ("gamma", "eta", …), or the struct's if `*cfg` was out
/// of range before, and `*cfg` is unchanged.
///
/// # Safety
/// `cfg` is a valid pointer; `block` points to 16 readable bytes; `field`
/// is NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_hns_ldcp_read(
    cfg: *mut cc_ldcp_config,
    block: *const u8,
    field: *mut *const c_char,
) -> cc_status {
    // SAFETY: the caller's promises.
    unsafe { read::<LdcpConfig>(cfg, block, field, |b, base| LdcpBlock::parse(b)?.to_config(base)) }
}

/// Writes `*cfg` as an hns LDCP block into `out` (16 bytes).
/// `CC_STATUS_INVALID_PARAMS` if the block cannot hold it (an alpha that
/// is no multiple of 1/128 packet, a gamma or beta that is no power of
/// two), with `*field` naming the block's field.
///
/// # Safety
/// `cfg` is a valid pointer; `out` points to 16 writable bytes; `field` is
/// NULL or a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_hns_ldcp_write(
    cfg: *const cc_ldcp_config,
    out: *mut u8,
    field: *mut *const c_char,
) -> cc_status {
    // SAFETY: the caller's promises.
    unsafe { write::<LdcpConfig>(cfg, out, field, |l| Ok(LdcpBlock::from_config(l)?.to_bytes())) }
}

/// Reads an hns DCQCN block (`block`, 16 bytes) into `*cfg`; the block
/// has no hyper increase, lowest rate, byte counter or target clamp, so
/// those stay as `cfg` has them. Errors as `cc_hns_ldcp_read`.
///
/// # Safety
/// As `cc_hns_ldcp_read`.
#[no_mangle]
pub unsafe extern "C" fn cc_hns_dcqcn_read(
    cfg: *mut cc_dcqcn_config,
    block: *const u8,
    field: *mut *const c_char,
) -> cc_status {
    // SAFETY: the caller's promises.
    unsafe { read::<DcqcnConfig>(cfg, block, field, |b, base| DcqcnBlock::parse(b)?.to_config(base)) }
}

/// Writes `*cfg` as an hns DCQCN block for flows at `line_rate_mbps` (the
/// block's `max_speed`, which scales its R_AI) into `out` (16 bytes).
/// `CC_STATUS_INVALID_PARAMS` if the block cannot hold it (a timer that
/// is no power of two microseconds, …), with `*field` naming the block's
/// field.
///
/// # Safety
/// As `cc_hns_ldcp_write`.
#[no_mangle]
pub unsafe extern "C" fn cc_hns_dcqcn_write(
    cfg: *const cc_dcqcn_config,
    line_rate_mbps: u32,
    out: *mut u8,
    field: *mut *const c_char,
) -> cc_status {
    // SAFETY: the caller's promises.
    unsafe {
        write::<DcqcnConfig>(cfg, out, field, |d| {
            Ok(DcqcnBlock::from_config(d, line_rate_mbps)?.to_bytes())
        })
    }
}
