//! The exported functions of the FMU state, FMI 2.0 (`fmi2GetFMUstate`, ...) and FMI 3.0
//! (`fmi3GetFMUState`, ...), for both interfaces: thin conversions between C and the
//! instance's [`FmuState`].
//!
//! Input: an instance, and an `FMUstate` pointer: null, or one these functions returned and
//! `FreeFMUstate` has not freed (a `Box<FmuState>` turned into a raw pointer, owned by the
//! FMU); or a byte buffer. Output: the state, its size and bytes, or the instance set into a
//! state, with every error logged and answered with an error status. Getting a state into a
//! pointer that already holds one overwrites that state in place, as FMI requires. It
//! deliberately decides nothing about states: that is the instance's (`instance::state`).

use crate::abi::with;
use crate::instance::{Error, FmuState};
use crate::{Status, slice, slice_mut};
use std::ffi::{c_char, c_void};

/// The state an `FMUstate` pointer holds.
///
/// # Safety
/// `state` is null or a pointer [`store`] made and [`free`] has not freed.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn held<'a>(state: *mut c_void) -> Result<&'a FmuState, Error> {
    // SAFETY: by the caller's contract, null or a live `Box<FmuState>` of ours.
    unsafe { (state as *const FmuState).as_ref() }
        .ok_or_else(|| Error::Error("no FMU state was given (a null pointer)".into()))
}

/// Puts `value` where `place` points: into the state already there (overwritten in place), or
/// into a new one whose pointer the FMU owns until it is freed.
///
/// # Safety
/// `place` is null or points to the importer's `FMUstate` variable, which holds null or a
/// pointer this function made and [`free`] has not freed.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn store(place: *mut *mut c_void, value: FmuState) -> Result<(), Error> {
    // SAFETY: by the caller's contract, null or the importer's writable variable.
    let Some(place) = (unsafe { (place as *mut *mut FmuState).as_mut() }) else {
        return Err(Error::Error(
            "no place for the FMU state was given (a null pointer)".into(),
        ));
    };
    // SAFETY: by the caller's contract, null or a live `Box<FmuState>` of ours, not aliased
    // during the call.
    match unsafe { place.as_mut() } {
        Some(existing) => *existing = value,
        None => *place = Box::into_raw(Box::new(value)),
    }
    Ok(())
}

/// `GetFMUstate`: the instance's state into `*state` (see [`store`]).
///
/// # Safety
/// `c` is null or a live instance of ours; `state` as [`store`] requires.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn get_state(c: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, |instance| store(state, instance.get_state()?)) }
}

/// `SetFMUstate`: the instance continues from `state`.
///
/// # Safety
/// `c` is null or a live instance of ours; `state` as [`held`] requires.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn set_state(c: *mut c_void, state: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, |instance| instance.set_state(held(state)?)) }
}

/// `FreeFMUstate`: frees the state `*state` and sets it to null; a null state is ignored.
///
/// # Safety
/// `c` is null or a live instance of ours; `state` is null or points to the importer's
/// `FMUstate` variable, which holds null or a pointer [`store`] made and this function has
/// not freed.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn free(c: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |_| {
            // SAFETY: by the caller's contract, null or the importer's writable variable.
            if let Some(place) = (state as *mut *mut FmuState).as_mut()
                && !place.is_null()
            {
                // SAFETY: a `Box<FmuState>` of ours (`store`), freed once: the variable is
                // set to null right after.
                drop(Box::from_raw(*place));
                *place = std::ptr::null_mut();
            }
            Ok(())
        })
    }
}

/// `SerializedFMUstateSize`: the number of bytes of `state`.
///
/// # Safety
/// `c` is null or a live instance of ours; `state` as [`held`] requires; `size` is null or
/// writable.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn serialized_size(c: *mut c_void, state: *mut c_void, size: *mut usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |_| {
            let n = held(state)?.bytes().len();
            // SAFETY: null or writable, by the caller's contract.
            let size = size
                .as_mut()
                .ok_or_else(|| Error::Error("no place for the size was given (a null pointer)".into()))?;
            *size = n;
            Ok(())
        })
    }
}

/// `SerializeFMUstate`: the bytes of `state` into the importer's buffer of `size` bytes.
///
/// # Safety
/// `c` is null or a live instance of ours; `state` as [`held`] requires; `bytes` is null or
/// points to `size` writable bytes.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn serialize(c: *mut c_void, state: *mut c_void, bytes: *mut u8, size: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |_| {
            let serialized = held(state)?.bytes();
            if size < serialized.len() {
                return Err(Error::Error(format!(
                    "the buffer of {size} bytes is smaller than the FMU state's {} bytes (see SerializedFMUstateSize)",
                    serialized.len()
                )));
            }
            // SAFETY: `size` writable bytes, by the caller's contract.
            let buffer =
                slice_mut(bytes, size).ok_or_else(|| Error::Error("no buffer was given (a null pointer)".into()))?;
            buffer[..serialized.len()].copy_from_slice(serialized);
            Ok(())
        })
    }
}

/// `DeSerializeFMUstate`: the state the `size` bytes at `bytes` hold, into `*state` (see
/// [`store`]); bytes that are not a state of this FMU are refused with the reason.
///
/// # Safety
/// `c` is null or a live instance of ours; `bytes` is null or points to `size` readable bytes;
/// `state` as [`store`] requires.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn deserialize(c: *mut c_void, bytes: *const u8, size: usize, state: *mut *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |instance| {
            // SAFETY: `size` readable bytes, by the caller's contract.
            let bytes =
                slice(bytes, size).ok_or_else(|| Error::Error("no bytes were given (a null pointer)".into()))?;
            store(state, instance.state_from_bytes(bytes)?)
        })
    }
}

/// `fmi2GetFMUstate`.
///
/// # Safety
/// See [`get_state`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetFMUstate(c: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { get_state(c, state) }
}

/// `fmi2SetFMUstate`.
///
/// # Safety
/// See [`set_state`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetFMUstate(c: *mut c_void, state: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { set_state(c, state) }
}

/// `fmi2FreeFMUstate`.
///
/// # Safety
/// See [`free`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeFMUstate(c: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { free(c, state) }
}

/// `fmi2SerializedFMUstateSize`.
///
/// # Safety
/// See [`serialized_size`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(c: *mut c_void, state: *mut c_void, size: *mut usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { serialized_size(c, state, size) }
}

/// `fmi2SerializeFMUstate` (`fmi2Byte` is C's `char`).
///
/// # Safety
/// See [`serialize`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: *mut c_void,
    state: *mut c_void,
    bytes: *mut c_char,
    size: usize,
) -> Status {
    // SAFETY: by the caller's contract; `char` and `u8` have one size and alignment.
    unsafe { serialize(c, state, bytes as *mut u8, size) }
}

/// `fmi2DeSerializeFMUstate`.
///
/// # Safety
/// See [`deserialize`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: *mut c_void,
    bytes: *const c_char,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    // SAFETY: by the caller's contract; `char` and `u8` have one size and alignment.
    unsafe { deserialize(c, bytes as *const u8, size, state) }
}

/// `fmi3GetFMUState`.
///
/// # Safety
/// See [`get_state`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetFMUState(c: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { get_state(c, state) }
}

/// `fmi3SetFMUState`.
///
/// # Safety
/// See [`set_state`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFMUState(c: *mut c_void, state: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { set_state(c, state) }
}

/// `fmi3FreeFMUState`.
///
/// # Safety
/// See [`free`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeFMUState(c: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { free(c, state) }
}

/// `fmi3SerializedFMUStateSize`.
///
/// # Safety
/// See [`serialized_size`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SerializedFMUStateSize(c: *mut c_void, state: *mut c_void, size: *mut usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { serialized_size(c, state, size) }
}

/// `fmi3SerializeFMUState`.
///
/// # Safety
/// See [`serialize`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SerializeFMUState(
    c: *mut c_void,
    state: *mut c_void,
    bytes: *mut u8,
    size: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { serialize(c, state, bytes, size) }
}

/// `fmi3DeserializeFMUState`.
///
/// # Safety
/// See [`deserialize`].
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3DeserializeFMUState(
    c: *mut c_void,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { deserialize(c, bytes, size, state) }
}
