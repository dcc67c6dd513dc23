//! The values the parameters of a compiled model have at translation, for the coefficients
//! that are zero by the parameters' values (`eqm_compile::zero_coefficients`).
//!
//! Input: an executable program compiled from a flat model. Output: per variable of that flat
//! model, its value after the parameter program ran with the default parameters, or `None`
//! when the program gives it no slot or could not compute it. The parameter conditions of the
//! program (divisors that must not be zero) are not required to hold: a coefficient that is
//! zero is exactly what this is asked for. It decides nothing about the structure itself.

use eqm_compile::exec::ExecProgram;
use eqm_ir::expr::VarId;
use eqm_ir::failure::FailureSite;
use eqm_ir::slot::Slot;

/// The values of the first `count` variables after the parameter program ran with the
/// program's default parameters; `None` for all of them when an assignment of the parameter
/// program failed (then some values were not computed, and guessing them could drop an
/// unknown that does occur).
pub(crate) fn parameter_values(program: &ExecProgram, count: usize) -> Option<Vec<Option<f64>>> {
    let mut interpreter = eqm_sim::interp::Interpreter::new(program).ok()?;
    let p = program.p0().to_vec();
    let mut work = vec![0.0; program.layout().work];
    match interpreter.parameters(&p, &mut work) {
        // The conditions run after every assignment: the values are all there.
        Ok(()) => {}
        Err(failure) if matches!(failure.site, FailureSite::Condition { .. }) => {}
        Err(_) => return None,
    }
    let value = |v: VarId| match program.slot_of(v)? {
        Slot::Param(i) => p.get(i as usize).copied(),
        Slot::Work(i) => work.get(i as usize).copied(),
        _ => None,
    };
    Some((0..count as u32).map(|v| value(VarId(v))).collect())
}
