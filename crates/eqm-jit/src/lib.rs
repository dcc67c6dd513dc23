//! Native code for expression assignments, algorithm statements and solver kernels, through
//! Cranelift.
//!
//! Input: an expression arena, the model's user functions, a map from variables to their
//! run-time [`Slot`]s, and [`Segment`]s: ordered lists of assignments `slot := expression`,
//! optionally followed by the statements of an algorithm section and by result expressions.
//! Output: a [`CompiledModule`] holding one or more native functions per segment, each of the
//! shape `extern "C" fn(t: f64, x: *const f64, p: *const f64, dx: *mut f64, work: *mut f64,
//! out: *mut f64, status: *mut u64)` (see [`eqm_ir::slot`]), and a safe [`CompiledModule::run`]
//! that checks the slice lengths before running them. Results (residuals, partial derivatives)
//! go to `out`; failures (a failed `assert`, `terminate`, a zero `for` step, the iteration and
//! recursion limits) are reported through `status` and come back as [`JitError::Failed`] with
//! the same [`FailureKind`] the interpreter reports.
//!
//! The compiled code computes exactly what the reference evaluator
//! ([`eqm_ir::symbolic::eval::evaluate_in`]) and the interpreter compute, bit for bit: arithmetic
//! is the same IEEE operations, and every other function is a host function (`eqm_sin`,
//! `eqm_pow`, ...) that calls the evaluator's own Rust function. Booleans are 0.0 and 1.0, and
//! any non-zero value (NaN included) is true. `if` expressions are real branches, so the branch
//! not taken is not evaluated (a division by zero there does not matter, and a costly branch
//! costs nothing).
//!
//! Per function, each state, parameter or work slot is loaded from memory once; a value
//! written earlier in the same function is reused from its register, and shared
//! subexpressions are computed once. Algorithm statements are the exception: they read and
//! write memory at every use, because their loops and branches can change a slot at any time.
//! Long segments are split into functions of about a thousand assignments (or ten thousand
//! Cranelift instructions), the size at which Cranelift compiled fastest per equation when this
//! was measured on large generated models; the safe wrapper calls them in order.
//! Runs of assignments that repeat with a fixed stride in every slot (the stages of an array
//! of components) are emitted as loops whose body is one repetition (`reroll`), so code size
//! does not grow with the number of stages; within a loop, slots are kept in registers for one
//! repetition only.
//!
//! User functions (`Callee::User`) become native functions `fn(inputs: *const f64, outputs:
//! *mut f64, status: *mut u64)` compiled from their statements (see `function`); a call site
//! passes its arguments and receives its outputs through a stack slot, and `CallOutput` reads
//! further outputs from it. The iteration budget and the call depth live in the status block
//! and follow the rules of the simulator's interpreter: the budget is reset at the start
//! of every expression that calls a user function (of every statement list for algorithms),
//! which then computes its calls itself rather than reusing those of earlier expressions, every
//! call and every backward jump of a loop spends one unit, and calls nest at most
//! [`eqm_ir::failure::MAX_CALL_DEPTH`] deep.
//!
//! What it deliberately does not do: decide which variable lives in which slot or order the
//! assignments (the executable program does), iterate implicit blocks (the simulator's solvers do,
//! calling the residuals and partial derivatives compiled here), or handle events. Event operators
//! (`edge`, `change`, `initial`, `sample`, `reinit`, ...) are a [`JitError`] for now, so the
//! instructions that use them stay with the interpreter; `pre(x)` reads the current value of `x`,
//! and `noEvent`/`smooth` are the identity. `der(x)` of a state `x[i]` reads `dx[i]`. It does not
//! compile segments in parallel yet.
//!
//! The crate root holds the entry point [`compile`] and the types of its interface; building
//! segment functions is `segment`, translating expressions `translate` (slots and leaves,
//! status checks and calls in its submodules), statements and user functions `function`,
//! finding loops `reroll`, what all functions of a compilation share `shared`, the host
//! functions `host`, and running compiled code [`CompiledModule`] (`compiled`).

#![allow(unsafe_code)]

mod compiled;
mod function;
mod host;
mod reroll;
mod segment;
mod shared;
mod translate;

pub use compiled::CompiledModule;
pub use translate::SliceLengths;

use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::ModuleError;
use eqm_ir::expr::{ExprArena, ExprId, FuncId, VarId};
use eqm_ir::failure::FailureKind;
use eqm_ir::flat::{self, Statement};
use eqm_ir::slot::Slot;
use shared::Shared;

/// Code run in one call: each assignment's expression is evaluated and stored into its slot, in
/// order; then the statements run (an algorithm section: they may assign slots); then each
/// result expression is evaluated into `out[k]`. An expression may read slots written earlier
/// in the same segment.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    pub assignments: Vec<(Slot, ExprId)>,
    pub statements: Vec<Statement>,
    pub results: Vec<ExprId>,
}

impl Segment {
    /// A segment of assignments only.
    pub fn assignments(assignments: Vec<(Slot, ExprId)>) -> Segment {
        Segment {
            assignments,
            ..Segment::default()
        }
    }
}

/// The status block compiled code reports through: byte offsets of its `u64` fields.
pub(crate) mod status {
    /// 0 while nothing failed; else one of the codes below.
    pub const CODE: i32 = 0;
    /// With [`TABLE`]: the index of the failure in the module's table of statements.
    pub const PAYLOAD: i32 = 8;
    /// The root (assignment, statement list or result) of the segment that failed, counted
    /// from 0 in the order the segment runs them.
    pub const SITE: i32 = 16;
    /// The iteration budget left in the current root.
    pub const BUDGET: i32 = 24;
    /// The budget every root starts with.
    pub const LIMIT: i32 = 32;
    /// User-function frames active now.
    pub const DEPTH: i32 = 40;
    /// The number of fields.
    pub const FIELDS: usize = 6;
    /// A statement of the table failed (assert, terminate, zero step).
    pub const TABLE: i64 = 1;
    pub const ITERATION_LIMIT: i64 = 2;
    pub const RECURSION_LIMIT: i64 = 3;
}

/// How much Cranelift optimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptLevel {
    /// No optimisation passes: the fastest compilation. Measurements showed no run-time gain
    /// from `Speed` on generated model code once loads are de-duplicated, which this module does.
    None,
    /// Cranelift's `speed` level (e-graph optimisations), about 25% more compile time.
    Speed,
}

#[derive(Debug, Clone, Copy)]
pub struct JitOptions {
    pub opt_level: OptLevel,
    /// Run Cranelift's IR verifier on every function (about +80% compile time): on in debug
    /// builds, off in release builds.
    pub verify: bool,
    /// A segment function ends after this many assignments ...
    pub max_assignments_per_function: usize,
    /// ... or once it holds this many Cranelift instructions, whichever comes first (a
    /// function always holds at least one assignment). `usize::MAX` for both never splits.
    /// A re-rolled loop counts as the assignments of its body.
    pub max_instructions_per_function: usize,
    /// Emit runs of assignments that repeat with a fixed stride as loops (`reroll`); the
    /// results are bit for bit those of straight-line code.
    pub reroll: bool,
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            opt_level: OptLevel::None,
            verify: cfg!(debug_assertions),
            max_assignments_per_function: 1000,
            max_instructions_per_function: 10_000,
            reroll: true,
        }
    }
}

/// Why compiling or calling failed.
#[derive(Debug, Clone, PartialEq)]
pub enum JitError {
    /// A variable the expressions read has no slot.
    NoSlot(VarId),
    /// An assignment to a slot that compiled code may not write (time, a state, a parameter).
    ReadOnlyTarget(Slot),
    /// A slot index too large for a 32-bit byte offset.
    SlotOutOfRange(Slot),
    /// An expression (or statement) the JIT does not translate.
    Unsupported {
        node: Option<ExprId>,
        what: String,
    },
    UnknownFunction(FuncId),
    /// An error inside the body of a user function.
    InFunction {
        name: String,
        error: Box<JitError>,
    },
    /// Cranelift rejected the code (a verifier error is a bug in this module).
    Codegen(String),
    /// The host machine is not supported by Cranelift.
    Host(String),
    NoSuchSegment(usize),
    /// The compiled code failed in root `site` of the segment, counting from 0 each assignment,
    /// the statements (one root together) and each result, in the order they run.
    Failed {
        site: usize,
        kind: FailureKind,
    },
    /// A slice given to [`CompiledModule::call`] is shorter than the segment needs.
    SliceTooShort {
        segment: usize,
        slice: &'static str,
        needed: usize,
        got: usize,
    },
}

impl JitError {
    fn codegen(e: ModuleError) -> JitError {
        JitError::Codegen(e.to_string())
    }
}

impl std::fmt::Display for JitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JitError::NoSlot(v) => write!(f, "variable #{} has no slot in the evaluation arrays", v.0),
            JitError::ReadOnlyTarget(s) => write!(f, "cannot assign {s:?}: compiled code only writes dx and work"),
            JitError::SlotOutOfRange(s) => write!(f, "{s:?} is beyond the largest index the JIT addresses"),
            JitError::Unsupported { node: Some(n), what } => write!(f, "expression #{}: {what}", n.0),
            JitError::Unsupported { node: None, what } => f.write_str(what),
            JitError::UnknownFunction(id) => write!(f, "no user function #{}", id.0),
            JitError::InFunction { name, error } => write!(f, "in function `{name}`: {error}"),
            JitError::Codegen(m) => write!(f, "code generation failed: {m}"),
            JitError::Host(m) => write!(f, "this machine is not supported by the JIT: {m}"),
            JitError::NoSuchSegment(s) => write!(f, "no segment {s}"),
            JitError::Failed { site, kind } => write!(f, "the compiled code failed in root {site}: {kind:?}"),
            JitError::SliceTooShort {
                segment,
                slice,
                needed,
                got,
            } => write!(
                f,
                "segment {segment} needs `{slice}` of length {needed} or more, got {got}"
            ),
        }
    }
}

impl std::error::Error for JitError {}

fn new_module(options: &JitOptions) -> Result<JITModule, JitError> {
    let mut flags = settings::builder();
    let level = match options.opt_level {
        OptLevel::None => "none",
        OptLevel::Speed => "speed",
    };
    let verify = if options.verify { "true" } else { "false" };
    // `is_pic` and `use_colocated_libcalls` must be false for cranelift-jit (what
    // `JITBuilder::with_flags` sets, which would panic on an unsupported host instead of
    // returning an error).
    for (name, value) in [
        ("opt_level", level),
        ("enable_verifier", verify),
        ("is_pic", "false"),
        ("use_colocated_libcalls", "false"),
    ] {
        flags
            .set(name, value)
            .map_err(|e| JitError::Codegen(format!("setting {name}: {e}")))?;
    }
    let isa = cranelift_native::builder()
        .map_err(|m| JitError::Host(m.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Host(e.to_string()))?;
    let mut builder = JITBuilder::with_isa(isa, cranelift_module::default_libcall_names());
    // Every host function is registered under its own name, so that no symbol is left to the
    // JIT's fallback lookup in the process (which panics when it fails).
    for f in host::all() {
        builder.symbol(f.symbol, f.address);
    }
    Ok(JITModule::new(builder))
}

/// Compiles `segments` (and the user functions they call) into native code.
pub fn compile(
    arena: &ExprArena,
    functions: &[flat::Function],
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    segments: &[Segment],
    options: &JitOptions,
) -> Result<CompiledModule, JitError> {
    let mut sh = Shared::new(new_module(options)?, arena, functions);
    let result = segment::build(&mut sh, slot_of, segments, options);
    let Shared { mut module, faults, .. } = sh;
    let ids = match result.and_then(|ids| module.finalize_definitions().map_err(JitError::codegen).map(|()| ids)) {
        Ok(ids) => ids,
        Err(e) => {
            // SAFETY: no pointer into the module's code was taken yet.
            unsafe { module.free_memory() };
            return Err(e);
        }
    };
    Ok(CompiledModule::finalized(module, ids, segments, faults))
}
