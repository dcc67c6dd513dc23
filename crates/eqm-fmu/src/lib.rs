//! The runtime of the FMUs EQM exports: the shared object under `binaries/<platform>/` of every
//! FMU, implementing FMI 2.0 and 3.0, Co-Simulation and Model Exchange.
//!
//! Input: the calls of an FMI importer through the C ABI (`fmi2Instantiate`, `fmi2DoStep`,
//! `fmi2GetReal`, ...). At instantiation the model's sources are read from the FMU's
//! `resources/` folder and compiled by EQM's library (`load`), so the FMU needs no C compiler
//! and no EQM installation: this library holds the whole compiler, the JIT and the solvers.
//! Output: the values and status codes FMI defines, and every error through the importer's
//! logger with EQM's diagnostic text. The instance itself is safe Rust (`instance`); this
//! module only converts between C and Rust: it checks every pointer, and no panic crosses the
//! C ABI (each call runs under `catch_unwind`, and a panic is an `fmi2Fatal` with its message
//! logged). FMI 3.0 (`abi3`) shares the instance; its clocks, scheduled execution,
//! intermediate updates and the types EQM has no variables of are answered with an error.

mod exchange;
pub mod instance;
pub mod load;
pub mod variables;

use instance::{Error, Instance};
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// `fmi2Status`.
pub type Status = c_int;
pub const OK: Status = 0;
pub const WARNING: Status = 1;
pub const DISCARD: Status = 2;
pub const ERROR: Status = 3;
pub const FATAL: Status = 4;

/// `fmi2Type`.
const MODEL_EXCHANGE: c_int = 0;
const CO_SIMULATION: c_int = 1;

/// `fmi2StatusKind` values of the status queries.
const DO_STEP_STATUS: c_int = 0;
const LAST_SUCCESSFUL_TIME: c_int = 2;
const TERMINATED: c_int = 3;

/// FMI 2's logger: `(environment, instance name, status, category, format, ...)`.
pub type Logger = unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...);

/// FMI 3's logger: `(environment, status, category, message)`.
pub type LogMessage = unsafe extern "C" fn(*mut c_void, Status, *const c_char, *const c_char);

/// The importer's logger, of either version.
#[derive(Clone, Copy)]
pub enum Log {
    Fmi2(Option<Logger>),
    Fmi3(Option<LogMessage>),
}

/// `fmi2CallbackFunctions`.
#[repr(C)]
pub struct Callbacks {
    pub logger: Option<Logger>,
    pub allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    pub free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    pub step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    pub component_environment: *mut c_void,
}

/// What an `fmi2Component` points to.
pub struct Component {
    name: CString,
    logger: Log,
    environment: *mut c_void,
    logging_on: bool,
    /// `None` after a panic left the instance in an unknown state.
    instance: Option<Instance>,
    /// The texts the last `GetString` returned: FMI lets the importer read them until the
    /// next call, so they live here.
    texts: Vec<CString>,
}

impl Component {
    /// Sends `message` to the importer's logger (errors always, the rest when logging is on).
    fn log(&self, status: Status, category: &str, message: &str) {
        if status < ERROR && !self.logging_on {
            return;
        }
        let category = CString::new(category).unwrap_or_default();
        let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
        match self.logger {
            // SAFETY: the logger is the importer's function with FMI 2's signature; every string
            // is a valid NUL-terminated C string that lives through the call, and the message
            // goes as the argument of a "%s" format so that no `%` in it is read as a conversion.
            Log::Fmi2(Some(logger)) => unsafe {
                logger(
                    self.environment,
                    self.name.as_ptr(),
                    status,
                    category.as_ptr(),
                    c"%s".as_ptr(),
                    message.as_ptr(),
                )
            },
            // SAFETY: the logger is the importer's function with FMI 3's signature; both strings
            // are valid NUL-terminated C strings that live through the call.
            Log::Fmi3(Some(log)) => unsafe { log(self.environment, status, category.as_ptr(), message.as_ptr()) },
            Log::Fmi2(None) | Log::Fmi3(None) => {}
        }
    }

    /// Runs `call` on the instance: its error is logged and turned into its status, and a
    /// panic into `fmi2Fatal` (the instance is then unusable).
    fn run(&mut self, call: impl FnOnce(&mut Instance) -> Result<(), Error>) -> Status {
        let Some(instance) = self.instance.as_mut() else {
            self.log(
                FATAL,
                "logStatusFatal",
                "an earlier internal error left this instance unusable",
            );
            return FATAL;
        };
        match catch_unwind(AssertUnwindSafe(|| call(instance))) {
            Ok(Ok(())) => OK,
            Ok(Err(Error::Discard(message))) => {
                self.log(DISCARD, "logStatusDiscard", &message);
                DISCARD
            }
            Ok(Err(Error::Error(message))) => {
                self.log(ERROR, "logStatusError", &message);
                ERROR
            }
            Err(panic) => {
                self.instance = None;
                let text = panic_text(panic.as_ref());
                self.log(
                    FATAL,
                    "logStatusFatal",
                    &format!("internal error in EQM's FMU runtime: {text}"),
                );
                FATAL
            }
        }
    }
}

/// The message of a panic's payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The string at `p`, `None` for a null pointer or text that is not UTF-8.
///
/// # Safety
/// `p` is null or points to a NUL-terminated string that stays valid during the call.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn text<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: not null, and NUL-terminated by the caller's contract.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// The component `c` points to.
///
/// # Safety
/// `c` is null or a pointer `fmi2Instantiate` returned and `fmi2FreeInstance` has not freed.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn component<'a>(c: *mut c_void) -> Option<&'a mut Component> {
    // SAFETY: by the caller's contract `c` is null or a live `Box<Component>` of ours, used
    // by one thread at a time as FMI requires.
    unsafe { (c as *mut Component).as_mut() }
}

/// The slice of `n` elements at `p` (empty for `n = 0`, `None` for a null pointer otherwise).
///
/// # Safety
/// `p` is null or points to `n` valid elements that stay valid during the call.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        return Some(&[]);
    }
    // SAFETY: not null, and `n` elements long by the caller's contract.
    (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, n) })
}

/// Like [`slice`], mutable.
///
/// # Safety
/// `p` is null or points to `n` valid, writable elements not aliased during the call.
// SAFETY: an unsafe function; its callers follow the contract above.
unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> Option<&'a mut [T]> {
    if n == 0 {
        return Some(&mut []);
    }
    // SAFETY: not null, `n` writable elements and no alias, by the caller's contract.
    (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts_mut(p, n) })
}

mod abi;
mod abi3;
mod abi_exchange;
mod abi_outputs;
mod abi_state;
pub use abi::*;
pub use abi_exchange::*;
pub use abi_state::*;
pub use abi3::*;
