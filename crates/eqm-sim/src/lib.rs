//! Running an executable program: the reference interpreter, the equation solvers, native code
//! through the JIT, and simulation with events and constraint projection.
//!
//! Input: an [`eqm_compile::exec::ExecProgram`] (and the one of its initialization problem) and
//! [`simulate::RunOptions`]. Output: result rows handed to a sink, and a summary; or a failure
//! naming the time, the equations and the variables. Nothing here compiles a model or does IO.

pub mod delay;
mod failure;
pub mod hybrid;
pub mod initial;
pub mod instance;
pub mod interp;
pub mod native;
pub mod ode;
pub mod projection;
pub mod simulate;
