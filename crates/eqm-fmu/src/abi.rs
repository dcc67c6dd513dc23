//! The exported functions of FMI 2.0 common to both interfaces and those of Co-Simulation
//! (`fmi2Functions.h`; Model Exchange's are in `abi_exchange`), each a thin conversion
//! between C and [`Instance`]: pointers checked, lengths turned into slices, the result into a
//! status. The functions of capabilities the model description declares false (input
//! derivatives, asynchronous steps) exist, because importers look every function up, and
//! answer `fmi2Error` with the reason logged. The FMU state's functions are `abi_state`'s.

use crate::instance::{Error, Instance, Interface};
use crate::load::model_compiler;
use crate::variables::Kind;
use crate::{
    CO_SIMULATION, Callbacks, Component, DISCARD, DO_STEP_STATUS, ERROR, LAST_SUCCESSFUL_TIME, Log, MODEL_EXCHANGE, OK,
    Status, TERMINATED, component, panic_text, slice, slice_mut, text,
};
use eqm::fmi::FmiVersion;
use std::ffi::{CString, c_char, c_int, c_uint, c_void};
use std::panic::catch_unwind;

/// `fmi2GetTypesPlatform`.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

/// `fmi2GetVersion`.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

/// `fmi2Instantiate`: compiles the model from the FMU's resources; null (with the reason
/// logged) when it cannot.
///
/// # Safety
/// The strings are null or NUL-terminated; `functions` is null or points to the importer's
/// callbacks, which outlive the instance.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: *const c_char,
    fmu_type: c_int,
    guid: *const c_char,
    resource_location: *const c_char,
    functions: *const Callbacks,
    _visible: c_int,
    logging_on: c_int,
) -> *mut c_void {
    // SAFETY: null or the importer's callbacks, valid through the instance's life.
    let callbacks = unsafe { functions.as_ref() };
    // SAFETY: each string is null or NUL-terminated, by the caller's contract.
    let (name, guid, location) = unsafe { (text(instance_name), text(guid), text(resource_location)) };
    let mut component = Component {
        name: CString::new(name.unwrap_or("")).unwrap_or_default(),
        logger: Log::Fmi2(callbacks.and_then(|c| c.logger)),
        environment: callbacks.map_or(std::ptr::null_mut(), |c| c.component_environment),
        logging_on: logging_on != 0,
        instance: None,
        texts: Vec::new(),
    };
    let created = catch_unwind(|| -> Result<Instance, String> {
        let interface = match fmu_type {
            MODEL_EXCHANGE => Interface::ModelExchange,
            CO_SIMULATION => Interface::CoSimulation,
            other => return Err(format!("{other} is no fmi2Type (0: Model Exchange, 1: Co-Simulation)")),
        };
        let location = location.ok_or("no resource location was given: the FMU's resources hold the model")?;
        let compile = model_compiler(location, guid.unwrap_or(""), FmiVersion::Fmi2)?;
        Instance::new(compile, interface).map(|i| i.for_token(guid.unwrap_or("")))
    });
    match created {
        Ok(Ok(instance)) => {
            component.instance = Some(instance);
            Box::into_raw(Box::new(component)) as *mut c_void
        }
        Ok(Err(message)) => {
            component.log(ERROR, "logStatusError", &message);
            std::ptr::null_mut()
        }
        Err(panic) => {
            let message = format!("internal error in EQM's FMU runtime: {}", panic_text(panic.as_ref()));
            component.log(ERROR, "logStatusError", &message);
            std::ptr::null_mut()
        }
    }
}

/// `fmi2FreeInstance`.
///
/// # Safety
/// `c` is null or a component of ours not freed before.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeInstance(c: *mut c_void) {
    if !c.is_null() {
        // SAFETY: a `Box<Component>` of ours (`fmi2Instantiate`), freed once.
        let component = unsafe { Box::from_raw(c as *mut Component) };
        // Dropping frees the compiled model and its native code; a panic there stays here.
        let _ = catch_unwind(std::panic::AssertUnwindSafe(move || drop(component)));
    }
}

/// Runs `call` on the component `c`: `fmi2Error` for a null component.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn with(c: *mut c_void, call: impl FnOnce(&mut Instance) -> Result<(), Error>) -> Status {
    // SAFETY: by the caller's contract.
    match unsafe { component(c) } {
        Some(component) => component.run(call),
        None => ERROR,
    }
}

/// `fmi2SetDebugLogging`: whether messages other than errors reach the logger.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: *mut c_void,
    logging_on: c_int,
    _n: usize,
    _categories: *const *const c_char,
) -> Status {
    // SAFETY: by the caller's contract.
    match unsafe { component(c) } {
        Some(component) => {
            component.logging_on = logging_on != 0;
            OK
        }
        None => ERROR,
    }
}

/// `fmi2SetupExperiment`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: *mut c_void,
    tolerance_defined: c_int,
    tolerance: f64,
    start: f64,
    stop_defined: c_int,
    stop: f64,
) -> Status {
    let tolerance = (tolerance_defined != 0).then_some(tolerance);
    let stop = (stop_defined != 0).then_some(stop);
    // SAFETY: by the caller's contract.
    unsafe { with(c, |i| i.setup_experiment(tolerance, start, stop)) }
}

/// `fmi2EnterInitializationMode`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, Instance::enter_initialization) }
}

/// `fmi2ExitInitializationMode`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, Instance::exit_initialization) }
}

/// `fmi2Terminate`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Terminate(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, Instance::terminate) }
}

/// `fmi2Reset`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Reset(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, Instance::reset) }
}

/// `fmi2DoStep`.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DoStep(c: *mut c_void, current: f64, h: f64, _no_set_prior: c_int) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { with(c, |i| i.do_step(current, h)) }
}

/// Gets the values of `n` variables of `kind` at `refs` into `out`, converted by `write`.
///
/// # Safety
/// `c` is null or a live component of ours; `refs` and `out` are null or `n` elements long.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn get<T>(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    out: *mut T,
    kinds: &[Kind],
    write: impl Fn(f64) -> T,
) -> Status {
    // SAFETY: by the caller's contract.
    let (refs, out) = unsafe { (slice(refs, n), slice_mut(out, n)) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let (Some(refs), Some(out)) = (refs, out) else {
                return Err(Error::Error("a null array was passed with a positive length".into()));
            };
            i.check_kinds(refs, kinds)?;
            let mut values = vec![0.0; n];
            i.get(refs, &mut values)?;
            for (o, v) in out.iter_mut().zip(values) {
                *o = write(v);
            }
            Ok(())
        })
    }
}

/// Sets `n` variables of `kind` at `refs` to `values`, converted by `read`.
///
/// # Safety
/// `c` is null or a live component of ours; `refs` and `values` are null or `n` elements long.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn set<T: Copy>(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *const T,
    kinds: &[Kind],
    read: impl Fn(T) -> f64,
) -> Status {
    // SAFETY: by the caller's contract.
    let (refs, values) = unsafe { (slice(refs, n), slice(values, n)) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let (Some(refs), Some(values)) = (refs, values) else {
                return Err(Error::Error("a null array was passed with a positive length".into()));
            };
            i.check_kinds(refs, kinds)?;
            let values: Vec<f64> = values.iter().map(|v| read(*v)).collect();
            i.set(refs, &values)
        })
    }
}

/// `fmi2GetReal`.
///
/// # Safety
/// `c` is null or a live component of ours; the arrays are null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetReal(c: *mut c_void, refs: *const c_uint, n: usize, values: *mut f64) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { get(c, refs, n, values, &[Kind::Real], |v| v) }
}

/// `fmi2GetInteger`.
///
/// # Safety
/// `c` is null or a live component of ours; the arrays are null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetInteger(c: *mut c_void, refs: *const c_uint, n: usize, values: *mut c_int) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { get(c, refs, n, values, &[Kind::Integer, Kind::Enumeration], |v| v as c_int) }
}

/// `fmi2GetBoolean`.
///
/// # Safety
/// `c` is null or a live component of ours; the arrays are null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBoolean(c: *mut c_void, refs: *const c_uint, n: usize, values: *mut c_int) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { get(c, refs, n, values, &[Kind::Boolean], |v| c_int::from(v != 0.0)) }
}

/// `fmi2SetReal`.
///
/// # Safety
/// `c` is null or a live component of ours; the arrays are null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetReal(c: *mut c_void, refs: *const c_uint, n: usize, values: *const f64) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { set(c, refs, n, values, &[Kind::Real], |v| v) }
}

/// `fmi2SetInteger`.
///
/// # Safety
/// `c` is null or a live component of ours; the arrays are null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetInteger(c: *mut c_void, refs: *const c_uint, n: usize, values: *const c_int) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { set(c, refs, n, values, &[Kind::Integer, Kind::Enumeration], f64::from) }
}

/// `fmi2SetBoolean`.
///
/// # Safety
/// `c` is null or a live component of ours; the arrays are null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetBoolean(c: *mut c_void, refs: *const c_uint, n: usize, values: *const c_int) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { set(c, refs, n, values, &[Kind::Boolean], |v| if v != 0 { 1.0 } else { 0.0 }) }
}

/// `fmi2GetString`: the texts of String parameters and constants, valid until the next call.
///
/// # Safety
/// `c` is null or a live component of ours; `refs` and `values` are null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetString(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    values: *mut *const c_char,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { get_texts(c, refs, n, values) }
}

/// `fmi2SetString`: refused with the reason (a String parameter is fixed).
///
/// # Safety
/// `c` is null or a live component of ours; `refs` is null or `n` elements long.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetString(
    c: *mut c_void,
    refs: *const c_uint,
    n: usize,
    _values: *const *const c_char,
) -> Status {
    // SAFETY: by the caller's contract.
    let refs = unsafe { slice(refs, n) };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| match refs {
            Some(refs) => i.set_texts(refs),
            None => Err(Error::Error("a null array was passed with a positive length".into())),
        })
    }
}

/// Writes pointers to the texts of the `n` String variables at `refs` into `values`; the texts
/// stay in the component until its next `GetString`.
///
/// # Safety
/// `c` is null or a live component of ours; `refs` and `values` are null or `n` elements long.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn get_texts(c: *mut c_void, refs: *const c_uint, n: usize, values: *mut *const c_char) -> Status {
    // SAFETY: by the caller's contract.
    let (refs, out) = unsafe { (slice(refs, n), slice_mut(values, n)) };
    // SAFETY: by the caller's contract.
    let Some(component) = (unsafe { component(c) }) else {
        return ERROR;
    };
    let mut texts = Vec::new();
    let status = component.run(|i| {
        let (Some(refs), Some(_)) = (refs, out.as_ref()) else {
            return Err(Error::Error("a null array was passed with a positive length".into()));
        };
        texts = i.texts(refs)?;
        Ok(())
    });
    if status != OK {
        return status;
    }
    // A NUL cannot be in a C string: the text is cut there as C would read it.
    component.texts = texts
        .into_iter()
        .map(|t| CString::new(t.split('\0').next().unwrap_or_default()).unwrap_or_default())
        .collect();
    for (o, t) in out.into_iter().flatten().zip(&component.texts) {
        *o = t.as_ptr();
    }
    OK
}

/// A function of a capability the model description declares false: `fmi2Error`, logged.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn not_provided(c: *mut c_void, what: &str) -> Status {
    let message = format!("{what} is not provided by this FMU (its model description says so)");
    // SAFETY: by the caller's contract.
    unsafe { with(c, |_| Err(Error::Error(message))) }
}

/// `fmi2GetDirectionalDerivative`: the derivatives of the unknowns along the seed over the
/// knowns, from the symbolic Jacobian where it applies and central differences elsewhere.
///
/// # Safety
/// `c` is null or a live component of ours; each array is null or as long as its count.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    c: *mut c_void,
    unknowns: *const c_uint,
    n_unknowns: usize,
    knowns: *const c_uint,
    n_knowns: usize,
    seed: *const f64,
    sensitivity: *mut f64,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        directional(
            c,
            (unknowns, n_unknowns),
            (knowns, n_knowns),
            (seed, n_knowns),
            (sensitivity, n_unknowns),
        )
    }
}

/// The directional derivative of either version, with the arrays and their lengths.
///
/// # Safety
/// `c` is null or a live component of ours; each array is null or as long as its count.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn directional(
    c: *mut c_void,
    unknowns: (*const c_uint, usize),
    knowns: (*const c_uint, usize),
    seed: (*const f64, usize),
    sensitivity: (*mut f64, usize),
) -> Status {
    // SAFETY: each pointer is null or as long as its count, by the caller's contract.
    let arrays = unsafe {
        (
            slice(unknowns.0, unknowns.1),
            slice(knowns.0, knowns.1),
            slice(seed.0, seed.1),
            slice_mut(sensitivity.0, sensitivity.1),
        )
    };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            let (Some(unknowns), Some(knowns), Some(seed), Some(out)) = arrays else {
                return Err(Error::Error("a null array was passed with a positive length".into()));
            };
            i.directional_derivative(unknowns, knowns, seed, out)
        })
    }
}

/// `fmi2SetRealInputDerivatives`: not provided (`canInterpolateInputs="false"`).
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    c: *mut c_void,
    _refs: *const c_uint,
    _n: usize,
    _order: *const c_int,
    _values: *const f64,
) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { not_provided(c, "interpolating inputs") }
}

/// `fmi2CancelStep`: steps are never asynchronous, so there is none to cancel.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2CancelStep(c: *mut c_void) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { not_provided(c, "cancelling a step (steps are never asynchronous)") }
}

/// `fmi2GetStatus`: the status of the last `doStep`, which always completes before returning.
///
/// # Safety
/// `c` is null or a live component of ours; `value` is null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStatus(c: *mut c_void, kind: c_int, value: *mut c_int) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        status_query(c, kind, DO_STEP_STATUS, value, |i| {
            if i.terminated() { DISCARD } else { OK }
        })
    }
}

/// `fmi2GetRealStatus`: `fmi2LastSuccessfulTime`.
///
/// # Safety
/// `c` is null or a live component of ours; `value` is null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetRealStatus(c: *mut c_void, kind: c_int, value: *mut f64) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { status_query(c, kind, LAST_SUCCESSFUL_TIME, value, Instance::time) }
}

/// `fmi2GetIntegerStatus`: no Integer status exists.
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetIntegerStatus(c: *mut c_void, kind: c_int, _value: *mut c_int) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |_| {
            Err(Error::Error(format!("there is no Integer status of kind {kind}")))
        })
    }
}

/// `fmi2GetBooleanStatus`: `fmi2Terminated`.
///
/// # Safety
/// `c` is null or a live component of ours; `value` is null or writable.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetBooleanStatus(c: *mut c_void, kind: c_int, value: *mut c_int) -> Status {
    // SAFETY: by the caller's contract.
    unsafe { status_query(c, kind, TERMINATED, value, |i| c_int::from(i.terminated())) }
}

/// `fmi2GetStringStatus`: no String status is provided (`fmi2PendingStatus` needs asynchronous
/// steps).
///
/// # Safety
/// `c` is null or a live component of ours.
// SAFETY: exported under its FMI name, once; its callers follow the contract above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetStringStatus(c: *mut c_void, kind: c_int, _value: *mut *const c_char) -> Status {
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |_| {
            Err(Error::Error(format!("there is no String status of kind {kind}")))
        })
    }
}

/// Answers the status query `kind` when it is `expected`, writing `answer` into `value`.
///
/// # Safety
/// `c` is null or a live component of ours; `value` is null or writable.
// SAFETY: an unsafe function; its callers follow the contract above.
pub(crate) unsafe fn status_query<T>(
    c: *mut c_void,
    kind: c_int,
    expected: c_int,
    value: *mut T,
    answer: impl FnOnce(&Instance) -> T,
) -> Status {
    // SAFETY: null or writable, by the caller's contract.
    let value = unsafe { value.as_mut() };
    // SAFETY: by the caller's contract.
    unsafe {
        with(c, |i| {
            if kind != expected {
                return Err(Error::Error(format!("this query does not answer status kind {kind}")));
            }
            let value = value.ok_or_else(|| Error::Error("the status was asked for into a null pointer".into()))?;
            *value = answer(i);
            Ok(())
        })
    }
}
