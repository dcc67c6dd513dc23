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
//! repetition only. Consecutive runs become one loop over their stages when the order of reads
//! and writes allows it, and a loop addresses every array from the repetition counter (`base +
//! 8r + offset`, folded into each load and store), so it carries no pointer of its own. A sum
//! with a negated operand, the simplifier's form of every difference, is one subtraction.
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
//! External C functions (`Callee::External`) are called at the address of their linked wrapper
//! with their arguments in a stack slot; [`call_external`] is the same call for the
//! interpreter.
//!
//! The crate root holds the entry point [`compile`]; the types of its interface are `interface`
//! and the status block compiled code reports through `status`; building
//! segment functions is `segment`, translating expressions `translate` (slots and leaves,
//! status checks and calls in its submodules), statements and user functions `function`,
//! finding loops `reroll`, what all functions of a compilation share `shared`, the host
//! functions `host`, and running compiled code [`CompiledModule`] (`compiled`).

#![allow(unsafe_code)]

mod compiled;
mod external;
mod function;
mod host;
mod interface;
mod reroll;
mod segment;
mod shared;
mod status;
mod translate;

pub use compiled::CompiledModule;
pub use external::{call_external, external_error};
pub use interface::{JitError, JitOptions, OptLevel, Segment};
pub use translate::SliceLengths;

use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use eqm_ir::expr::{ExprArena, VarId};
use eqm_ir::external::ExternalFunction;
use eqm_ir::flat;
use eqm_ir::slot::Slot;
use shared::Shared;

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

/// Compiles `segments` (and the user functions they call) into native code; a call of external
/// function `k` calls the address of `externals[k]`.
pub fn compile(
    arena: &ExprArena,
    functions: &[flat::Function],
    externals: &[ExternalFunction],
    slot_of: &dyn Fn(VarId) -> Option<Slot>,
    segments: &[Segment],
    options: &JitOptions,
) -> Result<CompiledModule, JitError> {
    let mut sh = Shared::new(new_module(options)?, arena, functions, externals);
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
