//! Calls of linked external C functions (see [`eqm_ir::external`]): from Rust for the
//! interpreter, and from native code (`translate::calls`) through the same address.
//!
//! Input: a [`LinkedSymbol`], the address of a wrapper `double wrapper(double* arguments)`
//! that reads `arity` doubles, and the arguments. Output: the wrapper's result. It deliberately
//! does not check what the C code computes: a result is whatever the C function returns, and
//! both back ends call the same code with the same doubles, so they agree bit for bit.

use eqm_ir::external::LinkedSymbol;

/// The C signature of every wrapper.
type Wrapper = unsafe extern "C" fn(*mut f64) -> f64;

/// Calls `symbol` with `args`; `None` when `args` is not as long as the wrapper reads.
pub fn call_external(symbol: &LinkedSymbol, args: &[f64]) -> Option<f64> {
    if args.len() != symbol.arity() || symbol.address() == 0 {
        return None;
    }
    // The wrapper may take its argument as a non-const pointer (a C function may write into an
    // array argument it does not own), so it gets a copy.
    let mut copy = args.to_vec();
    copy.push(0.0);
    // SAFETY: a `LinkedSymbol` is made by a linker from a loaded shared object that it keeps
    // loaded while the symbol lives, at the address of a wrapper compiled from the text the
    // flattener wrote with exactly the signature `double(double*)`; the wrapper reads `arity`
    // doubles from the pointer, and `copy` holds `arity + 1` of them.
    let wrapper = unsafe { std::mem::transmute::<usize, Wrapper>(symbol.address()) };
    // SAFETY: see above; the pointer is valid for `arity` reads and writes during the call.
    Some(unsafe { wrapper(copy.as_mut_ptr()) })
}

/// The message of the `ModelicaError` (or `ModelicaFormatError`) that made the last call of
/// `symbol` on this thread return NaN, if the C code called one; `None` when the unit has no
/// error reader or the last call ended normally.
pub fn external_error(symbol: &LinkedSymbol) -> Option<String> {
    if symbol.error_address() == 0 {
        return None;
    }
    // SAFETY: the linker took this address from the same loaded unit as the wrapper, whose
    // library `symbol` keeps loaded: the flattener's `const char* eqm_external_error(void)`,
    // which returns a pointer to that unit's thread-local, NUL-terminated message buffer.
    let reader = unsafe {
        std::mem::transmute::<usize, unsafe extern "C" fn() -> *const std::ffi::c_char>(symbol.error_address())
    };
    // SAFETY: see above; the buffer lives as long as the thread and is NUL-terminated.
    let text = unsafe { std::ffi::CStr::from_ptr(reader()) };
    let text = text.to_string_lossy();
    (!text.is_empty()).then(|| text.trim_end().to_string())
}
