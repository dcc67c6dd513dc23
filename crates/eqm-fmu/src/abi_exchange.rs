//! The exported functions of FMI 2.0 Model Exchange (`fmi2Functions.h`): the importer sets the
//! time and states, reads derivatives and event indicators, and reports events; each function
//! converts between C and [`Instance`] and nothing more.

use crate::abi::with;
use crate::instance::{Error, Instance};
use crate::{Status, slice, slice_mut};
use std::ffi::{c_int, c_void};

/// `fmi2EventInfo`.
#[repr(C)]
pub struct EventInfo {
    pub new_discrete_states_needed: c_int,
    pub terminate_simulation: c_int,
    pub nominals_of_continuous_states_changed: c_int,
    pub values_of_continuous_states_changed: c_int,
    pub next_event_time_defined: c_int,
    pub next_event_time: f64,
}

/// `fmi2EnterEventMode`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterEventMode(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, |i| i.dimensions().map(|_| ())) }
}

/// `fmi2EnterContinuousTimeMode`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, |i| i.dimensions().map(|_| ())) }
}

/// `fmi2NewDiscreteStates`: EQM's event iteration runs to its end in one call, so no further
/// call is needed.
///
/// # Safety
/// `c` is null or a live component of ours; `info` is null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2NewDiscreteStates(c: *mut c_void, info: *mut EventInfo) -> Status {
    // SAFETY: null or writable, by the caller's contract.
    let info = unsafe { info.as_mut() };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let info =
                info.ok_or_else(|| Error::Error("the event information was asked for into a null pointer".into()))?;
            let outcome = i.new_discrete_states()?;
            *info = EventInfo {
                new_discrete_states_needed: 0,
                terminate_simulation: c_int::from(outcome.terminated.is_some()),
                nominals_of_continuous_states_changed: 0,
                values_of_continuous_states_changed: c_int::from(outcome.states_changed),
                next_event_time_defined: c_int::from(outcome.next_time_event.is_some()),
                next_event_time: outcome.next_time_event.unwrap_or(0.0),
            };
            Ok(())
        })
    }
}

/// `fmi2CompletedIntegratorStep`: no event is ever due at a completed step (the indicators
/// and time events say when one is).
///
/// # Safety
/// `c` is null or a live component of ours; the two flags are null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(
    c: *mut c_void,
    _no_set_prior: c_int,
    enter_event_mode: *mut c_int,
    terminate_simulation: *mut c_int,
) -> Status {
    // SAFETY: null or writable, by the caller's contract.
    let (enter, terminate) = unsafe { (enter_event_mode.as_mut(), terminate_simulation.as_mut()) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            i.completed_integrator_step()?;
            let (Some(enter), Some(terminate)) = (enter, terminate) else {
                return Err(Error::Error(
                    "the step's flags were asked for into a null pointer".into(),
                ));
            };
            *enter = 0;
            *terminate = c_int::from(i.terminated());
            Ok(())
        })
    }
}

/// `fmi2SetTime`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetTime(c: *mut c_void, t: f64) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, |i| i.set_time(t)) }
}

/// Runs `call` with the `n` values at `p` (read-only).
///
/// # Safety
/// `c` is null or a live component of ours; `p` is null or `n` elements long.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn reading(
    c: *mut c_void,
    p: *const f64,
    n: usize,
    call: impl FnOnce(&mut Instance, &[f64]) -> Result<(), Error>,
) -> Status {
    // SAFETY: by the caller's contract.
    let values = unsafe { slice(p, n) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| match values {
            Some(values) => call(i, values),
            None => Err(Error::Error("a null array was passed with a positive length".into())),
        })
    }
}

/// Runs `call` with the `n` values at `p` to write.
///
/// # Safety
/// `c` is null or a live component of ours; `p` is null or `n` writable elements.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn writing(
    c: *mut c_void,
    p: *mut f64,
    n: usize,
    call: impl FnOnce(&mut Instance, &mut [f64]) -> Result<(), Error>,
) -> Status {
    // SAFETY: by the caller's contract.
    let values = unsafe { slice_mut(p, n) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| match values {
            Some(values) => call(i, values),
            None => Err(Error::Error("a null array was passed with a positive length".into())),
        })
    }
}

/// `fmi2SetContinuousStates`.
///
/// # Safety
/// `c` is null or a live component of ours; `x` is null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetContinuousStates(c: *mut c_void, x: *const f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { reading(c, x, n, |i, x| i.set_states(x)) }
}

/// `fmi2GetContinuousStates`.
///
/// # Safety
/// `c` is null or a live component of ours; `x` is null or `n` writable elements.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetContinuousStates(c: *mut c_void, x: *mut f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { writing(c, x, n, |i, x| i.states(x)) }
}

/// `fmi2GetDerivatives`.
///
/// # Safety
/// `c` is null or a live component of ours; `dx` is null or `n` writable elements.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDerivatives(c: *mut c_void, dx: *mut f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { writing(c, dx, n, |i, dx| i.derivatives(dx)) }
}

/// `fmi2GetEventIndicators`.
///
/// # Safety
/// `c` is null or a live component of ours; `z` is null or `n` writable elements.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetEventIndicators(c: *mut c_void, z: *mut f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { writing(c, z, n, |i, z| i.event_indicators(z)) }
}

/// `fmi2GetNominalsOfContinuousStates`: 1 for every state (EQM declares no nominal values).
///
/// # Safety
/// `c` is null or a live component of ours; `nominals` is null or `n` writable elements.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(c: *mut c_void, nominals: *mut f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        writing(c, nominals, n, |i, nominals| {
            let (states, _) = i.dimensions()?;
            if states != nominals.len() {
                return Err(Error::Error(format!(
                    "the model has {states} continuous states, not {}",
                    nominals.len()
                )));
            }
            nominals.fill(1.0);
            Ok(())
        })
    }
}
