//! The exported functions of FMI 3.0 (`fmi3Functions.h`), Model Exchange and Co-Simulation,
//! over the same [`Instance`] as FMI 2.0. Co-Simulation has Event Mode when the importer asks
//! for it (`eventModeUsed`: a step stops before an event, at the first one with
//! `earlyReturnAllowed`, and the importer has it handled in Event Mode), and handles the
//! events inside `fmi3DoStep` otherwise; the adjoint derivatives are the
//! transpose of the directional ones; clocks, scheduled execution and configuration mode are
//! not provided (the FMU state's functions
//! are `abi_state`'s), and the model description says so; a value reference of an array names
//! all its elements, row-major, in the getters, setters and derivatives; the types EQM has no variables of (Float32,
//! the 8-, 16- and 64-bit integers, Binary) accept only empty requests; Strings are read, never
//! written (a String parameter's text is part of the compiled model).

use crate::abi::{directional, get, get_texts, not_provided, set, with};
use crate::abi_exchange::{
    fmi2CompletedIntegratorStep, fmi2EnterContinuousTimeMode, fmi2GetContinuousStates, fmi2GetDerivatives,
    fmi2GetEventIndicators, fmi2GetNominalsOfContinuousStates, fmi2SetContinuousStates, fmi2SetTime,
};
use crate::instance::{Error, Instance, Interface};
use crate::load::model_compiler;
use crate::variables::Kind;
use crate::{Component, ERROR, Log, LogMessage, OK, Status, component, panic_text, slice, slice_mut, text};
use eqm::fmi::FmiVersion;
use std::ffi::{CString, c_char, c_int, c_uint, c_void};
use std::panic::catch_unwind;

/// `fmi3GetVersion`.
// SAFETY: exported under its FMI name, once; it takes nothing.
#[unsafe(no_mangle)]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

/// An instance of `interface` for FMI 3; null with the reason logged when it cannot be made.
///
/// # Safety
/// The strings are null or NUL-terminated.
// SAFETY: an unsafe function; its callers follow the contract above.
// The arguments are those of FMI's two instantiation functions that both pass on.
#[allow(clippy::too_many_arguments)]
unsafe fn instantiate(
    name: *const c_char,
    token: *const c_char,
    resources: *const c_char,
    logging_on: bool,
    environment: *mut c_void,
    log: Option<LogMessage>,
    interface: Interface,
    events: (bool, bool),
) -> *mut c_void {
    // SAFETY: each string is null or NUL-terminated, by the caller's contract.
    let (name, token, resources) = unsafe { (text(name), text(token), text(resources)) };
    let mut component = Component {
        name: CString::new(name.unwrap_or("")).unwrap_or_default(),
        logger: Log::Fmi3(log),
        environment,
        logging_on,
        instance: None,
        texts: Vec::new(),
    };
    let created = catch_unwind(|| -> Result<Instance, String> {
        let resources = resources.ok_or("no resource path was given: the FMU's resources hold the model")?;
        let compile = model_compiler(resources, token.unwrap_or(""), FmiVersion::Fmi3)?;
        Instance::new(compile, interface).map(|i| {
            i.for_token(token.unwrap_or(""))
                .with_event_mode(events.0, events.1)
                .with_arrays()
        })
    });
    let failure = match created {
        Ok(Ok(instance)) => {
            component.instance = Some(instance);
            return Box::into_raw(Box::new(component)) as *mut c_void;
        }
        Ok(Err(message)) => message,
        Err(panic) => format!("internal error in EQM's FMU runtime: {}", panic_text(panic.as_ref())),
    };
    component.log(ERROR, "logStatusError", &failure);
    std::ptr::null_mut()
}

/// `fmi3InstantiateModelExchange`.
///
/// # Safety
/// The strings are null or NUL-terminated; `log` is null or the importer's logger, valid
/// through the instance's life.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    name: *const c_char,
    token: *const c_char,
    resources: *const c_char,
    _visible: bool,
    logging_on: bool,
    environment: *mut c_void,
    log: Option<LogMessage>,
) -> *mut c_void {
    // SAFETY: by the caller's contract.
    unsafe {
        instantiate(
            name,
            token,
            resources,
            logging_on,
            environment,
            log,
            Interface::ModelExchange,
            (false, false),
        )
    }
}

/// `fmi3InstantiateCoSimulation`: with `eventModeUsed` a step stops before an event for the
/// importer to have it handled in Event Mode, at the first event in the step when
/// `earlyReturnAllowed`, else only at one at the step's end; intermediate updates are not
/// provided, so the callback and the intermediate variables are not used.
///
/// # Safety
/// The strings are null or NUL-terminated; `log` is null or the importer's logger, valid
/// through the instance's life.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    name: *const c_char,
    token: *const c_char,
    resources: *const c_char,
    _visible: bool,
    logging_on: bool,
    event_mode_used: bool,
    early_return_allowed: bool,
    _required_intermediate: *const c_uint,
    _n_required_intermediate: usize,
    environment: *mut c_void,
    log: Option<LogMessage>,
    _intermediate_update: *mut c_void,
) -> *mut c_void {
    // SAFETY: by the caller's contract.
    unsafe {
        instantiate(
            name,
            token,
            resources,
            logging_on,
            environment,
            log,
            Interface::CoSimulation,
            (event_mode_used, early_return_allowed),
        )
    }
}

/// `fmi3InstantiateScheduledExecution`: not provided (null, no logger to tell).
// SAFETY: exported under its FMI name, once; it reads none of its arguments.
#[unsafe(no_mangle)]
pub extern "C" fn fmi3InstantiateScheduledExecution(
    _name: *const c_char,
    _token: *const c_char,
    _resources: *const c_char,
    _visible: bool,
    _logging_on: bool,
    _environment: *mut c_void,
    _log: Option<LogMessage>,
    _clock_update: *mut c_void,
    _lock: *mut c_void,
    _unlock: *mut c_void,
) -> *mut c_void {
    std::ptr::null_mut()
}

/// `fmi3FreeInstance`.
///
/// # Safety
/// `c` is null or an instance of ours not freed before.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeInstance(c: *mut c_void) {
    // SAFETY: by the caller's contract (the same component type as FMI 2's).
    unsafe { crate::abi::fmi2FreeInstance(c) }
}

/// `fmi3SetDebugLogging`.
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    c: *mut c_void,
    logging_on: bool,
    _n: usize,
    _categories: *const *const c_char,
) -> Status {
    // SAFETY: by the caller's contract.
    match unsafe { component(c) } {
        Some(component) => {
            component.logging_on = logging_on;
            OK
        }
        None => ERROR,
    }
}

/// `fmi3EnterInitializationMode`: the experiment and the initialization at once.
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    c: *mut c_void,
    tolerance_defined: bool,
    tolerance: f64,
    start: f64,
    stop_defined: bool,
    stop: f64,
) -> Status {
    let (tolerance, stop) = (tolerance_defined.then_some(tolerance), stop_defined.then_some(stop));
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            i.setup_experiment(tolerance, start, stop)?;
            i.enter_initialization()
        })
    }
}

/// `fmi3ExitInitializationMode`.
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3ExitInitializationMode(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, Instance::exit_initialization) }
}

/// `fmi3EnterEventMode`: Model Exchange's, or Co-Simulation's (with `eventModeUsed` only).
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterEventMode(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| match i.interface {
            Interface::CoSimulation => i.enter_event_mode(),
            Interface::ModelExchange => i.dimensions().map(|_| ()),
        })
    }
}

/// `fmi3EnterStepMode`: from Event Mode into Step Mode; Co-Simulation without event mode is in
/// Step Mode after the initialization already.
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterStepMode(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, Instance::enter_step_mode) }
}

/// `fmi3Terminate`.
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Terminate(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, Instance::terminate) }
}

/// `fmi3Reset`.
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Reset(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, Instance::reset) }
}

/// The scalars the `n` value references at `refs` name (an array's elements row-major), or
/// the reason they cannot be read.
///
/// # Safety
/// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn elements_of(c: *mut c_void, refs: *const c_uint, n: usize) -> Result<Vec<u32>, Error> {
    // SAFETY: by the caller's contract.
    let refs = unsafe { slice(refs, n) }
        .ok_or_else(|| Error::Error("a null array was passed with a positive length".into()))?;
    // SAFETY: by the caller's contract.
    match unsafe { component(c) }.and_then(|c| c.instance.as_ref()) {
        Some(instance) => Ok(instance.elements(refs)),
        // The call reports the instance's own state.
        None => Ok(refs.to_vec()),
    }
}

/// Runs a get or set of the variables at `refs` on their scalars, after checking FMI 3's
/// `nValues`: one value per scalar, an array counting all its elements.
///
/// # Safety
/// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn scalar(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    n_values: usize,
    access: impl FnOnce(*const c_uint, usize) -> Status,
) -> Status {
    // SAFETY: by the caller's contract.
    let elements = unsafe { elements_of(c, refs, n) };
    let checked = elements.and_then(|e| match e.len() == n_values {
        true => Ok(e),
        false => Err(Error::Error(format!(
            "{n_values} values were passed for {n} variables of {} values",
            e.len()
        ))),
    });
    match checked {
        Ok(elements) => access(elements.as_ptr(), elements.len()),
        // SAFETY: by the caller's contract.
        Err(e) => unsafe { with(c, |_| Err(e)) },
    }
}

/// `fmi3GetFloat64`.
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetFloat64(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *mut f64,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { scalar(c, refs, n, nv, |refs, n| get(c, refs, n, values, &[Kind::Real], |v| v)) }
}

/// `fmi3SetFloat64`.
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFloat64(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *const f64,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { scalar(c, refs, n, nv, |refs, n| set(c, refs, n, values, &[Kind::Real], |v| v)) }
}

/// `fmi3GetInt32`.
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetInt32(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *mut i32,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        scalar(c, refs, n, nv, |refs, n| {
            get(c, refs, n, values, &[Kind::Integer], |v| v as i32)
        })
    }
}

/// `fmi3SetInt32`.
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetInt32(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *const i32,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        scalar(c, refs, n, nv, |refs, n| {
            set(c, refs, n, values, &[Kind::Integer], f64::from)
        })
    }
}

/// `fmi3GetInt64`: FMI 3 reads enumerations as Int64 (EQM has no other Int64 variables).
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetInt64(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *mut i64,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        scalar(c, refs, n, nv, |refs, n| {
            get(c, refs, n, values, &[Kind::Enumeration], |v| v as i64)
        })
    }
}

/// `fmi3SetInt64`: FMI 3 writes enumerations as Int64 (EQM has no other Int64 variables).
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetInt64(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *const i64,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        scalar(c, refs, n, nv, |refs, n| {
            set(c, refs, n, values, &[Kind::Enumeration], |v| v as f64)
        })
    }
}

/// `fmi3GetBoolean`.
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetBoolean(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *mut bool,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        scalar(c, refs, n, nv, |refs, n| {
            get(c, refs, n, values, &[Kind::Boolean], |v| v != 0.0)
        })
    }
}

/// `fmi3SetBoolean`.
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetBoolean(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *const bool,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        scalar(c, refs, n, nv, |refs, n| {
            set(c, refs, n, values, &[Kind::Boolean], |v| if v { 1.0 } else { 0.0 })
        })
    }
}

/// Answers an access to variables of a type EQM has none of: fine when empty, an error naming
/// the first reference otherwise.
///
/// # Safety
/// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn no_such_type(c: *mut c_void, refs: *const c_uint, n: usize, ty: &str) -> Status {
    // SAFETY: by the caller's contract.
    let refs = unsafe { slice(refs, n) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |_| match refs.and_then(|r| r.first()) {
            None => Ok(()),
            Some(r) => Err(Error::Error(format!(
                "the model has no {ty} variable with value reference {r}"
            ))),
        })
    }
}

/// The getters and setters of the types EQM has no variables of.
macro_rules! no_variables_of_type {
    ($($get:ident, $set:ident, $ty:ty, $name:literal;)*) => {$(
        #[doc = concat!("`", stringify!($get), "`: the model has no ", $name, " variables.")]
        ///
        /// # Safety
        /// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
        // SAFETY: exported under its FMI name, once; its callers follow the contract above.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $get(c: *mut c_void, refs: *const c_uint, n: usize, _values: *mut $ty, _nv: usize) -> Status {
            // SAFETY: by the caller's contract.
            unsafe { no_such_type(c, refs, n, $name) }
        }

        #[doc = concat!("`", stringify!($set), "`: the model has no ", $name, " variables.")]
        ///
        /// # Safety
        /// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
        // SAFETY: exported under its FMI name, once; its callers follow the contract above.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $set(c: *mut c_void, refs: *const c_uint, n: usize, _values: *const $ty, _nv: usize) -> Status {
            // SAFETY: by the caller's contract.
            unsafe { no_such_type(c, refs, n, $name) }
        }
    )*};
}

no_variables_of_type! {
    fmi3GetFloat32, fmi3SetFloat32, f32, "Float32";
    fmi3GetInt8, fmi3SetInt8, i8, "Int8";
    fmi3GetUInt8, fmi3SetUInt8, u8, "UInt8";
    fmi3GetInt16, fmi3SetInt16, i16, "Int16";
    fmi3GetUInt16, fmi3SetUInt16, u16, "UInt16";
    fmi3GetUInt32, fmi3SetUInt32, u32, "UInt32";
    fmi3GetUInt64, fmi3SetUInt64, u64, "UInt64";
}

/// `fmi3GetString`: the texts of String parameters and constants, valid until the next call.
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetString(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *mut *const c_char,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { scalar(c, refs, n, nv, |refs, n| get_texts(c, refs, n, values)) }
}

/// `fmi3SetString`: refused with the reason (a String parameter is fixed).
///
/// # Safety
/// `c` is null or a live instance of ours; the arrays are null or as long as their counts.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetString(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *const *const c_char,
    nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { scalar(c, refs, n, nv, |refs, n| crate::abi::fmi2SetString(c, refs, n, values)) }
}

/// `fmi3GetBinary`: the model has no Binary variables.
///
/// # Safety
/// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetBinary(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    _sizes: *mut usize,
    _values: *mut *const u8,
    _nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { no_such_type(c, refs, n, "Binary") }
}

/// `fmi3SetBinary`: the model has no Binary variables.
///
/// # Safety
/// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetBinary(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    _sizes: *const usize,
    _values: *const *const u8,
    _nv: usize,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { no_such_type(c, refs, n, "Binary") }
}

/// `fmi3GetClock`: the model has no clocks.
///
/// # Safety
/// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetClock(c: *mut c_void, refs: *const c_uint, n: usize, _values: *mut bool) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { no_such_type(c, refs, n, "Clock") }
}

/// `fmi3SetClock`: the model has no clocks.
///
/// # Safety
/// `c` is null or a live instance of ours; `refs` is null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetClock(c: *mut c_void, refs: *const c_uint, n: usize, _values: *const bool) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { no_such_type(c, refs, n, "Clock") }
}

/// `fmi3DoStep`: the step to its end, with every event inside, or (with event mode) to just
/// before the event it leaves to Event Mode, with `eventHandlingNeeded` set, `earlyReturn` when
/// that is before the step's end, and the time reached; `terminate` in the model ends it early
/// with `terminateSimulation` set and the time it reached.
///
/// # Safety
/// `c` is null or a live instance of ours; the four outputs are null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3DoStep(
    c: *mut c_void,
    current: f64,
    h: f64,
    _no_set_prior: bool,
    event_handling_needed: *mut bool,
    terminate_simulation: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
) -> Status {
    // SAFETY: null or writable, by the caller's contract.
    let outputs = unsafe {
        (
            event_handling_needed.as_mut(),
            terminate_simulation.as_mut(),
            early_return.as_mut(),
            last_successful_time.as_mut(),
        )
    };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let (Some(event), Some(terminate), Some(early), Some(last)) = outputs else {
                return Err(Error::Error(
                    "the step's results were asked for into null pointers".into(),
                ));
            };
            let stepped = i.do_step(current, h);
            let target = current + h;
            *event = i.event_due();
            *terminate = i.terminated();
            *last = i.time();
            // An event or `terminate` before the step's end is an early return, which only an
            // importer that allows it is told of.
            *early = i.early_return_allowed() && *last < target - 1e-12 * (1.0 + target.abs());
            match stepped {
                // `terminate` ends the simulation: the step succeeded up to where it was called.
                Err(Error::Discard(_)) if i.terminated() => Ok(()),
                other => other,
            }
        })
    }
}

/// `fmi3UpdateDiscreteStates`: EQM's event iteration runs to its end in one call (in
/// Co-Simulation, that of the event the step stopped before).
///
/// # Safety
/// `c` is null or a live instance of ours; the outputs are null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    c: *mut c_void,
    discrete_states_need_update: *mut bool,
    terminate_simulation: *mut bool,
    nominals_changed: *mut bool,
    values_changed: *mut bool,
    next_event_time_defined: *mut bool,
    next_event_time: *mut f64,
) -> Status {
    // SAFETY: null or writable, by the caller's contract.
    let outputs = unsafe {
        (
            discrete_states_need_update.as_mut(),
            terminate_simulation.as_mut(),
            nominals_changed.as_mut(),
            values_changed.as_mut(),
            next_event_time_defined.as_mut(),
            next_event_time.as_mut(),
        )
    };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let (Some(update), Some(terminate), Some(nominals), Some(values), Some(defined), Some(next)) = outputs
            else {
                return Err(Error::Error(
                    "the event's results were asked for into null pointers".into(),
                ));
            };
            if i.interface == Interface::CoSimulation {
                let outcome = i.update_discrete_states_cs()?;
                *update = false;
                *terminate = outcome.terminated;
                *nominals = false;
                *values = false;
                *defined = outcome.next_time_event.is_some();
                *next = outcome.next_time_event.unwrap_or(0.0);
                return Ok(());
            }
            let outcome = i.new_discrete_states()?;
            *update = false;
            *terminate = outcome.terminated.is_some();
            *nominals = false;
            *values = outcome.states_changed;
            *defined = outcome.next_time_event.is_some();
            *next = outcome.next_time_event.unwrap_or(0.0);
            Ok(())
        })
    }
}

/// `fmi3EnterContinuousTimeMode`.
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { fmi2EnterContinuousTimeMode(c) }
}

/// `fmi3CompletedIntegratorStep`.
///
/// # Safety
/// `c` is null or a live instance of ours; the flags are null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3CompletedIntegratorStep(
    c: *mut c_void,
    no_set_prior: bool,
    enter_event_mode: *mut bool,
    terminate_simulation: *mut bool,
) -> Status {
    let (mut enter, mut terminate): (c_int, c_int) = (0, 0);
    // SAFETY: by the caller's contract; the flags go through locals of FMI 2's type.
    let status = unsafe { fmi2CompletedIntegratorStep(c, c_int::from(no_set_prior), &mut enter, &mut terminate) };
    // SAFETY: null or writable, by the caller's contract.
    if let (Some(e), Some(t)) = unsafe { (enter_event_mode.as_mut(), terminate_simulation.as_mut()) } {
        *e = enter != 0;
        *t = terminate != 0;
    }
    status
}

/// `fmi3SetTime`.
///
/// # Safety
/// `c` is null or a live instance of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetTime(c: *mut c_void, t: f64) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { fmi2SetTime(c, t) }
}

/// `fmi3SetContinuousStates`.
///
/// # Safety
/// `c` is null or a live instance of ours; `x` is null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetContinuousStates(c: *mut c_void, x: *const f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { fmi2SetContinuousStates(c, x, n) }
}

/// `fmi3GetContinuousStates`.
///
/// # Safety
/// `c` is null or a live instance of ours; `x` is null or `n` writable elements.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetContinuousStates(c: *mut c_void, x: *mut f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { fmi2GetContinuousStates(c, x, n) }
}

/// `fmi3GetContinuousStateDerivatives`.
///
/// # Safety
/// `c` is null or a live instance of ours; `dx` is null or `n` writable elements.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(c: *mut c_void, dx: *mut f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { fmi2GetDerivatives(c, dx, n) }
}

/// `fmi3GetEventIndicators`.
///
/// # Safety
/// `c` is null or a live instance of ours; `z` is null or `n` writable elements.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetEventIndicators(c: *mut c_void, z: *mut f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { fmi2GetEventIndicators(c, z, n) }
}

/// `fmi3GetNominalsOfContinuousStates`.
///
/// # Safety
/// `c` is null or a live instance of ours; `nominals` is null or `n` writable elements.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNominalsOfContinuousStates(c: *mut c_void, nominals: *mut f64, n: usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { fmi2GetNominalsOfContinuousStates(c, nominals, n) }
}

/// `fmi3GetDirectionalDerivative`: the derivatives of the unknowns along the seed over the
/// knowns.
///
/// # Safety
/// `c` is null or a live instance of ours; each array is null or as long as its count.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetDirectionalDerivative(
    c: *mut c_void,
    unknowns: *const c_uint,
    n_unknowns: usize,
    knowns: *const c_uint,
    n_knowns: usize,
    seed: *const f64,
    n_seed: usize,
    sensitivity: *mut f64,
    n_sensitivity: usize,
) -> Status {
    // An array stands for its elements, one seed or sensitivity each.
    // SAFETY: by the caller's contract.
    let elements = unsafe { (elements_of(c, unknowns, n_unknowns), elements_of(c, knowns, n_knowns)) };
    let (unknowns, knowns) = match elements {
        (Ok(u), Ok(k)) => (u, k),
        // SAFETY: by the caller's contract.
        (Err(e), _) | (_, Err(e)) => return unsafe { with(c, |_| Err(e)) },
    };
    // SAFETY: by the caller's contract; the value references are the local vectors.
    unsafe {
        directional(
            c,
            (unknowns.as_ptr(), unknowns.len()),
            (knowns.as_ptr(), knowns.len()),
            (seed, n_seed),
            (sensitivity, n_sensitivity),
        )
    }
}

/// `fmi3GetAdjointDerivative`: the seed (one value per unknown) times the Jacobian of the
/// unknowns over the knowns (one value per known).
///
/// # Safety
/// `c` is null or a live instance of ours; each array is null or as long as its count.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetAdjointDerivative(
    c: *mut c_void,
    unknowns: *const c_uint,
    n_unknowns: usize,
    knowns: *const c_uint,
    n_knowns: usize,
    seed: *const f64,
    n_seed: usize,
    sensitivity: *mut f64,
    n_sensitivity: usize,
) -> Status {
    // An array stands for its elements, one seed or sensitivity each.
    // SAFETY: by the caller's contract.
    let elements = unsafe { (elements_of(c, unknowns, n_unknowns), elements_of(c, knowns, n_knowns)) };
    // SAFETY: each pointer is null or as long as its count, by the caller's contract.
    let arrays = unsafe { (slice(seed, n_seed), slice_mut(sensitivity, n_sensitivity)) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let (unknowns, knowns) = (elements.0?, elements.1?);
            let (Some(seed), Some(out)) = arrays else {
                return Err(Error::Error("a null array was passed with a positive length".into()));
            };
            i.adjoint_derivative(&unknowns, &knowns, seed, out)
        })
    }
}

/// Writes the number `pick` takes from the model's dimensions into `out`.
///
/// # Safety
/// `c` is null or a live instance of ours; `out` is null or writable.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn dimension(c: *mut c_void, out: *mut usize, pick: fn((usize, usize)) -> usize) -> Status {
    // SAFETY: null or writable, by the caller's contract.
    let out = unsafe { out.as_mut() };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let out = out.ok_or_else(|| Error::Error("the number was asked for into a null pointer".into()))?;
            *out = pick(i.dimensions()?);
            Ok(())
        })
    }
}

/// `fmi3GetNumberOfEventIndicators`.
///
/// # Safety
/// `c` is null or a live instance of ours; `n` is null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(c: *mut c_void, n: *mut usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { dimension(c, n, |(_, indicators)| indicators) }
}

/// `fmi3GetNumberOfContinuousStates`.
///
/// # Safety
/// `c` is null or a live instance of ours; `n` is null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(c: *mut c_void, n: *mut usize) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { dimension(c, n, |(states, _)| states) }
}

/// The functions of what this FMU does not provide: `fmi3Error` with the reason logged.
macro_rules! not_provided {
    ($($name:ident($($arg:ident: $ty:ty),*) => $what:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: ", $what, " is not provided.")]
        ///
        /// # Safety
        /// `c` is null or a live instance of ours.
        // SAFETY: exported under its FMI name, once; its callers follow the contract above.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(c: *mut c_void, $(_: $ty),*) -> Status {
            // SAFETY: by the caller's contract.
            unsafe { not_provided(c, $what) }
        }
    )*};
}

not_provided! {
    fmi3GetNumberOfVariableDependencies(r: c_uint, n: *mut usize) => "the dependencies of a variable at run time";
    fmi3GetVariableDependencies(r: c_uint, a: *mut usize, b: *mut c_uint, d: *mut usize, k: *mut c_int, n: usize) => "the dependencies of a variable at run time";
    fmi3EnterConfigurationMode() => "configuration mode";
    fmi3ExitConfigurationMode() => "configuration mode";
    fmi3GetIntervalDecimal(r: *const c_uint, n: usize, i: *mut f64, q: *mut c_int) => "clocks";
    fmi3GetIntervalFraction(r: *const c_uint, n: usize, c: *mut u64, rs: *mut u64, q: *mut c_int) => "clocks";
    fmi3GetShiftDecimal(r: *const c_uint, n: usize, s: *mut f64) => "clocks";
    fmi3GetShiftFraction(r: *const c_uint, n: usize, c: *mut u64, rs: *mut u64) => "clocks";
    fmi3SetIntervalDecimal(r: *const c_uint, n: usize, i: *const f64) => "clocks";
    fmi3SetIntervalFraction(r: *const c_uint, n: usize, c: *const u64, rs: *const u64) => "clocks";
    fmi3SetShiftDecimal(r: *const c_uint, n: usize, s: *const f64) => "clocks";
    fmi3SetShiftFraction(r: *const c_uint, n: usize, c: *const u64, rs: *const u64) => "clocks";
    fmi3EvaluateDiscreteStates() => "evaluating discrete states";
    fmi3ActivateModelPartition(r: c_uint, t: f64) => "scheduled execution";
}
