//! Fixed start values of dummy states: variables the model differentiates that index reduction
//! made algebraic (the `demoted` of the static state choice), because a constraint ties them to
//! the states kept. Two coupled components that both give their state `fixed = true` (an
//! inverse model's capacitor beside the direct model's) fix the same degree of freedom twice;
//! mature Modelica tools then drop the fixed start values of the dummy states, with a warning,
//! instead of refusing the initial system. EQM does the same, and checks each dropped value
//! once the initialization has found the values, so a start value the other equations
//! contradict still stops the run (E0705) rather than being ignored silently.
//!
//! Input: the model's DAE (its state choice) and the initial system with its start equations.
//! Output: which start equations are such values; for each one the initial system could not
//! take, an assertion of the initial system and the warning (W0505) naming them. It does not
//! match anything (the parent module offers these equations after the other given ones and
//! before the assumed start values) and drops no initial equation the user wrote.

use super::start_text;
use crate::dae::{Dae, Origin};
use crate::events::Hybrid;
use eqm_diag::Diagnostic;
use eqm_ir::builtins::Builtin;
use eqm_ir::expr::{BinOp, VarId};

/// Relative tolerance of the check of a dropped start value: the initialization solves to a
/// tolerance, so the value the other equations give is equal to it only within one.
const CHECK_TOLERANCE: f64 = 1e-6;

/// The equations among `init.equations[range]` that are the fixed start value of a dummy state
/// of `dae`.
pub(super) fn dummy_fixed_starts(dae: &Dae<Hybrid>, init: &Dae<Hybrid>, range: std::ops::Range<usize>) -> Vec<bool> {
    let mut demoted = vec![false; dae.kinds.len()];
    for v in dae.stage.state_choice.iter().flat_map(|c| &c.demoted) {
        if let Some(d) = demoted.get_mut(v.0 as usize) {
            *d = true;
        }
    }
    (0..init.equations.len())
        .map(|e| {
            range.contains(&e)
                && matches!(init.equations[e].origin, Origin::FixedStart { var } if demoted.get(var.0 as usize) == Some(&true))
        })
        .collect()
}

/// Drops the fixed start values of the dummy states in `dropped` (equation numbers of
/// `init`): each becomes an assertion checked after the initialization, `|v - start| <=
/// 1e-6·(1 + |start|)`. Returns the warning naming them.
pub(super) fn dropped_starts(init: &mut Dae<Hybrid>, dropped: &[usize]) -> Option<Diagnostic> {
    let first = *dropped.first()?;
    let mut texts = Vec::new();
    for &e in dropped {
        let equation = init.equations[e].clone();
        let Origin::FixedStart { var } = equation.origin else {
            continue;
        };
        let text = start_text(init, var);
        push_check(init, var, &equation, &text);
        texts.push(text);
    }
    let span = init.equations[first].span;
    let shown = texts.iter().take(20).cloned().collect::<Vec<_>>().join(", ");
    let more = texts.len().saturating_sub(20);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(
        Diagnostic::warning(
            "W0505",
            format!(
                "the fixed start values of states that index reduction made dummy states are dropped: the other equations of the initial system determine them ({shown}{more}); each is checked after the initialization"
            ),
            span,
            "fixed start value of a dummy state",
        )
        .with_help("remove `fixed = true` from these start values: a constraint ties each of these variables to the states kept"),
    )
}

/// The assertion of the initial system that the start equation `equation` of `var` holds
/// within the tolerance once the values are found.
fn push_check(init: &mut Dae<Hybrid>, var: VarId, equation: &crate::dae::Equation, text: &str) {
    let exprs = &mut init.flat.exprs;
    let difference = exprs.binary(BinOp::Sub, equation.lhs, equation.rhs);
    let distance = exprs.builtin(Builtin::Abs, vec![difference]);
    let size = exprs.builtin(Builtin::Abs, vec![equation.rhs]);
    let one = exprs.real(1.0);
    let scale = exprs.binary(BinOp::Add, one, size);
    let tolerance = exprs.real(CHECK_TOLERANCE);
    let bound = exprs.binary(BinOp::Mul, tolerance, scale);
    let condition = exprs.binary(BinOp::Le, distance, bound);
    let instance = init.flat.var(var).instance;
    let message = format!(
        "the fixed start value `{text}` of a dummy state, dropped from the initial system, does not hold after the initialization"
    );
    super::discrete::push_initial_check(init, condition, message, instance, equation.span);
}
