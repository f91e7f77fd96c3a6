//! The engine's configuration as plain C structs, one per algorithm, each
//! passed with its algorithm code and its size: `cc_config_default` fills
//! one with its paper's or draft's defaults, `cc_config_check` names its
//! first field out of range, `cc_engine_configure` hands it to an engine
//! (`table.rs`). A new algorithm adds its struct and codes in a file of
//! its own here and one `Mirrored` line; the dispatch by code follows
//! from the engine's registry (`cc_core::for_each_algorithm!`), so the C
//! API grows by a minor version.

use core::ffi::{c_char, c_void, CStr};
use core::mem::size_of;

use cc_core::algorithms::AlgorithmConfig;
use cc_core::algorithms::AnyConfig;
use cc_core::units::Fraction;
use cc_core::Algorithm;

use crate::cc_status;
use crate::convert::algorithm;

mod dcqcn;
mod dctcp;
mod hpcc;
mod hpcc_pint;
mod ldcp;
mod nscc;
mod powertcp;
mod swift;
mod theta_powertcp;
mod timely;

pub use self::dcqcn::*;
pub use self::dctcp::*;
pub use self::hpcc::*;
pub use self::hpcc_pint::*;
pub use self::ldcp::*;
pub use self::nscc::*;
pub use self::powertcp::*;
pub use self::swift::*;
pub use self::theta_powertcp::*;
pub use self::timely::*;

fn fraction(raw: u32, field: &'static CStr) -> Result<Fraction, &'static CStr> {
    Fraction::from_bits(raw).ok_or(field)
}

fn flag(v: u8, field: &'static CStr) -> Result<bool, &'static CStr> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(field),
    }
}

/// An engine configuration type with its C struct: the struct converts
/// to it (checked, naming the first field out of range as
/// `cc_config_check` does) and from it.
pub(crate) trait Mirrored: AlgorithmConfig + for<'a> TryFrom<&'a Self::C, Error = &'static CStr> {
    /// The C struct (plain integers: every bit pattern is a value, so
    /// one may be read from any bytes of its size).
    type C: Copy + for<'a> From<&'a Self>;
}

/// Why a C configuration was refused.
pub(crate) enum Refusal {
    /// A status with nothing to name.
    Status(cc_status),
    /// `CC_STATUS_INVALID_PARAMS`, naming the field.
    Field(&'static CStr),
}

impl From<cc_status> for Refusal {
    fn from(s: cc_status) -> Self {
        Refusal::Status(s)
    }
}

impl Refusal {
    /// The status, with the field's name written to `*field` (if not
    /// NULL) for `Field`.
    ///
    /// # Safety
    /// `field` is NULL or a valid pointer.
    pub(crate) unsafe fn report(self, field: *mut *const c_char) -> cc_status {
        match self {
            Refusal::Status(s) => s,
            Refusal::Field(name) => {
                if !field.is_null() {
                    // SAFETY: field is valid; the name is a static C string.
                    unsafe { field.write(name.as_ptr()) };
                }
                cc_status::InvalidParams
            }
        }
    }
}

/// `M`'s engine configuration of the C struct at `src`, `size` bytes.
///
/// # Safety
/// `src` is NULL or points to `size` readable bytes.
unsafe fn read<M: Mirrored>(src: *const c_void, size: usize) -> Result<M, Refusal> {
    if src.is_null() {
        return Err(cc_status::NullPointer.into());
    }
    if size != size_of::<M::C>() {
        return Err(cc_status::BadSize.into());
    }
    // SAFETY: `size` readable bytes (the caller's promise) of a struct of
    // plain integers, read without assuming C aligned them.
    let c = unsafe { src.cast::<M::C>().read_unaligned() };
    M::try_from(&c).map_err(Refusal::Field)
}

/// Writes `cfg` as its C struct to `dst`, `size` bytes.
///
/// # Safety
/// `dst` is NULL or points to `size` writable bytes.
unsafe fn write<M: Mirrored>(cfg: &M, dst: *mut c_void, size: usize) -> cc_status {
    if dst.is_null() {
        return cc_status::NullPointer;
    }
    if size != size_of::<M::C>() {
        return cc_status::BadSize;
    }
    // SAFETY: `size` writable bytes (the caller's promise).
    unsafe { dst.cast::<M::C>().write_unaligned(M::C::from(cfg)) };
    cc_status::Ok
}

/// The dispatch by algorithm, one arm per configuration of the engine's
/// registry: each arm reads or writes that configuration's C struct.
macro_rules! by_algorithm {
    ($($field:ident: $cfg:path, $title:literal { $($variant:ident = $name:literal,)+ })+) => {
        /// Sets `algorithm`'s part of `any` from the C struct at `src`.
        ///
        /// # Safety
        /// As [`read`].
        pub(crate) unsafe fn set(
            any: &mut AnyConfig,
            algorithm: Algorithm,
            src: *const c_void,
            size: usize,
        ) -> Result<(), Refusal> {
            match algorithm {
                // SAFETY: the caller's promise.
                $( $(Algorithm::$variant)|+ => any.$field = unsafe { read::<$cfg>(src, size)? }, )+
            }
            Ok(())
        }

        /// Writes `algorithm`'s part of `any` as its C struct to `dst`.
        ///
        /// # Safety
        /// As [`write`].
        pub(crate) unsafe fn get(any: &AnyConfig, algorithm: Algorithm, dst: *mut c_void, size: usize) -> cc_status {
            match algorithm {
                // SAFETY: the caller's promise.
                $( $(Algorithm::$variant)|+ => unsafe { write::<$cfg>(&any.$field, dst, size) }, )+
            }
        }

        /// The size of `algorithm`'s C struct.
        pub(crate) fn size_of_config(algorithm: Algorithm) -> usize {
            match algorithm {
                $( $(Algorithm::$variant)|+ => size_of::<<$cfg as Mirrored>::C>(), )+
            }
        }
    };
}
cc_core::for_each_algorithm!(by_algorithm);

/// The size of the configuration struct of the algorithm `code` names
/// (`sizeof(cc_ldcp_config)` for `CC_ALGORITHM_LDCP`); 0 for a code that
/// names none. Firmware built against one header can ask the library it
/// is linked with.
#[no_mangle]
pub extern "C" fn cc_config_size(algorithm_code: u8) -> usize {
    algorithm(algorithm_code).map_or(0, size_of_config)
}

/// Fills the configuration struct at `out` (`size` bytes: the struct of
/// the algorithm `algorithm_code` names, e.g. a `cc_ldcp_config` for
/// `CC_ALGORITHM_LDCP` or `CC_ALGORITHM_LDCP_RATE`) with its defaults:
/// HPCC++ and LDCP as their drafts give them, DCTCP as RFC 8257, DCQCN
/// and TIMELY as the HPCC evaluation ran them, Swift as Falcon's,
/// θ-PowerTCP and PowerTCP as their paper's, HPCC-PINT as its paper's.
/// `CC_STATUS_BAD_ENUM` for an unknown code, `CC_STATUS_BAD_SIZE` if
/// `size` is not its struct's.
///
/// # Safety
/// `out` is NULL or points to `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn cc_config_default(algorithm_code: u8, out: *mut c_void, size: usize) -> cc_status {
    match algorithm(algorithm_code) {
        // SAFETY: the caller's promise.
        Ok(a) => unsafe { get(&AnyConfig::DEFAULT, a, out, size) },
        Err(s) => s,
    }
}

/// Checks the configuration struct at `cfg` (`size` bytes, the struct of
/// the algorithm `algorithm_code` names) as `cc_engine_configure` does.
/// On `CC_STATUS_INVALID_PARAMS`, `*field` (if `field` is not NULL) names
/// the first field out of range, as `"ldcp.gamma_q24"`: a NUL-terminated
/// string the library owns.
///
/// # Safety
/// `cfg` is NULL or points to `size` readable bytes; `field` is NULL or a
/// valid pointer.
#[no_mangle]
pub unsafe extern "C" fn cc_config_check(
    algorithm_code: u8,
    cfg: *const c_void,
    size: usize,
    field: *mut *const c_char,
) -> cc_status {
    let a = match algorithm(algorithm_code) {
        Ok(a) => a,
        Err(s) => return s,
    };
    let mut any = AnyConfig::DEFAULT;
    // SAFETY: the caller's promises.
    match unsafe { set(&mut any, a, cfg, size) } {
        Ok(()) => cc_status::Ok,
        // SAFETY: field is NULL or valid.
        Err(r) => unsafe { r.report(field) },
    }
}
