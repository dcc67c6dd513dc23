//! Running an executable program: the reference interpreter, the equation solvers, native code
//! through the JIT, and simulation with events and constraint projection.
//!
//! Input: an [`eqm_compile::exec::ExecProgram`] (and the one of its initialization problem) and
//! [`simulate::RunOptions`]. Output: result rows handed to a sink, and a summary; or a failure
//! naming the time, the equations and the variables. Nothing here compiles a model or does IO.
//!
//! The modules, from the evaluation of one program up to a whole run:
//! - `interp`: the reference interpreter and its equation solvers (Newton, algebraic loops).
//! - `native`: the native code of a program's instructions, compiled by the JIT.
//! - `instance`: a program bound to its parameters and work array, with the native code and the
//!   `delay` histories attached.
//! - `delay`: the histories behind `delay(expr, d)`.
//! - `projection`: the corrected field that keeps a model's invariants.
//! - `ode`: the one adapter between an instance and the integrators.
//! - `hybrid`: integration with state events, when-clauses, assertions and sliding mode.
//! - `run` (private, re-exported by `simulate`): the vocabulary of a run: options, summary,
//!   errors.
//! - `initial`: consistent initial values.
//! - `failure` (private): what a failed or unreliable run reports.
//! - `simulate`: the driver of a run, with the choice of result columns, the Jacobian a run
//!   needs, the state-choice check and the row writer.

pub mod delay;
mod failure;
pub mod hybrid;
pub mod initial;
pub mod instance;
pub mod interp;
pub mod native;
pub mod ode;
pub mod projection;
mod run;
pub mod simulate;
pub mod spatial;
