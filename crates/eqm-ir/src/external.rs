//! External C functions: what the flattener asks a front end to compile and link, and what a
//! back end calls.
//!
//! Input: nothing here computes; these are the types between the flattener, which writes an
//! [`ExternalUnit`] for each external function a model calls (the C text of the function's
//! `Include` annotation and a generated wrapper, the directories and libraries to link with),
//! the front end, which implements [`LinkExternal`] (it runs the system C compiler and loads the
//! shared object it makes), and the back ends, which call the [`LinkedSymbol`] it returns.
//! Output: the linked functions of a flat model (`FlatModel::externals`), entry `k` for
//! `Callee::External(k)`.
//!
//! Every wrapper has one C signature, `double wrapper(const double* arguments)`: the flattener
//! writes the conversions the Modelica declaration asks for (Modelica: Real to `double`,
//! Integer and Boolean to `int`, an array to a pointer to its elements) into the wrapper, so a
//! back end passes every argument as a `double` in one array and reads one `double` back (for a
//! function with several outputs, the last argument is the index of the output element wanted,
//! one call per element). The
//! interpreter and the native code call the same wrapper with the same doubles, so they agree
//! bit for bit.
//!
//! An external object (Modelica's `ExternalObject`) is a C pointer carried in a double: its
//! 64 bits are the pointer's bits, converted by the wrappers (`memcpy`, never arithmetic), so
//! both back ends pass it unchanged and the flattener forbids every use of it as a number.
//! What this module deliberately does not do: run a compiler, touch a file or call
//! the symbol (the call is `eqm_jit::call_external`, the one place with the `unsafe` it takes).

use std::any::Any;
use std::sync::Arc;

/// One external function to compile and link: a C translation unit that defines the wrapper
/// `symbol`, and what the C compiler needs to build it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ExternalUnit {
    /// The Modelica function's qualified name, for messages.
    pub function: String,
    /// The name of the C function the external clause calls, for messages.
    pub c_function: String,
    /// The wrapper's symbol, defined by `source`.
    pub symbol: String,
    /// The whole C text: the function's `Include` annotation, then the wrapper.
    pub source: String,
    /// How many doubles the wrapper reads from its argument array.
    pub arity: usize,
    /// Directories searched for `#include` files (`IncludeDirectory`, resolved to paths).
    pub include_directories: Vec<String>,
    /// Libraries linked with (`Library`, each `-l` name).
    pub libraries: Vec<String>,
    /// Directories searched for the libraries (`LibraryDirectory`, resolved to paths).
    pub library_directories: Vec<String>,
}

/// Why an external function cannot be provided; the message names the cause (no compiler,
/// the compiler's own message, a library not found, a symbol missing after linking).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkError {
    pub message: String,
}

/// How a front end provides external C functions: it compiles the unit's source with its
/// libraries into a shared object, loads it and returns the wrapper's address. A front end
/// without a C compiler gives none, and a model calling an external function is then rejected
/// with the reason.
pub trait LinkExternal: Send + Sync {
    fn link(&self, unit: &ExternalUnit) -> Result<LinkedSymbol, LinkError>;
}

impl std::fmt::Debug for dyn LinkExternal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkExternal")
    }
}

/// The address of a loaded wrapper `double wrapper(const double* arguments)` that reads
/// `arity` doubles, and the loaded library that keeps the address valid as long as any copy of
/// this value lives.
#[derive(Clone)]
pub struct LinkedSymbol {
    address: usize,
    arity: usize,
    /// The address of the unit's `const char* eqm_external_error(void)`, which gives the
    /// message of the `ModelicaError` that stopped the wrapper's last call on this thread
    /// (0 when the unit has none).
    error: usize,
    _library: Arc<dyn Any + Send + Sync>,
}

impl LinkedSymbol {
    /// A wrapper at `address` of the library `library` (which must stay loaded while it lives),
    /// which reads `arity` doubles and returns one. The [`LinkExternal`] that creates it
    /// vouches for the address: it loaded the wrapper it compiled from the unit's text, which
    /// has exactly that signature.
    pub fn new(address: usize, arity: usize, library: Arc<dyn Any + Send + Sync>) -> LinkedSymbol {
        LinkedSymbol {
            address,
            arity,
            error: 0,
            _library: library,
        }
    }

    /// This symbol with the address of its unit's error reader `const char*
    /// eqm_external_error(void)` (see [`LinkedSymbol::error_address`]).
    pub fn with_error_reader(mut self, address: usize) -> LinkedSymbol {
        self.error = address;
        self
    }

    /// The address of the unit's error reader, 0 when it has none: after a call that returned
    /// NaN because the C code called `ModelicaError`, it gives that error's message.
    pub fn error_address(&self) -> usize {
        self.error
    }

    pub fn address(&self) -> usize {
        self.address
    }

    pub fn arity(&self) -> usize {
        self.arity
    }
}

impl std::fmt::Debug for LinkedSymbol {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LinkedSymbol({} argument(s))", self.arity)
    }
}

/// An external function of a flat model, linked: `Callee::External(k)` calls entry `k` of
/// `FlatModel::externals` with `arity` arguments.
#[derive(Debug, Clone)]
pub struct ExternalFunction {
    /// The Modelica function's qualified name.
    pub name: String,
    /// The C function its external clause calls.
    pub c_function: String,
    pub symbol: LinkedSymbol,
    /// For the constructor of an external object (a class extending `ExternalObject`): its
    /// destructor's wrapper, which takes the object's handle. A constructor's call creates an
    /// object the run owns: the interpreter's object store calls it once per object and this
    /// destructor once at the end of the run (native code does not call constructors).
    pub destructor: Option<LinkedSymbol>,
}
